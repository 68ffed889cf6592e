// Package cpu is toy's native CPU backend: C kernels for the hot ops (matrix
// multiply with F32, F16, Q8_0, the k-quants Q2_K … Q6_K, Q4_0, Q5_0, Q4_1,
// Q5_1, IQ4_NL, IQ4_XS and MXFP4 weights, RMSNorm, SiLU/SwiGLU, attention
// with or without gpt-oss's sinks, Llama 4's chunked attention as one call
// per chunk, and the gated delta rule of Qwen3.5's linear attention, one
// value head per call), precompiled into shared libraries for linux/amd64 and
// linux/arm64, embedded in the Go binary, written at first use to the user's
// cache directory and called through purego — no cgo, so CGO_ENABLED=0
// builds keep working.
//
// # Shapes
//
// The kernels take package tensor's layouts: row-major, outermost first, a
// weight matrix w [N, K] holding one output feature per row (a quantized row
// is its K values in blocks, e.g. Q8_0's K/32 blocks of 34 bytes).
//
//	M  activation rows (the tokens of a pass)   K  input width
//	N  output features                          T  queries, at positions past … past+T−1
//	S  keys and values (past+T)                 H, KV  query heads, key/value heads
//	Dh head width
//
// toy_matmul_*: out [M, N] = x [M, K]·w [N, K]ᵀ, one call per range of
// output features n0 … n1; toy_attention: q and out [T, H·Dh], k and v
// [S, KV·Dh], one call per range of (query, head) jobs t·H + h;
// toy_rmsnorm one call per range of rows, SiLU and SwiGLU per range of
// elements.
//
// # Backends
//
// Backend implements tensor.Backend on host memory, and registers itself
// with package tensor as "native" from this package's init (register.go):
// a program that imports this package, or kernels/all, has it, and
// toy.UseBackend("native") or TOY_BACKEND=native opens it with Load. Ops without a kernel run
// on tensor.Go{} (so do products with weight types that have none, such as
// BF16); ops with one split their rows over a persistent pool of worker
// goroutines (tensor.Threads() of them) and call the C kernel once per
// chunk. Between ops a worker looks for the next task for up to 100 µs,
// yielding, then parks on a channel: no spinning once the ops stop, and no
// op waits for a worker that has not started (the caller takes the chunks).
//
// # Variants
//
// Each library is one instruction-set variant of the same sources (csrc/,
// about 3,000 lines of C with no libc dependency):
// amd64 x86-64 (plain C), avx2 (AVX2+FMA+F16C), avxvnni (AVX2 with VEX VNNI)
// and avx512 (AVX-512 F/BW/VL/VNNI); arm64 neon and neon-dotprod. Load picks
// the best one the CPU supports (golang.org/x/sys/cpu); TOY_CPU_VARIANT
// forces one. Every C kernel has a plain reference beside it (toy_NAME_ref),
// and the tests check both against the pure-Go backend.
//
// # Numerics
//
// Two families of F32/F16 matrix products: the exact ones, the default, and
// fused multiply-add ones for faster prefill, which TOY_FMA=1 (or
// Backend.Fused) turns on for inference.
//
// The exact kernels (toy_matmul_f32/f16) are bit-identical to tensor.Go{}
// for F32, F16 and Q8_0 weights, on every variant: each output keeps the Go
// summation order (four strided partial sums for F32/F16; per-block exact
// integer dots added in block order for Q8_0, after the same Q8_0
// quantization of the activations) and the kernels get their width from
// computing many outputs at once. As Go does, amd64 rounds each product
// before adding it and arm64 fuses the two. So one row's outputs do not
// depend on the rows beside it: a speculative-decoding pass that checks a
// draft's guesses gives the logits decoding one token at a time would. The
// few-row products of such a pass, or of a batched decode step (Q8_0 from
// 2 rows on AVX-512 and AVX-VNNI, 3 on AVX2), read each weight tile once
// for all the rows, so that they cost little more than one row's when the
// weights come from memory.
//
// The fused kernels (toy_matmul_f32_fma/f16_fma; AVX2+FMA, AVX-512, NEON)
// serve prefill: from toy_pack_threshold() rows on, each output adds, in
// order, the sums of chunks of 64 consecutive k, each chunk a running sum
// c ← fma(x[m,k], w[n,k], c) — about 1.7× the exact kernels' speed on
// AVX-512, and bit-identical to their plain C reference, but not to Go: they
// agree to float32 rounding (within 1e-5 of the Go value plus
// 4·2⁻²⁴·Σ|x_k·w_k|, the tests' bound). Below that many
// rows (decode, bound by memory bandwidth) they are the exact kernels, and
// the x86-64 variant, without FMA instructions, has only the exact ones.
//
// Why exact is the default: the llama.cpp gates hold whole models to 1e-4
// in log-probability, and GPT-2's GELU goes through an fp16 table (as
// ggml's does), where a last-bit difference in its input can flip a
// rounding; with the fused kernels gpt2-f32 reaches 1.25e-4 at one prompt
// position. The exact kernels keep toy native and pure Go the same model.
//
// Even on a Fused backend, MatMul uses the exact kernels once any MatMul has
// run while a tape records (tensor.Recording) — from then on, for the rest
// of the process, forward and backward alike, since Tape.Backward runs its
// matrix products with no tape active. A training step therefore gives the
// same bits on the native backend as on tensor.Go{} (the LoRA adapters toy
// trains have a recorded SHA-256), and losses evaluated between steps match
// the step's. Q8_0 products have no fused variant: their integer dots are
// exact.
//
// The 2- to 6-bit weights of Q4_K_M-style files are bit-identical to
// tensor.Go{} too, on every variant. Their activations are quantized as Go
// quantizes them (Q8_K blocks of 256 for the k-quants, in csrc/kq.c: Q4_K,
// Q6_K, and csrc/kq2.c: Q5_K, Q3_K, Q2_K; Q8_0 for Q4_0 and Q5_0, in
// csrc/q45.c; Q8_1 for Q4_1 and Q5_1, in csrc/q41.c; Q8_0 for IQ4_NL and
// MXFP4 and Q8_K for IQ4_XS, in csrc/iq4.c), every block's dot product is an exact
// int32 — on x86 unsigned quants times signed activations (vpmaddubsw, then
// vpmaddwd or VNNI's vpdpwssd by each group's scale; vpdpbusd and vpmulld),
// the quants' offset (Q6_K's 32, Q3_K's 4, Q4_0's 8, Q5_0's 16) folded in
// as offset·Σx; IQ4_NL's, IQ4_XS's and MXFP4's table levels (pshufb; tbl
// on arm64) are signed (IQ4's span more than seven bits), so vpmaddubsw takes |level| and
// x with level's sign, and VNNI's vpdpbusd level + 128, less 128·Σx; on
// arm64 sdot or widening multiplies of the signed quants (Q5_K, Q3_K and
// Q2_K: loops the compiler vectorizes); on x86-64 without
// AVX2 plain C loops — and the float steps per block are Go's in Go's
// order: Q4_K, Q5_K, Q2_K sum += (d·x.d)·dots − (dmin·x.d)·mins, Q6_K, Q3_K
// and IQ4_XS sum += (d·x.d)·dots, Q4_0, Q5_0 and IQ4_NL sum += s·(d·x.d),
// Q4_1/Q5_1 sum += s·(d·x.d), then sum += m·x.s, fused on arm64 where Go
// fuses them; MXFP4 sum += (x.d·2^(e−128))·s, never fused (Go rounds the
// product explicitly). On x86, decode (fewer than 4 activation rows) unpacks each
// weight block in registers and reduces 4 to 8 rows' integer sums
// together, and prefill repacks tiles of 8 (AVX-512: 16) weight rows so that
// each vector lane holds one row and broadcasts the activations; NEON unpacks
// each block once for two activation rows.
//
// RMSNorm and the gated delta rule (toy_delta_rule: dotF32 products,
// tensor.GatedDeltaNetBackend) are bit-identical too; SiLU, SwiGLU and attention use their own exp
// (and attention's soft cap its own tanh, toy_tanh_f32)
// and agree to float32 rounding (≤ 1e-5 relative).
//
// # Error Handling
//
// Load returns a *tensor.NativeCallError (kernels.NativeCallError and
// toy.NativeCallError are the same type), saying what is missing and what to
// do, when the platform has no library, the cache directory cannot be
// written, or the library fails its checksum or cannot be opened.
//
// The libraries are rebuilt with `go generate ./kernels/cpu` (build.sh, which
// needs gcc and gcc-aarch64-linux-gnu); TestLibrariesCurrent fails when the
// committed libraries are older than the committed sources.
package cpu
