// Package tensor is toy's layer 1: the Tensor type and the primitives every
// transformer is built from — matmul, add, mul, scale, softmax, RMSNorm,
// LayerNorm, RoPE, SiLU, GELU (tanh form, and GELUErf, exact), attention over
// a KV cache, embedding lookup, for mixtures of experts Select (one
// matrix of a stack) and ScatterAdd (weighted rows added back where they
// were gathered from), and for linear attention Sigmoid, Softplus and
// GatedDeltaNet (the gated delta rule's recurrence, Qwen3.5).
//
// # Shapes
//
// One axis order everywhere: row-major, outermost (batch) first. A matrix of T
// tokens with D features is [T, D]; its row t is elements [t·D, (t+1)·D).
// Weight matrices are stored as GGUF stores them, one row per output feature:
// a projection from K to N features is a weight of shape [N, K], and
// MatMul(x [T, K], w [N, K]) = x·wᵀ is [T, N].
//
//	T  tokens (sequence positions in this call)
//	S  positions held in the KV cache (past + current)
//	D  model width            H, KV  query heads, key/value heads
//	Dh head width (D = H·Dh)  V  vocabulary size
//
// # Element types
//
// Activations are always F32. Weights may be F32, F16, BF16, Q8_0, Q4_0,
// Q5_0, Q4_1, Q5_1, the k-quants Q2_K … Q6_K (what Q4_K_M, Q5_K_M, …
// files hold), the non-linear IQ4_NL and IQ4_XS, or MXFP4 (gpt-oss's
// experts), and stay in their stored form: MatMul converts the activation
// row to the weight's "dot type" first (F16 → fp16, BF16 → bf16, Q8_0,
// Q4_0, Q5_0, IQ4_NL and MXFP4 → Q8_0 blocks, Q4_1 and Q5_1 → Q8_1
// blocks, the k-quants and IQ4_XS → Q8_K blocks of 256, with integer dot
// products), the arithmetic llama.cpp's CPU backend uses, so results agree
// with it to rounding. The formats, their quantizers and these dot products
// are package quant's (toy/tensor/quant); EncodeRow, DecodeRow and
// QuantizeRows convert whole rows through it.
//
// # Backends
//
// Each op dispatches to a Backend, a small interface (some twenty-five methods) that
// a compute device implements on its own memory. The pure-Go backend in this
// package is the reference: plain loops, split over rows across goroutines. The
// native CPU and CUDA backends (kernels/cpu and kernels/cuda) implement the same
// interface and are tested against it; this package does not import them:
// each registers itself by name from its init (RegisterBackend: "native",
// "cuda"), as a user's own backend can, and OpenBackend opens one by name
// ("go" is always there). Use SetBackend to choose one — package toy does,
// from TOY_BACKEND — and SetThreads to size the
// worker pool. A native backend that cannot run returns a NativeCallError. An op a device backend has no kernel for runs on the host:
// chunked attention (AttentionOptions.Chunk, Llama 4) past its first chunk.
//
// # Error Handling
//
// A wrong shape or dtype inside a forward pass is a programming error: ops
// panic with the op's name and the shapes involved, e.g.
// "MatMul: x [3 64] and w [128 32]: inner dimensions differ". Functions that
// take outside data (FromBytes) return errors instead.
package tensor
