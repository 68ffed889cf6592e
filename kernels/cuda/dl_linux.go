//go:build linux && (amd64 || arm64)

// Opening the driver and cuBLAS with purego (dlopen, no cgo) and calling
// into them.

package cuda

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
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
	cu := libcudaNames
	if p := os.Getenv("TOY_CUDA_DRIVER"); p != "" {
		cu = []string{p}
	}
	blas, required := cublasCandidates(), false
	switch p := os.Getenv("TOY_CUBLAS"); p {
	case "":
	case "none", "off", "0":
		l, err := openLibsFrom(cu, nil, false)
		if err == nil {
			l.noBlas = "not used (TOY_CUBLAS=" + p + ")"
		}
		return l, err
	default:
		blas, required = []string{p}, true
	}
	return openLibsFrom(cu, blas, required)
}

// cublasCandidates lists where cuBLAS may be: the sonames the dynamic
// loader finds, then the copies that the CUDA toolkit, PyTorch's pip
// wheels (nvidia-cublas-cu12 in nvidia/cublas/lib, CUDA 13's nvidia-cublas
// in nvidia/cu13/lib), conda and Ollama install outside its path.
func cublasCandidates() []string {
	names := slices.Clone(libcublasNames)
	var dirs []string
	for _, env := range []string{"CUDA_HOME", "CUDA_PATH"} {
		if d := os.Getenv(env); d != "" {
			dirs = append(dirs, filepath.Join(d, "lib64"), filepath.Join(d, "lib"))
		}
	}
	if d := os.Getenv("CONDA_PREFIX"); d != "" {
		dirs = append(dirs, filepath.Join(d, "lib"))
	}
	dirs = append(dirs, "/usr/local/cuda/lib64")
	patterns := []string{"/usr/local/cuda-*/lib64",
		"/usr/lib/ollama/cuda_v1[1-9]", "/usr/local/lib/ollama/cuda_v1[1-9]", "/usr/lib/ollama", "/usr/local/lib/ollama"}
	sitePackages := []string{"/usr/lib/python3*/*-packages", "/usr/local/lib/python3*/*-packages"}
	if h, err := os.UserHomeDir(); err == nil {
		sitePackages = append(sitePackages, filepath.Join(h, ".local/lib/python3*/site-packages"))
	}
	if d := os.Getenv("VIRTUAL_ENV"); d != "" {
		sitePackages = append(sitePackages, filepath.Join(d, "lib/python3*/site-packages"))
	}
	for _, sp := range sitePackages {
		patterns = append(patterns, filepath.Join(sp, "nvidia/cu1[3-9]/lib"), filepath.Join(sp, "nvidia/cublas/lib"))
	}
	for _, p := range patterns {
		m, _ := filepath.Glob(p)
		slices.Sort(m)
		slices.Reverse(m) // cuda-12.4 before cuda-11.8, python3.12 before 3.11
		dirs = append(dirs, m...)
	}
	for _, d := range dirs {
		for _, n := range libcublasNames[:versionedCublas] {
			if p := filepath.Join(d, n); fileExists(p) && !slices.Contains(names, p) {
				names = append(names, p)
			}
		}
	}
	return names
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir()
}

// dlopenCublas opens the first of names that loads. A library given by path
// first gets the libcublasLt beside it loaded, which it links against and
// which is not on the loader's path either (the loader then reuses the
// loaded one by its soname).
func dlopenCublas(names []string) (uintptr, string, error) {
	if len(names) == 0 {
		return 0, "", errors.New("no cuBLAS as new as the driver")
	}
	var errs []error
	for _, n := range names {
		if strings.Contains(n, "/") {
			if v := cublasMajor(n); v > 0 {
				lt := filepath.Join(filepath.Dir(n), fmt.Sprintf("libcublasLt.so.%d", v))
				purego.Dlopen(lt, purego.RTLD_NOW|purego.RTLD_GLOBAL) // on failure, cuBLAS's own error says more
			}
		}
		h, err := purego.Dlopen(n, purego.RTLD_NOW|purego.RTLD_GLOBAL)
		if err == nil {
			return h, n, nil
		}
		errs = append(errs, err)
	}
	return 0, "", errors.Join(errs...)
}

