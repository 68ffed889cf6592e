// Package cuda is toy's NVIDIA GPU backend, with no cgo and no CUDA toolkit
// at run time: the driver API (libcuda.so.1, installed with the NVIDIA
// driver) and, where the machine has it, cuBLAS (libcublas.so.13, .12 or .11, on
// the loader's path or in the CUDA toolkit, PyTorch's pip wheels, conda or
// Ollama) are opened with purego when Load is called, and toy's kernels
// (csrc/*.cu) ship as PTX embedded in the binary, which the driver
// JIT-compiles for the GPU it finds (Volta and newer). With the driver
// alone, toy's own GEMM kernels do what cuBLAS would.
//
// # Shapes
//
// The kernels take package tensor's layouts in device memory: row-major,
// outermost first, a weight matrix w [N, K] holding one output feature per
// row (a quantized row is its K values in blocks, as on the CPU).
//
//	M  activation rows (the tokens of a pass)   K  input width
//	N  output features                          T  queries, S  keys and values (past+T)
//	H, KV  query heads, key/value heads         Dh head width
//	E  experts of a mixture                     k  experts chosen per token
//
// Matrix products: out [M, N] = x [M, K]·w [N, K]ᵀ; attention: q and out
// [T, H·Dh], k and v [S, KV·Dh], one block per (query, head) job t·H + h;
// norms one block per row; MatMulID: a stack w [E, N, K] and ids [M, k],
// out [M·k, N]. Elementwise kernels loop over all elements (grid-stride).
//
// # Backends
//
// Backend implements tensor.Backend and tensor.DeviceBackend: tensors live
// in device memory. It registers itself with package tensor as "cuda" from
// this package's init (register.go): a program that imports this package,
// or kernels/all, has it, and toy.UseBackend("cuda") or TOY_BACKEND=cuda
// opens it with Load. Weights are uploaded at first use and stay there in
// their stored type (F32, F16, BF16, and Q8_0, Q4_0, Q5_0, Q4_1, Q5_1, the
// k-quant Q2_K … Q6_K, the IQ4_NL and IQ4_XS blocks and MXFP4); activations and the KV cache never leave the device; reading a
// tensor from Go (the logits, for sampling) downloads it. F32 products use
// cuBLAS (TF32 only with TOY_CUDA_TF32=1) or, without it, toy's row kernel
// and tiled GEMM; Q8_0 products quantize the activations on the device
// exactly as the CPU does and sum integer block dots (Q4_0, Q5_0, IQ4_NL and
// MXFP4 too; Q4_1 and Q5_1 against Q8_1 activations; the k-quants and IQ4_XS
// against Q8_K activations; their float scaling in the CPU's order, so those products
// are bit-identical to it); F16/BF16 products
// round the activations to the weight's type. A mixture of experts routes a
// decode step on the device too (tensor.ExpertsBackend: the top-k choice,
// and each chosen expert's product found from the ids there), so a decode
// step uploads its token id and downloads its logits, nothing else;
// gpt-oss's attention sinks (uploaded once, like weights) and clamped
// SwiGLU (tensor.SwiGLUOAI) run there as well. All ops
// run in order on one
// stream; device memory is pooled by size class and returned to the pool
// when the tensors holding it are garbage collected.
//
// # Numerics
//
// The kernels follow tensor.Go{}'s arithmetic (float64 sums in norms and
// softmax, float64 exp, fp16-table GELU, iterated RoPE angles, products
// rounded before adding where Go does so); matrix products differ from the
// CPU only in summation order. The device gates (tests/cuda) require every
// op within 1e-5 relative of pure Go (1e-4 for F16/BF16 products; products
// also get 4·2⁻²⁴·Σ|x·w| for the summation order), greedy tokens identical
// to the CPU and llama.cpp, and logits within 1e-3 (1e-2 for F16 models and
// 3e-3 for GPT-2, where fp16 roundings amplify order differences).
//
// # Testing without a GPU
//
// Package emu builds an emulated device — the driver API and cuBLAS on host
// memory, running these same kernel sources compiled by g++ — that
// LoadLibrary (or TOY_CUDA_DRIVER and TOY_CUBLAS) opens the backend on; the
// tests use it when there is no GPU. README.md says what it proves and what
// it cannot.
//
// # Error Handling
//
// Load returns a *tensor.NativeCallError (kernels.NativeCallError and
// toy.NativeCallError are the same type) naming what is missing — the
// driver library, a GPU (cuInit or the device count), a driver able to
// compile the PTX, the cuBLAS library TOY_CUBLAS names — and what to do. A
// missing cuBLAS is no error: Info().NoCublas says why it is not used. A CUDA failure inside an op
// (a device fault) panics with the call and the driver's message, as shape
// errors do.
//
// The PTX is rebuilt with `go generate ./kernels/cuda` (build.sh, which
// needs nvcc and ptxas); TestPTXCurrent fails when the committed PTX is
// older than the committed sources.
package cuda
