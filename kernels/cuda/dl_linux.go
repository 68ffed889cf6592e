//go:build linux && (amd64 || arm64)

// Opening the driver and cuBLAS with purego (dlopen, no cgo) and calling
// into them.

package cuda

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"unsafe"

	"github.com/ebitengine/purego"
)

// open dlopens the first of names that loads.
func dlopenFirst(names []string) (uintptr, string, error) {
	var errs []error
	for _, n := range names {
		h, err := purego.Dlopen(n, purego.RTLD_NOW|purego.RTLD_GLOBAL)
		if err == nil {
			return h, n, nil
		}
		errs = append(errs, err)
	}
	return 0, "", errors.Join(errs...)
}

// resolve looks up every symbol of syms in h, and names the missing ones.
func resolve(h uintptr, syms map[string]*uintptr) error {
	var missing []string
	for name, p := range syms {
		addr, err := purego.Dlsym(h, name)
		if err != nil {
			missing = append(missing, name)
			continue
		}
		*p = addr
	}
	if len(missing) > 0 {
		return fmt.Errorf("symbols not found: %s", strings.Join(missing, ", "))
	}
	return nil
}

func openLibs() (*libs, error) {
	cu, blas := libcudaNames, libcublasNames
	if p := os.Getenv("TOY_CUDA_DRIVER"); p != "" {
		cu = []string{p}
	}
	if p := os.Getenv("TOY_CUBLAS"); p != "" {
		blas = []string{p}
	}
	return openLibsFrom(cu, blas)
}

// openLibsFrom opens the first driver library of cuNames that loads and the
// first cuBLAS of blasNames, and resolves toy's symbols in them.
func openLibsFrom(cuNames, blasNames []string) (*libs, error) {
	l := &libs{}
	h, name, err := dlopenFirst(cuNames)
	if err != nil {
		return nil, loadError("the NVIDIA driver library libcuda.so.1",
			"install the NVIDIA driver for your GPU (no CUDA toolkit needed), or run on the CPU with --device cpu / TOY_BACKEND=native", err)
	}
	l.cuPath = name
	if err := resolve(h, l.cu.symbols()); err != nil {
		return nil, loadError("a CUDA driver API this old driver lacks ("+name+")", "update the NVIDIA driver (toy needs CUDA 11.8 or later)", err)
	}
	hb, bname, err := dlopenFirst(blasNames)
	if err != nil {
		return nil, loadError("cuBLAS (libcublas.so.12 or .11)",
			"install the CUDA runtime libraries, e.g. pip install nvidia-cublas-cu12 and add its lib directory to LD_LIBRARY_PATH, or apt install libcublas12", err)
	}
	l.blasLib = bname
	if err := resolve(hb, l.blas.symbols()); err != nil {
		return nil, loadError("the cuBLAS functions toy calls in "+bname, "install cuBLAS 11 or 12", err)
	}
	return l, nil
}

// call calls a driver function and turns a non-zero CUresult into an error.
// Pointer arguments must point into memory kept alive until it returns.
func (l *libs) call(name string, fn uintptr, args ...uintptr) error {
	r, _, _ := purego.SyscallN(fn, args...)
	if r == 0 {
		return nil
	}
	e := &cuResult{call: name, code: int(r)}
	var s *byte
	if q, _, _ := purego.SyscallN(l.cu.getErrorString, r, uintptr(unsafe.Pointer(&s))); q == 0 && s != nil {
		e.name = cString(s)
	}
	return e
}

// blasCall calls a cuBLAS function; non-zero is a cublasStatus_t.
func (l *libs) blasCall(name string, fn uintptr, args ...uintptr) error {
	r, _, _ := purego.SyscallN(fn, args...)
	if r != 0 {
		return &blasStatus{call: name, code: int(r)}
	}
	return nil
}
