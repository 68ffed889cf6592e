// Opening the GPU: driver initialisation, the primary context, the PTX
// modules, one stream and the cuBLAS handle.

package cuda

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"sync"
	"unsafe"

	"github.com/toyml/toy/kernels"
)

// Info describes the GPU a Backend runs on.
type Info struct {
	Name          string // "NVIDIA H200"
	Ordinal       int    // device number (TOY_CUDA_DEVICE)
	Major, Minor  int    // compute capability
	SMs           int    // multiprocessors
	TotalMem      int64  // bytes
	DriverVersion int    // CUDA version the driver supports, e.g. 12040 for 12.4
	Cublas        string // the cuBLAS library loaded, e.g. "libcublas.so.12"; "" without
	NoCublas      string // why there is no cuBLAS (products then run on toy's kernels)
}

// GEMM names what multiplies F32 matrices: the cuBLAS library, or toy's
// kernels and why.
func (i Info) GEMM() string {
	if i.Cublas != "" {
		return "cuBLAS " + i.Cublas
	}
	return "toy's GEMM kernels; cuBLAS " + i.NoCublas
}

// DriverString is the driver's CUDA version as "12.4".
func (i Info) DriverString() string {
	return fmt.Sprintf("%d.%d", i.DriverVersion/1000, i.DriverVersion%1000/10)
}

func (i Info) String() string {
	return fmt.Sprintf("%s (compute %d.%d, %d SMs, %.1f GiB), driver CUDA %s, %s",
		i.Name, i.Major, i.Minor, i.SMs, float64(i.TotalMem)/(1<<30), i.DriverString(), i.GEMM())
}

var (
	loadMu  sync.Mutex
	loaded  *Backend
	loadErr error
)

// Load opens the first GPU (or the one TOY_CUDA_DEVICE numbers) and returns
// its backend, the same one on every call. It fails with a
// *kernels.NativeCallError naming what is missing — the driver library,
// a GPU, a driver new enough for the PTX — and what to do.
//
// cuBLAS is used when it is found: on the loader's path, in the CUDA
// toolkit, in PyTorch's pip wheels, conda or Ollama. Without it (a machine
// with only the NVIDIA driver) products run on toy's own kernels, and
// Info().NoCublas says why. TOY_CUBLAS=path insists on one library (an
// error if it does not load), TOY_CUBLAS=none uses toy's kernels.
// TOY_CUDA_TF32=1 lets cuBLAS use TF32 tensor cores for F32 products
// (faster, about 1e-3 relative error); it is off by default.
func Load() (*Backend, error) {
	loadMu.Lock()
	defer loadMu.Unlock()
	if loaded == nil && loadErr == nil {
		loaded, loadErr = open()
	}
	return loaded, loadErr
}

func open() (*Backend, error) {
	l, err := loadLibs()
	if err != nil {
		return nil, err
	}
	return openOn(l)
}

// LoadLibrary opens a backend on the driver library at driver and the
// cuBLAS library at cublas (paths or sonames; "" for none: toy's GEMM
// kernels) instead of the system's, each call a new one, independent of
// Load. It is for tests: with the emulated
// driver that kernels/cuda/emu builds (both libraries in one file), every
// op runs on the CPU through the same launch code and kernel sources as on
// a GPU. Setting TOY_CUDA_DRIVER and TOY_CUBLAS to such paths makes Load
// (and so toy --device cuda) use them too.
func LoadLibrary(driver, cublas string) (*Backend, error) {
	var blas []string
	if cublas != "" {
		blas = []string{cublas}
	}
	l, err := openLibsFrom([]string{driver}, blas, true)
	if err != nil {
		return nil, err
	}
	return openOn(l)
}

// openOn initialises the driver of l and opens the GPU.
func openOn(l *libs) (*Backend, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := l.call("cuInit", l.cu.init, 0); err != nil {
		return nil, loadError("a usable NVIDIA GPU (the driver library "+l.cuPath+" loaded, but cuInit failed)",
			"check that nvidia-smi lists a GPU and that the kernel module is loaded; or use --device cpu", err)
	}
	var count int32
	if err := l.call("cuDeviceGetCount", l.cu.deviceGetCount, uintptr(unsafe.Pointer(&count))); err != nil || count == 0 {
		return nil, loadError("an NVIDIA GPU (the driver reports none)", "check nvidia-smi and CUDA_VISIBLE_DEVICES, or use --device cpu", err)
	}
	ordinal := 0
	if s := os.Getenv("TOY_CUDA_DEVICE"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 || n >= int(count) {
			return nil, loadError(fmt.Sprintf("GPU %q named by TOY_CUDA_DEVICE", s), fmt.Sprintf("choose 0 … %d, or unset it", count-1), err)
		}
		ordinal = n
	}
	b := &Backend{l: l, info: Info{Ordinal: ordinal, Cublas: l.blasLib, NoCublas: l.noBlas}, pool: map[int][]uintptr{}}
	if err := b.init(); err != nil {
		var nce *kernels.NativeCallError
		if errors.As(err, &nce) {
			return nil, err
		}
		return nil, loadError("a working CUDA context on "+b.info.Name, "check nvidia-smi; or use --device cpu", err)
	}
	return b, nil
}

