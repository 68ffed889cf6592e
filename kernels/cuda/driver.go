// The CUDA driver API and cuBLAS functions toy calls, resolved at run time
// from libcuda.so.1 (installed with the NVIDIA driver) and, when the machine
// has it, libcublas.so.13, .12 or .11 (the CUDA runtime libraries), and the
// result codes they return.

package cuda

import (
	"fmt"
	"sync"
	"unsafe"
)

// libcudaNames are the driver library's names, tried in order.
var libcudaNames = []string{"libcuda.so.1", "libcuda.so"}

// libcublasNames are the cuBLAS sonames toy can use, newest first; the
// versioned ones come first, and a machine's driver rules out those newer
// than it (cuBLAS 13 needs a CUDA 13 driver).
var libcublasNames = []string{"libcublas.so.13", "libcublas.so.12", "libcublas.so.11", "libcublas.so"}

// versionedCublas is how many of libcublasNames carry a major version.
const versionedCublas = 3

// driverAPI holds the addresses of the driver functions. The _v2 names are
// the ones cuda.h maps the plain names to since CUDA 3.2/4.0 (64-bit sizes).
type driverAPI struct {
	init, driverGetVersion, getErrorString                               uintptr
	deviceGet, deviceGetCount, deviceGetName, deviceGetAttribute         uintptr
	deviceTotalMem, primaryCtxRetain, ctxSetCurrent, ctxSynchronize      uintptr
	moduleLoadData, moduleLoadDataEx, moduleGetFunction, launchKernel    uintptr
	memAlloc, memFree, memGetInfo                                        uintptr
	memcpyHtoD, memcpyDtoH, memcpyDtoD                                   uintptr
	memcpyHtoDAsync, memcpyDtoHAsync, memcpyDtoDAsync, memsetD8Async     uintptr
	streamCreate, streamSynchronize, eventCreate, eventRecord, eventSync uintptr
	eventElapsedTime, eventDestroy                                       uintptr
}

// symbols maps each C name to where its address goes.
func (d *driverAPI) symbols() map[string]*uintptr {
	return map[string]*uintptr{
		"cuInit": &d.init, "cuDriverGetVersion": &d.driverGetVersion, "cuGetErrorString": &d.getErrorString,
		"cuDeviceGet": &d.deviceGet, "cuDeviceGetCount": &d.deviceGetCount, "cuDeviceGetName": &d.deviceGetName,
		"cuDeviceGetAttribute": &d.deviceGetAttribute, "cuDeviceTotalMem_v2": &d.deviceTotalMem,
		"cuDevicePrimaryCtxRetain": &d.primaryCtxRetain, "cuCtxSetCurrent": &d.ctxSetCurrent,
		"cuCtxSynchronize": &d.ctxSynchronize,
		"cuModuleLoadData": &d.moduleLoadData, "cuModuleLoadDataEx": &d.moduleLoadDataEx,
		"cuModuleGetFunction": &d.moduleGetFunction, "cuLaunchKernel": &d.launchKernel,
		"cuMemAlloc_v2": &d.memAlloc, "cuMemFree_v2": &d.memFree, "cuMemGetInfo_v2": &d.memGetInfo,
		"cuMemcpyHtoD_v2": &d.memcpyHtoD, "cuMemcpyDtoH_v2": &d.memcpyDtoH, "cuMemcpyDtoD_v2": &d.memcpyDtoD,
		"cuMemcpyHtoDAsync_v2": &d.memcpyHtoDAsync, "cuMemcpyDtoHAsync_v2": &d.memcpyDtoHAsync,
		"cuMemcpyDtoDAsync_v2": &d.memcpyDtoDAsync, "cuMemsetD8Async": &d.memsetD8Async,
		"cuStreamCreate": &d.streamCreate, "cuStreamSynchronize": &d.streamSynchronize,
		"cuEventCreate": &d.eventCreate, "cuEventRecord": &d.eventRecord, "cuEventSynchronize": &d.eventSync,
		"cuEventElapsedTime": &d.eventElapsedTime, "cuEventDestroy_v2": &d.eventDestroy,
	}
}