// openLibsFrom opens the first driver library of cuNames that loads and the
// first cuBLAS of blasNames, and resolves toy's symbols in them. cuBLAS is
// optional unless required: without it (no names, none loads, or one that
// lacks a function toy calls) the backend multiplies with its own kernels,
// and l.noBlas says why.
func openLibsFrom(cuNames, blasNames []string, required bool) (*libs, error) {
	l := &libs{blasRequired: required}
	h, name, err := dlopenFirst(cuNames)
	if err != nil {
		return nil, loadError("the NVIDIA driver library libcuda.so.1",
			"install the NVIDIA driver for your GPU (no CUDA toolkit needed), or run on the CPU with --device cpu / TOY_BACKEND=native", err)
	}
	l.cuPath = name
	if err := resolve(h, l.cu.symbols()); err != nil {
		return nil, loadError("a CUDA driver API this old driver lacks ("+name+")", "update the NVIDIA driver (toy needs CUDA 11.8 or later)", err)
	}
	if len(blasNames) == 0 {
		l.noBlas = "not used"
		return l, nil
	}
	if !required {
		blasNames = forDriver(l, blasNames)
	}
	hb, bname, err := dlopenCublas(blasNames)
	if err == nil {
		err = resolve(hb, l.blas.symbols())
	}
	switch {
	case err == nil:
		l.blasLib = bname
	case required:
		return nil, loadError("cuBLAS at "+blasNames[0]+" (named by TOY_CUBLAS)",
			"point TOY_CUBLAS at libcublas.so.13, .12 or .11 (as new as the driver), or unset it (toy then finds cuBLAS, or uses its own GEMM kernels)", err)
	default:
		l.noBlas = "not found (libcublas.so.13, .12 or .11 as new as the driver allows, e.g. pip install nvidia-cublas for CUDA 13, nvidia-cublas-cu12 for 12)"
	}
	return l, nil
}

// cublasMajor is the CUDA major version in a cuBLAS library's name
// (libcublas.so.13 → 13), 0 when the name has none.
func cublasMajor(name string) int {
	_, v, ok := strings.Cut(filepath.Base(name), ".so.")
	if !ok {
		return 0
	}
	v, _, _ = strings.Cut(v, ".")
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0
	}
	return n
}

// forDriver drops the cuBLAS libraries newer than the driver supports:
// cuBLAS 13 on a CUDA 12 driver loads but fails at cublasCreate, so a
// machine with both would lose the one that works. An unversioned name, or
// a driver that does not say, keeps every candidate.
func forDriver(l *libs, names []string) []string {
	var ver int32
	if l.call("cuDriverGetVersion", l.cu.driverGetVersion, uintptr(unsafe.Pointer(&ver))) != nil || ver <= 0 {
		return names
	}
	var kept []string
	for _, n := range names {
		if cublasMajor(n) <= int(ver)/1000 {
			kept = append(kept, n)
		}
	}
	return kept
}

// call calls a driver function and turns a non-zero CUresult into an error.
//
// Arguments that are pointers converted to uintptr in the call's argument
// list (the out-parameters, uintptr(unsafe.Pointer(&count))) are moved to
// the heap and kept alive by go:uintptrescapes: otherwise a local could stay
// on the goroutine's stack, which may be copied elsewhere when it grows on
// the way into the driver, and the driver would write to the old copy.
//
//go:uintptrescapes
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

// blasCall calls a cuBLAS function; non-zero is a cublasStatus_t. Pointer
// arguments are treated as call's are.
//
//go:uintptrescapes
func (l *libs) blasCall(name string, fn uintptr, args ...uintptr) error {
	r, _, _ := purego.SyscallN(fn, args...)
	if r != 0 {
		return &blasStatus{call: name, code: int(r)}
	}
	return nil
}