// init fills in the device's description, makes its primary context current,
// loads the PTX and creates the stream and the cuBLAS handle.
func (b *Backend) init() error {
	l := &b.l.cu
	c := b.l.call
	var dev int32
	if err := c("cuDeviceGet", l.deviceGet, uintptr(unsafe.Pointer(&dev)), uintptr(b.info.Ordinal)); err != nil {
		return err
	}
	b.dev = dev
	name := make([]byte, 256)
	if err := c("cuDeviceGetName", l.deviceGetName, uintptr(unsafe.Pointer(&name[0])), 256, uintptr(dev)); err != nil {
		return err
	}
	b.info.Name = cString(&name[0])
	for _, a := range []struct {
		attr int
		dst  *int
	}{{attrComputeCapabilityMajor, &b.info.Major}, {attrComputeCapabilityMinor, &b.info.Minor}, {attrMultiprocessorCount, &b.info.SMs}} {
		var v int32
		if err := c("cuDeviceGetAttribute", l.deviceGetAttribute, uintptr(unsafe.Pointer(&v)), uintptr(a.attr), uintptr(dev)); err != nil {
			return err
		}
		*a.dst = int(v)
	}
	var total uint64
	if err := c("cuDeviceTotalMem", l.deviceTotalMem, uintptr(unsafe.Pointer(&total)), uintptr(dev)); err != nil {
		return err
	}
	b.info.TotalMem = int64(total)
	var ver int32
	if err := c("cuDriverGetVersion", l.driverGetVersion, uintptr(unsafe.Pointer(&ver))); err != nil {
		return err
	}
	b.info.DriverVersion = int(ver)
	if b.info.Major < 7 {
		return loadError(fmt.Sprintf("a GPU of compute capability 7.0 or later (%s is %d.%d)", b.info.Name, b.info.Major, b.info.Minor),
			"toy's PTX targets Volta and newer; use --device cpu", nil)
	}
	if err := c("cuDevicePrimaryCtxRetain", l.primaryCtxRetain, uintptr(unsafe.Pointer(&b.ctx)), uintptr(dev)); err != nil {
		return err
	}
	if err := c("cuCtxSetCurrent", l.ctxSetCurrent, b.ctx); err != nil {
		return err
	}
	if err := b.loadModules(); err != nil {
		return err
	}
	if err := c("cuStreamCreate", l.streamCreate, uintptr(unsafe.Pointer(&b.stream)), 0); err != nil {
		return err
	}
	if b.l.blasLib == "" {
		return nil
	}
	if err := b.openBlas(); err != nil {
		if b.l.blasRequired {
			return loadError("a cuBLAS handle ("+b.l.blasLib+")", "check that the cuBLAS version suits the driver (cuBLAS 12 needs a CUDA 12 driver)", err)
		}
		// A cuBLAS the driver cannot run (say cuBLAS 12 on a CUDA 11
		// driver): toy's kernels do the products.
		b.blas, b.info.Cublas, b.info.NoCublas = 0, "", b.l.blasLib+" found, but "+err.Error()
	}
	return nil
}

// openBlas creates the cuBLAS handle on the backend's stream.
func (b *Backend) openBlas() error {
	bl := &b.l.blas
	if err := b.l.blasCall("cublasCreate", bl.create, uintptr(unsafe.Pointer(&b.blas))); err != nil {
		return err
	}
	if err := b.l.blasCall("cublasSetStream", bl.setStream, b.blas, b.stream); err != nil {
		return err
	}
	mode := uintptr(cublasDefaultMath)
	if os.Getenv("TOY_CUDA_TF32") == "1" {
		mode, b.tf32 = cublasTF32TensorOpMath, true
	}
	return b.l.blasCall("cublasSetMathMode", bl.setMathMode, b.blas, mode)
}

// loadModules JIT-compiles the embedded PTX for this GPU and looks up every
// kernel. A driver too old for the PTX version fails here, with its log.
func (b *Backend) loadModules() error {
	b.fn = map[string]uintptr{}
	for file, names := range kernelNames {
		if b.info.Major < moduleMinMajor[file] {
			continue // the products fall back to the kernels every GPU has
		}
		src, err := ptxFS.ReadFile("ptx/" + file)
		if err != nil {
			return loadError("the PTX module "+file+" in this binary", "rebuild toy", err)
		}
		src = append(src, 0)
		// The driver writes its log into logBuf through vals: pinning it
		// keeps it on the heap, where it cannot move during the call.
		logBuf := make([]byte, 8192)
		var pin runtime.Pinner
		pin.Pin(&logBuf[0])
		// CUjit_option is a C enum: the options are 4-byte ints, the
		// values pointer-sized (a size goes in as the pointer's bits).
		opts := []int32{jitErrorLogBuffer, jitErrorLogBufferSize}
		vals := []uintptr{uintptr(unsafe.Pointer(&logBuf[0])), uintptr(len(logBuf))}
		var mod uintptr
		err = b.l.call("cuModuleLoadDataEx", b.l.cu.moduleLoadDataEx, uintptr(unsafe.Pointer(&mod)), uintptr(unsafe.Pointer(&src[0])),
			uintptr(len(opts)), uintptr(unsafe.Pointer(&opts[0])), uintptr(unsafe.Pointer(&vals[0])))
		runtime.KeepAlive(src)
		pin.Unpin()
		if err != nil {
			if log := cString(&logBuf[0]); log != "" {
				err = fmt.Errorf("%w: %s", err, log)
			}
			return loadError("a driver that can compile toy's PTX ("+file+", built by nvcc "+nvccVersion+")",
				"update the NVIDIA driver", err)
		}
		for _, n := range names {
			cname := append([]byte(n), 0)
			var f uintptr
			if err := b.l.call("cuModuleGetFunction", b.l.cu.moduleGetFunction, uintptr(unsafe.Pointer(&f)), mod, uintptr(unsafe.Pointer(&cname[0]))); err != nil {
				return fmt.Errorf("kernel %s: %w", n, err)
			}
			b.fn[n] = f
		}
	}
	return nil
}