// blasAPI holds the cuBLAS functions (the _v2 names cublas_v2.h maps to).
type blasAPI struct {
	create, setStream, setMathMode, sgemm, gemmEx uintptr
}

func (b *blasAPI) symbols() map[string]*uintptr {
	return map[string]*uintptr{
		"cublasCreate_v2": &b.create, "cublasSetStream_v2": &b.setStream, "cublasSetMathMode": &b.setMathMode,
		"cublasSgemm_v2": &b.sgemm, "cublasGemmEx": &b.gemmEx,
	}
}

// Constants from cuda.h and cublas_api.h.
const (
	attrComputeCapabilityMajor = 75 // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR
	attrComputeCapabilityMinor = 76
	attrMultiprocessorCount    = 16

	jitInfoLogBuffer          = 3 // CU_JIT_INFO_LOG_BUFFER
	jitInfoLogBufferSizeBytes = 4
	jitErrorLogBuffer         = 5
	jitErrorLogBufferSize     = 6

	cublasOpN               = 0
	cublasOpT               = 1
	cublasDefaultMath       = 0
	cublasTF32TensorOpMath  = 3
	cudaR32F                = 0 // cudaDataType CUDA_R_32F
	cudaR16F                = 2
	cudaR16BF               = 14
	cublasCompute32F        = 68 // CUBLAS_COMPUTE_32F
	cublasCompute32FFastTF  = 77 // CUBLAS_COMPUTE_32F_FAST_TF32
	cublasGemmDefault       = -1
	cudaErrorNoDevice       = 100 // CUDA_ERROR_NO_DEVICE
	cudaErrorNotInitialized = 3
)

// cuResult is a CUresult other than CUDA_SUCCESS.
type cuResult struct {
	call string
	code int
	name string // cuGetErrorString's text, when the driver gave one
}

func (e *cuResult) Error() string {
	if e.name != "" {
		return fmt.Sprintf("%s: CUDA error %d (%s)", e.call, e.code, e.name)
	}
	return fmt.Sprintf("%s: CUDA error %d", e.call, e.code)
}

// blasStatus is a cublasStatus_t other than CUBLAS_STATUS_SUCCESS.
type blasStatus struct {
	call string
	code int
}

var blasStatusNames = map[int]string{1: "NOT_INITIALIZED", 3: "ALLOC_FAILED", 7: "INVALID_VALUE",
	8: "ARCH_MISMATCH", 11: "MAPPING_ERROR", 13: "EXECUTION_FAILED", 14: "INTERNAL_ERROR", 15: "NOT_SUPPORTED"}

func (e *blasStatus) Error() string {
	return fmt.Sprintf("%s: cuBLAS status %d (CUBLAS_STATUS_%s)", e.call, e.code, blasStatusNames[e.code])
}

// libs is the loaded pair of libraries, once per process.
type libs struct {
	cu      driverAPI
	blas    blasAPI
	cuPath  string // the names they were opened under
	blasLib string // "" without cuBLAS
	noBlas  string // why there is no cuBLAS
	// blasRequired: the user named the cuBLAS library, so failing to use it
	// is an error rather than a reason to use toy's kernels.
	blasRequired bool
}

var (
	libsOnce sync.Once
	libsVal  *libs
	libsErr  error
)

// loadLibs opens libcuda and libcublas once.
func loadLibs() (*libs, error) {
	libsOnce.Do(func() { libsVal, libsErr = openLibs() })
	return libsVal, libsErr
}

// gemmDefault is CUBLAS_GEMM_DEFAULT (−1) as the int argument's register value.
var gemmDefault = func() uint64 { v := int64(cublasGemmDefault); return uint64(v) }()

// cString copies a NUL-terminated C string.
func cString(p *byte) string {
	var b []byte
	for q := unsafe.Pointer(p); *(*byte)(q) != 0; q = unsafe.Add(q, 1) {
		b = append(b, *(*byte)(q))
	}
	return string(b)
}
