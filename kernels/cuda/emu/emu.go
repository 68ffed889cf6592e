// Package emu builds an emulated CUDA device for tests: a shared library
// with the driver API and cuBLAS functions the cuda backend binds, on host
// memory, whose kernels are toy's CUDA sources (kernels/cuda/csrc)
// compiled by g++ with a header that supplies the CUDA dialect (csrc/emu.h).
// Each thread of a block runs as a fiber, so __syncthreads and warp
// shuffles are real barriers; blocks run one after another.
//
// It is test-only, in the spirit of tinygrad's null device but executing
// the real kernel code: with it, a machine without a GPU runs the backend's
// launch code, argument marshalling, kernel indexing and cuBLAS call
// semantics. What it cannot show (timing, races between blocks, the
// driver's PTX JIT, cuBLAS's own numerics) is listed in
// kernels/cuda/README.md.
//
//	lib, err := emu.Build(t.TempDir())
//	b, err := cuda.LoadLibrary(lib, lib)
//
// or, for the toy command: TOY_CUDA_DRIVER=$lib TOY_CUBLAS=$lib toy infer --device cuda ….
package emu

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
)

// ErrNoCompiler is returned by Build when there is no C++ compiler (g++, or
// $CXX) to build the emulator with.
var ErrNoCompiler = errors.New("no g++ (or $CXX) to build the CUDA emulator with")

// ErrUnsupported is returned by Build on platforms the cuda backend cannot
// load a library on.
var ErrUnsupported = errors.New("the CUDA emulator needs linux/amd64 or linux/arm64 (where the cuda backend can load a driver)")

// Name is the file name Build gives the library.
const Name = "libtoycudaemu.so"

// Flags are the compiler flags: no FMA contraction (the kernels round each
// product where they say so, and nvcc's contraction is not emulated), no
// fast math, and only the CUDA API visible.
var Flags = []string{"-std=c++17", "-O2", "-shared", "-fPIC", "-fvisibility=hidden", "-ffp-contract=off", "-fno-fast-math",
	"-Wall", "-Wno-unknown-pragmas"}

// Dir returns the directory of the emulator's C++ sources.
func Dir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "csrc")
}

// kernelDir is kernels/cuda/csrc, the kernels nvcc compiles.
func kernelDir() string { return filepath.Join(Dir(), "..", "..", "csrc") }

// Build compiles the emulator into dir and returns the library's path. It
// takes a few seconds (g++ -O2).
func Build(dir string) (string, error) {
	if runtime.GOOS != "linux" || (runtime.GOARCH != "amd64" && runtime.GOARCH != "arm64") {
		return "", ErrUnsupported
	}
	cxx := os.Getenv("CXX")
	if cxx == "" {
		cxx = "g++"
	}
	if _, err := exec.LookPath(cxx); err != nil {
		return "", fmt.Errorf("%w: %v", ErrNoCompiler, err)
	}
	// Read every source here, not only in g++: go test then sees them as
	// inputs, and a cached result is dropped when one changes.
	for _, d := range []string{Dir(), kernelDir()} {
		ents, err := os.ReadDir(d)
		if err != nil {
			return "", err
		}
		for _, e := range ents {
			if _, err := os.ReadFile(filepath.Join(d, e.Name())); err != nil {
				return "", err
			}
		}
	}
	out := filepath.Join(dir, Name)
	args := append(append([]string(nil), Flags...), "-I", Dir(), "-I", kernelDir(), "-o", out,
		filepath.Join(Dir(), "emu.cc"), filepath.Join(Dir(), "kernels.cc"))
	cmd := exec.Command(cxx, args...)
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building the CUDA emulator (%s %v): %v\n%s", cxx, args, err, b)
	}
	return out, nil
}
