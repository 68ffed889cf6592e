// The CUDA backend: tensor.Backend on device memory.

package cuda

import (
	"fmt"
	"math"
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/toyml/toy/toy/tensor"
	"github.com/toyml/toy/toy/tensor/quant"
)

// Backend runs every op on one GPU, on one stream, with tensors resident in
// device memory (see tensor.DeviceBackend): weights are uploaded at first
// use and stay, in their own type (F32, F16, BF16, Q8_0, Q4_0, Q5_0, Q4_1,
// Q5_1, Q2_K … Q6_K, IQ4_NL, IQ4_XS, MXFP4); activations and the KV cache never leave the device; Go code
// reading a tensor (the logits, for sampling) downloads it. F32 products run
// on cuBLAS (TF32 off unless TOY_CUDA_TF32=1) when the machine has it, the
// rest on toy's kernels (csrc/).
type Backend struct {
	l      *libs
	info   Info
	dev    int32
	ctx    uintptr // the device's primary context
	stream uintptr
	blas   uintptr // cublasHandle_t
	tf32   bool
	fn     map[string]uintptr

	mu       sync.Mutex        // one op at a time: the pool and the stream's order
	pool     map[int][]uintptr // free device memory by size class
	pooled   int64             // bytes in the pool
	sinceGC  int64             // bytes allocated since the last forced GC
	relMu    sync.Mutex        // guards released
	released []freed           // memory of dead buffers, for the pool

	uploads, downloads atomic.Int64 // host↔device copies, for tests and benchmarks
	prof               *profiler    // the per-kernel times, when SetProfile turned them on

	argv [16]uint64         // a launch's kernel arguments (see launch)
	argp [16]unsafe.Pointer // their addresses, cuLaunchKernel's kernelParams
}

// Every primitive of tensor.Backend runs on the device, and so do the fused
// mixture-of-experts and gated delta rule kernels.
var (
	_ tensor.DeviceBackend        = (*Backend)(nil)
	_ tensor.ExpertsBackend       = (*Backend)(nil)
	_ tensor.GatedDeltaNetBackend = (*Backend)(nil)
)

// Name returns "cuda".
func (b *Backend) Name() string { return "cuda" }

// Device names the GPU.
func (b *Backend) Device() string { return b.info.Name }

// Info describes the GPU, the driver and cuBLAS.
func (b *Backend) Info() Info { return b.info }

// Transfers returns how many host→device and device→host copies the
// backend has made.
func (b *Backend) Transfers() (uploads, downloads int64) { return b.uploads.Load(), b.downloads.Load() }

// Synchronize waits for every op launched so far (for timing).
func (b *Backend) Synchronize() {
	defer b.enter()()
	b.must(b.l.call("cuStreamSynchronize", b.l.cu.streamSynchronize, b.stream))
}

// enter makes the context current on this goroutine's thread, pinned for the
// op, and takes the op lock; the returned function undoes both.
func (b *Backend) enter() func() {
	runtime.LockOSThread()
	b.mu.Lock()
	b.must(b.l.call("cuCtxSetCurrent", b.l.cu.ctxSetCurrent, b.ctx))
	b.drainReleased()
	return func() {
		b.mu.Unlock()
		runtime.UnlockOSThread()
	}
}

// must panics on a CUDA failure inside an op (a device fault or a bug; the
// ops' errors are programming errors, as for shapes).
func (b *Backend) must(err error) {
	if err != nil {
		panic(fmt.Sprintf("cuda (%s): %v", b.info.Name, err))
	}
}

// in returns the device address of t's current elements, copying them over
// first when the device does not hold them (tensor.DeviceIn).
func (b *Backend) in(t *tensor.Tensor) uintptr {
	if t == nil {
		return 0
	}
	s, off := tensor.DeviceIn(b, t)
	return s.(*buffer).ptr + uintptr(off)
}

// out returns the device address where an op writes all of t
// (tensor.DeviceOut); an op that writes part of t calls in first.
func (b *Backend) out(t *tensor.Tensor) uintptr {
	s, off := tensor.DeviceOut(b, t)
	return s.(*buffer).ptr + uintptr(off)
}

// Alloc returns size bytes of device memory for a tensor's storage, cleared
// to zeros when zero is set. Called by tensor.DeviceIn and DeviceOut inside
// an op (the backend entered).
func (b *Backend) Alloc(size int, zero bool) tensor.DeviceStorage {
	buf := b.alloc(size)
	if zero {
		b.must(b.l.call("cuMemsetD8Async", b.l.cu.memsetD8Async, buf.ptr, 0, uintptr(size), b.stream))
	}
	return buf
}

// Kernel arguments, each in a 64-bit slot that cuLaunchKernel reads through
// a pointer (the kernel reads 4 bytes for int and float).
func pArg(p uintptr) uint64 { return uint64(p) }
func iArg(n int) uint64     { return uint64(uint32(int32(n))) }
func lArg(n int) uint64     { return uint64(int64(n)) }
func fArg(f float32) uint64 { return uint64(math.Float32bits(f)) }
func bArg(v bool) uint64 {
	if v {
		return 1
	}
	return 0
}

// launch runs kernel name on a grid of (gx, gy) blocks of bx threads. The
// arguments go through the backend's argv/argp block, which is heap memory
// (a goroutine stack may move while the driver reads it) reused by every
// launch under b.mu; cuLaunchKernel copies them before it returns.
func (b *Backend) launch(name string, gx, gy, bx int, args ...uint64) {
	fn := b.fn[name]
	if fn == 0 {
		panic("cuda: no kernel " + name)
	}
	if len(args) > len(b.argv) {
		panic(fmt.Sprintf("cuda: kernel %s: %d arguments, at most %d", name, len(args), len(b.argv)))
	}
	for i, a := range args {
		b.argv[i] = a
		b.argp[i] = unsafe.Pointer(&b.argv[i])
	}
	done := b.timed(name)
	b.must(b.l.call(name, b.l.cu.launchKernel, fn, uintptr(gx), uintptr(gy), 1, uintptr(bx), 1, 1, 0, b.stream,
		uintptr(unsafe.Pointer(&b.argp[0])), 0))
	done()
}

// elementwise launches a grid-stride kernel over n elements.
func (b *Backend) elementwise(name string, n int, args ...uint64) {
	if n == 0 {
		return
	}
	b.launch(name, min((n+255)/256, 1<<16), 1, 256, args...)
}

// matTile is the activation rows each warp of the row kernels handles (MT
// in matmul.cu); gemmMin is the rows from which F16/BF16 products go to
// cublasGemmEx instead, or without cuBLAS all but Q8_0 to the tiled GEMM,
// whose output tiles are gemmTile square (GT).
// From mmaMin rows on, Q8_0, Q4_0, Q5_0, IQ4_NL, MXFP4, Q4_K, Q5_K and Q6_K
// products take the tensor cores (toy_matmul_q8_mma …: output tiles of
// mmaTile rows by mmaTile, for the k-quants mmaTile/2, columns) where the
// GPU has them.
const (
	matTile  = 8
	gemmMin  = 32
	gemmTile = 64
	mmaMin   = 8
	mmaTile  = 64
)

// MatMul: out[M, N] = x[M, K]·w[N, K]ᵀ. F32 weights: cublasSgemm. F16 and
// BF16: x rounded to the weight's type, then toy_matmul_half (or GemmEx with
// float32 accumulation from gemmMin rows on). Q8_0: x quantized to Q8_0
// blocks (toy_quantize_q8), then integer block dots (toy_matmul_q8, or from
// mmaMin rows on a GPU of compute capability 8.0 or later toy_matmul_q8_mma
// on the tensor cores, as the _mma kernels of Q4_0, Q5_0, IQ4_NL, MXFP4,
// Q4_K, Q5_K and Q6_K; all give Go's result to the bit); Q4_0,
// Q5_0, IQ4_NL and MXFP4 likewise (toy_matmul_q32); Q4_1 and Q5_1 too, with the
// Q8_1 sums of toy_q8_1_sums (toy_matmul_q41). The k-quants and IQ4_XS: x
// quantized to Q8_K (toy_quantize_q8k), then toy_matmul_q4k,
// toy_matmul_q6k, toy_matmul_q5k, toy_matmul_q32k (Q3_K, Q2_K) or
// toy_matmul_iq4xs. Without
// cuBLAS, toy_matmul_f32 and, from gemmMin rows on, the tiled toy_gemm_f32
// and toy_gemm_half take cuBLAS's place.
func (b *Backend) MatMul(out, x, w *tensor.Tensor) {
	M, K, N := x.Rows(), x.Cols(), w.Dim(0)
	if M == 0 || N == 0 {
		return
	}
	defer b.enter()()
	xp, wp, op := b.in(x), b.in(w), b.out(out)
	rowGrid := func() (int, int) { return (N + 3) / 4, (M + matTile - 1) / matTile } // 4 warps a block
	tileGrid := func() (int, int) { return (N + gemmTile - 1) / gemmTile, (M + gemmTile - 1) / gemmTile }
	switch w.DType() {
	case tensor.F32:
		switch {
		case b.blas != 0:
			one, zero := float32(1), float32(0)
			defer b.timed("cublasSgemm")()
			b.must(b.l.blasCall("cublasSgemm", b.l.blas.sgemm, b.blas, cublasOpT, cublasOpN, uintptr(N), uintptr(M), uintptr(K),
				uintptr(unsafe.Pointer(&one)), wp, uintptr(K), xp, uintptr(K), uintptr(unsafe.Pointer(&zero)), op, uintptr(N)))
		case M >= gemmMin:
			gx, gy := tileGrid()
			b.launch("toy_gemm_f32", gx, gy, 256, pArg(wp), pArg(xp), pArg(op), iArg(M), iArg(K), iArg(N))
		default:
			gx, gy := rowGrid()
			b.launch("toy_matmul_f32", gx, gy, 128, pArg(wp), pArg(xp), pArg(op), iArg(M), iArg(K), iArg(N))
		}
	case tensor.F16, tensor.BF16:
		bf := w.DType() == tensor.BF16
		xh, c := b.take(2 * M * K)
		defer b.give(xh, c)
		b.launch("toy_round_half", (M*K+255)/256, 1, 256, pArg(xp), pArg(xh), iArg(M*K), bArg(bf))
		switch {
		case M >= gemmMin && b.blas != 0:
			dt := uintptr(cudaR16F)
			if bf {
				dt = cudaR16BF
			}
			one, zero := float32(1), float32(0)
			defer b.timed("cublasGemmEx")()
			b.must(b.l.blasCall("cublasGemmEx", b.l.blas.gemmEx, b.blas, cublasOpT, cublasOpN, uintptr(N), uintptr(M), uintptr(K),
				uintptr(unsafe.Pointer(&one)), wp, dt, uintptr(K), xh, dt, uintptr(K), uintptr(unsafe.Pointer(&zero)),
				op, cudaR32F, uintptr(N), cublasCompute32F, uintptr(gemmDefault)))
		case M >= gemmMin:
			gx, gy := tileGrid()
			b.launch("toy_gemm_half", gx, gy, 256, pArg(wp), pArg(xh), pArg(op), iArg(M), iArg(K), iArg(N), bArg(bf))
		default:
			gx, gy := rowGrid()
			b.launch("toy_matmul_half", gx, gy, 128, pArg(wp), pArg(xh), pArg(op), iArg(M), iArg(K), iArg(N), bArg(bf))
		}
	default:
		acts, release := b.quantizeActivations(xp, M, K, w.DType())
		defer release()
		gx, gy := rowGrid()
		name, extra := quantKernel(w.DType())
		if M >= mmaMin && b.fn[name+"_mma"] != 0 { // Q8_0, Q4_0, Q5_0, IQ4_NL, MXFP4, Q4_K, Q5_K, Q6_K
			cols := mmaTile
			if t := w.DType(); t == tensor.Q4_K || t == tensor.Q5_K || t == tensor.Q6_K {
				cols = mmaTile / 2
			}
			name, gx, gy = name+"_mma", (N+cols-1)/cols, (M+mmaTile-1)/mmaTile
		}
		args := append([]uint64{pArg(wp)}, acts...)
		args = append(args, pArg(op), iArg(M), iArg(K), iArg(N))
		b.launch(name, gx, gy, 128, append(args, extra...)...)
	}
}

// quantizeActivations quantizes x [M, K] (at xp) as the products with
// weights of type dt read it, into pooled buffers: Q8_0 blocks
// (toy_quantize_q8) for Q8_0, Q4_0, Q5_0, IQ4_NL and MXFP4; those and their Q8_1
// sums (toy_q8_1_sums) for Q4_1 and Q5_1; Q8_K super-blocks with their
// 16-element sums (toy_quantize_q8k) for the k-quants and IQ4_XS. It
// returns the kernel arguments that follow the weights (xq, xd, and the
// sums where the kernel takes them) and a function that returns the
// buffers to the pool.
func (b *Backend) quantizeActivations(xp uintptr, M, K int, dt tensor.DType) (acts []uint64, release func()) {
	type buf struct {
		p uintptr
		c int
	}
	var bufs []buf
	take := func(n int) uintptr {
		p, c := b.take(n)
		bufs = append(bufs, buf{p, c})
		return p
	}
	release = func() {
		for _, t := range bufs {
			b.give(t.p, t.c)
		}
	}
	switch dt {
	case tensor.Q8_0, tensor.Q4_0, tensor.Q5_0, tensor.IQ4_NL, tensor.MXFP4, tensor.Q4_1, tensor.Q5_1:
		nb := M * K / quant.Q8BlockSize
		xq, xd := take(M*K), take(4*nb)
		b.launch("toy_quantize_q8", (nb+3)/4, 1, 128, pArg(xp), pArg(xq), pArg(xd), iArg(nb))
		if dt != tensor.Q4_1 && dt != tensor.Q5_1 {
			return []uint64{pArg(xq), pArg(xd)}, release
		}
		xs := take(4 * nb)
		b.launch("toy_q8_1_sums", (nb+3)/4, 1, 128, pArg(xp), pArg(xq), pArg(xs), iArg(nb))
		return []uint64{pArg(xq), pArg(xd), pArg(xs)}, release
	case tensor.Q4_K, tensor.Q6_K, tensor.Q5_K, tensor.Q3_K, tensor.Q2_K, tensor.IQ4_XS:
		nb := M * K / quant.QK
		xq, xd, xs := take(M*K), take(4*nb), take(4*16*nb)
		b.launch("toy_quantize_q8k", (nb+3)/4, 1, 128, pArg(xp), pArg(xq), pArg(xd), pArg(xs), iArg(nb))
		if dt == tensor.Q6_K || dt == tensor.IQ4_XS { // their kernels need no sums
			return []uint64{pArg(xq), pArg(xd)}, release
		}
		return []uint64{pArg(xq), pArg(xd), pArg(xs)}, release
	}
	release()
	panic(fmt.Sprintf("cuda MatMul: weight type %v is not supported", dt))
}

// quantKernel names the product kernel for quantized weights of type dt,
// and the arguments it takes after N (which variant).
func quantKernel(dt tensor.DType) (string, []uint64) {
	switch dt {
	case tensor.Q8_0:
		return "toy_matmul_q8", nil
	case tensor.Q4_0, tensor.Q5_0, tensor.IQ4_NL, tensor.MXFP4:
		return "toy_matmul_q32", []uint64{iArg(map[tensor.DType]int{tensor.Q4_0: 0, tensor.Q5_0: 1, tensor.IQ4_NL: 2, tensor.MXFP4: 3}[dt])}
	case tensor.Q4_1, tensor.Q5_1:
		return "toy_matmul_q41", []uint64{bArg(dt == tensor.Q5_1)}
	case tensor.Q4_K:
		return "toy_matmul_q4k", nil
	case tensor.Q6_K:
		return "toy_matmul_q6k", nil
	case tensor.Q5_K:
		return "toy_matmul_q5k", nil
	case tensor.IQ4_XS:
		return "toy_matmul_iq4xs", nil
	default: // Q3_K, Q2_K
		return "toy_matmul_q32k", []uint64{bArg(dt == tensor.Q3_K)}
	}
}

// MatMulID: the chosen experts' products (tensor.MatMulID). The
// activations are rounded or quantized as MatMul does it, then the *_id
// form of MatMul's row kernel runs one block row per chosen expert of each
// token, finding the expert's matrix from ids on the device; each row is
// what MatMul's row kernel gives for it. F32 and F16/BF16 stacks take toy's
// row kernels, not cuBLAS.
func (b *Backend) MatMulID(out, x, w, ids *tensor.Tensor) {
	X, K := x.Rows(), x.Cols()
	S, N := out.Rows(), out.Cols()
	if S == 0 || N == 0 {
		return
	}
	defer b.enter()()
	xp, wp, ip, op := b.in(x), b.in(w), b.in(ids), b.out(out)
	rowBytes, _ := w.DType().RowBytes(K)
	run := func(name string, acts []uint64, extra ...uint64) {
		args := append([]uint64{pArg(wp)}, acts...)
		args = append(args, pArg(op), pArg(ip), lArg(N*rowBytes), iArg(S/X), iArg(K), iArg(N))
		b.launch(name, (N+3)/4, S, 128, append(args, extra...)...)
	}
	switch dt := w.DType(); dt {
	case tensor.F32:
		run("toy_matmul_f32_id", []uint64{pArg(xp)})
	case tensor.F16, tensor.BF16:
		xh, c := b.take(2 * X * K)
		defer b.give(xh, c)
		b.launch("toy_round_half", (X*K+255)/256, 1, 256, pArg(xp), pArg(xh), iArg(X*K), bArg(dt == tensor.BF16))
		run("toy_matmul_half_id", []uint64{pArg(xh)}, bArg(dt == tensor.BF16))
	default:
		acts, release := b.quantizeActivations(xp, X, K, dt)
		defer release()
		name, extra := quantKernel(dt)
		run(name+"_id", acts, extra...)
	}
}

// TopK: each token's k best experts (tensor.TopK), one thread a token.
func (b *Backend) TopK(ids, scores *tensor.Tensor, k, groups, groupsUsed int) {
	T, E := scores.Rows(), scores.Cols()
	if T == 0 {
		return
	}
	defer b.enter()()
	sp, ip := b.in(scores), b.out(ids)
	b.launch("toy_topk", (T+31)/32, 1, 32, pArg(sp), pArg(ip), iArg(T), iArg(E), iArg(k), iArg(groups), iArg(groupsUsed))
}

// GatherColumns: the chosen experts' scores (tensor.GatherColumns).
func (b *Backend) GatherColumns(out, x, ids *tensor.Tensor) {
	if out.Len() == 0 {
		return
	}
	defer b.enter()()
	xp, ip, op := b.in(x), b.in(ids), b.out(out)
	b.elementwise("toy_gather_cols", out.Len(), pArg(op), pArg(xp), pArg(ip), iArg(x.Rows()), iArg(x.Cols()), iArg(ids.Cols()))
}

// RowSumReciprocal: 1 / each row's sum (tensor.RowSumReciprocal), a thread
// a row.
func (b *Backend) RowSumReciprocal(out, x *tensor.Tensor) {
	if out.Len() == 0 {
		return
	}
	defer b.enter()()
	xp, op := b.in(x), b.out(out)
	b.elementwise("toy_row_sum_recip", x.Rows(), pArg(op), pArg(xp), iArg(x.Rows()), iArg(x.Cols()))
}

// WeightedSum: the chosen experts' outputs added back to their tokens
// (tensor.WeightedSum), one thread an output element.
func (b *Backend) WeightedSum(out, h, w *tensor.Tensor) {
	if out.Len() == 0 {
		return
	}
	defer b.enter()()
	hp, wp, op := b.in(h), b.in(w), b.out(out)
	b.elementwise("toy_weighted_sum", out.Len(), pArg(op), pArg(hp), pArg(wp), iArg(w.Rows()), iArg(w.Cols()), iArg(h.Cols()))
}

func (b *Backend) broadcast(name string, out, a, c *tensor.Tensor) {
	defer b.enter()()
	ap, cp, op := b.in(a), b.in(c), b.out(out)
	b.elementwise(name, a.Len(), pArg(op), pArg(ap), pArg(cp), lArg(a.Len()), lArg(c.Len()))
}

// Add: out = a + c (c one row broadcast, or a's shape).
func (b *Backend) Add(out, a, c *tensor.Tensor) { b.broadcast("toy_add", out, a, c) }

// Mul: out = a ⊙ c.
func (b *Backend) Mul(out, a, c *tensor.Tensor) { b.broadcast("toy_mul", out, a, c) }

// Scale: out = a·s.
func (b *Backend) Scale(out, a *tensor.Tensor, s float32) {
	defer b.enter()()
	ap, op := b.in(a), b.out(out)
	b.elementwise("toy_scale", a.Len(), pArg(op), pArg(ap), fArg(s), lArg(a.Len()))
}

func (b *Backend) unary(name string, out, x *tensor.Tensor) {
	defer b.enter()()
	xp, op := b.in(x), b.out(out)
	b.elementwise(name, x.Len(), pArg(op), pArg(xp), lArg(x.Len()))
}

// SiLU: out = x·σ(x).
func (b *Backend) SiLU(out, x *tensor.Tensor) { b.unary("toy_silu", out, x) }

// Tanh: tanh in double precision, rounded to float32, as tensor.Go{}.
func (b *Backend) Tanh(out, x *tensor.Tensor) { b.unary("toy_tanh", out, x) }

// GELU: tanh-GELU through fp16, as tensor.Go{}.
func (b *Backend) GELU(out, x *tensor.Tensor) { b.unary("toy_gelu", out, x) }

// GELUErf is the exact GELU, x·Φ(x), erf in double precision.
func (b *Backend) GELUErf(out, x *tensor.Tensor) { b.unary("toy_gelu_erf", out, x) }

// Sigmoid: out = σ(x).
func (b *Backend) Sigmoid(out, x *tensor.Tensor) { b.unary("toy_sigmoid", out, x) }

// Softplus: out = softplus(x), the identity past 20.
func (b *Backend) Softplus(out, x *tensor.Tensor) { b.unary("toy_softplus", out, x) }

// GatedDeltaNet: the gated delta rule over T tokens
// (tensor.GatedDeltaNetBackend, fused). toy_l2_rows normalises q and k into
// pooled buffers, then toy_delta_rule runs a thread per column of each
// value head's state, through the tokens in order; the state, when given,
// is read and left on the device (nil: a zeroed pooled one).
func (b *Backend) GatedDeltaNet(out, q, k, v, g, beta, state *tensor.Tensor, eps float32) {
	T, Hv := g.Rows(), g.Cols()
	if T == 0 {
		return
	}
	D := v.Cols() / Hv
	Hk := q.Cols() / D
	defer b.enter()()
	qp, kp, vp, gp, bp, op := b.in(q), b.in(k), b.in(v), b.in(g), b.in(beta), b.out(out)
	var sp uintptr
	if state != nil {
		b.in(state)
		sp = b.out(state)
	} else {
		p, c := b.take(4 * Hv * D * D)
		defer b.give(p, c)
		b.must(b.l.call("cuMemsetD8Async", b.l.cu.memsetD8Async, p, 0, uintptr(4*Hv*D*D), b.stream))
		sp = p
	}
	n := T * Hk * D
	qn, qc := b.take(4 * n)
	defer b.give(qn, qc)
	kn, kc := b.take(4 * n)
	defer b.give(kn, kc)
	rows := T * Hk
	b.elementwise("toy_l2_rows", rows, pArg(qn), pArg(qp), iArg(rows), iArg(D), fArg(eps))
	b.elementwise("toy_l2_rows", rows, pArg(kn), pArg(kp), iArg(rows), iArg(D), fArg(eps))
	bx := min(64, (D+31)/32*32)
	scale := 1 / float32(math.Sqrt(float64(D)))
	b.launch("toy_delta_rule", Hv, (D+bx-1)/bx, bx, pArg(sp), pArg(op), pArg(qn), pArg(kn), pArg(vp), pArg(gp), pArg(bp),
		iArg(T), iArg(Hk), iArg(Hv), iArg(D), fArg(scale))
}

// CausalConv: a depthwise causal convolution over time, a thread per
// output element; past may be nil.
func (b *Backend) CausalConv(out, past, x, taps *tensor.Tensor) {
	if out.Len() == 0 {
		return
	}
	defer b.enter()()
	pp, xp, tp, op := b.in(past), b.in(x), b.in(taps), b.out(out)
	b.elementwise("toy_causal_conv", out.Len(), pArg(op), pArg(pp), pArg(xp), pArg(tp), iArg(x.Rows()), iArg(x.Cols()), iArg(taps.Cols()))
}

// SwiGLU: out = SiLU(gate) ⊙ up.
func (b *Backend) SwiGLU(out, gate, up *tensor.Tensor) {
	defer b.enter()()
	gp, up2, op := b.in(gate), b.in(up), b.out(out)
	b.elementwise("toy_swiglu", gate.Len(), pArg(op), pArg(gp), pArg(up2), lArg(gate.Len()))
}

// SwiGLUOAI: gpt-oss's clamped SwiGLU, as tensor.SwiGLUOAI computes it.
func (b *Backend) SwiGLUOAI(out, gate, up *tensor.Tensor, alpha, limit float32) {
	if gate.Len() == 0 {
		return
	}
	defer b.enter()()
	gp, up2, op := b.in(gate), b.in(up), b.out(out)
	b.elementwise("toy_swiglu_oai", gate.Len(), pArg(op), pArg(gp), pArg(up2), fArg(alpha), fArg(limit), lArg(gate.Len()))
}

// rowThreads is the block size of the row-wise kernels.
func rowThreads(D int) int { return min(1024, max(32, (D+31)/32*32)) }

// RMSNorm: one block per row.
func (b *Backend) RMSNorm(out, x, w *tensor.Tensor, eps float32) {
	if x.Rows() == 0 {
		return
	}
	defer b.enter()()
	xp, wp, op := b.in(x), b.in(w), b.out(out)
	b.launch("toy_rmsnorm", x.Rows(), 1, min(256, rowThreads(x.Cols())), pArg(op), pArg(xp), pArg(wp), iArg(x.Cols()), fArg(eps))
}

// LayerNorm: one block per row.
func (b *Backend) LayerNorm(out, x, w, c *tensor.Tensor, eps float32) {
	if x.Rows() == 0 {
		return
	}
	defer b.enter()()
	xp, wp, cp, op := b.in(x), b.in(w), b.in(c), b.out(out)
	b.launch("toy_layernorm", x.Rows(), 1, min(256, rowThreads(x.Cols())), pArg(op), pArg(xp), pArg(wp), pArg(cp), iArg(x.Cols()), fArg(eps))
}

// RoPE: one thread per element; θ_i as tensor.Go{} builds it, divided by
// factors[i] when there are factors (uploaded once, like a weight).
func (b *Backend) RoPE(out, x *tensor.Tensor, pos0 int, o tensor.RoPEOptions) {
	defer b.enter()()
	xp, fp, op := b.in(x), b.in(o.Factors), b.out(out)
	thetaScale := float32(math.Pow(float64(o.Base), -2/float64(o.Dim)))
	p := o.Scaling.Params(o.Dim, o.Base)
	b.elementwise("toy_rope", x.Len(), pArg(op), pArg(xp), pArg(fp), iArg(x.Rows()), iArg(x.Cols()), iArg(pos0), iArg(o.HeadDim), iArg(o.Dim),
		fArg(thetaScale), bArg(o.NeoX), fArg(p.FreqScale), fArg(p.ExtFactor), fArg(p.RampLow), fArg(p.RampHigh), fArg(p.MScale))
}

// Softmax: one block per row.
func (b *Backend) Softmax(out, x *tensor.Tensor, past int) {
	if x.Rows() == 0 {
		return
	}
	defer b.enter()()
	xp, op := b.in(x), b.out(out)
	b.launch("toy_softmax", x.Rows(), 1, min(256, rowThreads(x.Cols())), pArg(op), pArg(xp), iArg(x.Cols()), iArg(past))
}

// Split-K attention (toy_attention_chunk, then toy_attention_combine): the
// keys in chunks of attnChunk (ATTN_CHUNK in ops.cu), one block of
// attnThreads per (token, head, chunk), the partial results merged per
// (token, head). Attention takes it from attnSplitKeys keys on, for decode
// and prompts alike: toy_attention's one block per (token, head) walks every
// key alone, which leaves a large GPU idle in decode (9 to 64 blocks for
// 80 to 132 SMs) and makes each block's walk long in a prompt, where the
// split's blocks are short and many and read the same keys through the
// cache. Below attnSplitKeys, two chunks, the second launch and the partial
// results' round trip cost about what the split saves. A prompt goes a
// slice of query rows at a time, each slice's partial results at most
// attnScratch bytes; bidirectional attention (every query sees every key
// of the launch) cannot be sliced, and one too large for the scratch takes
// toy_attention. The bounds are constants rather than Info.SMs so that
// every device (the emulator has one SM) takes the same path for the same
// shapes.
const (
	attnChunk     = 64
	attnThreads   = 256
	attnSplitKeys = 2 * attnChunk
)

// attnScratch is the most bytes of partial results a split-K launch takes
// (a variable so that a test can make prompts slice).
var attnScratch = 64 << 20

// attnSplit returns how many query rows at a time Attention over T rows of
// nHead heads of width dh and S keys runs split-K, or 0 for toy_attention.
func attnSplit(T, nHead, S, dh int, bidir bool) int {
	if S < attnSplitKeys {
		return 0
	}
	per := nHead * ((S + attnChunk - 1) / attnChunk) * (8 + 4 + 4*dh)
	rows := max(1, min(T, attnScratch/per))
	if bidir && rows < T {
		return 0
	}
	return rows
}

// Attention: from attnSplitKeys keys on (attnSplit), split-K: per (token,
// head, chunk) the chunk's max score (float32), sum of exps (float64) and
// unnormalized output (dh float32) in a scratch buffer, merged by a second
// kernel, a slice of query rows at a time. Otherwise one block per (token,
// head), the scores of up to 64 Mi (token, head, key) triples at a time in
// a scratch buffer.
// Attention sinks (o.Sinks, gpt-oss) join the softmax in toy_attention and,
// split-K, in the merge (toy_attention_combine); the tensor is uploaded at
// first use and stays, like a weight.
func (b *Backend) Attention(out, q, k, v *tensor.Tensor, nHead, nKV, past int, o tensor.AttentionOptions) {
	T := q.Rows()
	if T == 0 {
		return
	}
	bidirT := 0 // the kernels' flag and T in one argument
	if o.Bidirectional {
		bidirT = T
	}
	defer b.enter()()
	qp, kp, vp, op := b.in(q), b.in(k), b.in(v), b.out(out)
	sp := b.in(o.Sinks) // uploaded once, like a weight; 0 without sinks
	S, dh := past+T, q.Cols()/nHead
	if rows := attnSplit(T, nHead, S, dh, o.Bidirectional); rows > 0 {
		chunks := (S + attnChunk - 1) / attnChunk
		n := rows * nHead * chunks
		lp, c := b.take(n * (8 + 4 + 4*dh)) // l (float64), then m, then o
		defer b.give(lp, c)
		mp := lp + uintptr(8*n)
		opart := mp + uintptr(4*n)
		// Rows t0 … of q and out are a launch's rows 0 …: position past+t0+t.
		for t0 := 0; t0 < T; t0 += rows {
			jobs, at := min(rows, T-t0)*nHead, uintptr(4*t0*nHead*dh)
			b.launch("toy_attention_chunk", jobs, chunks, attnThreads, pArg(opart), pArg(mp), pArg(lp), pArg(qp+at), pArg(kp), pArg(vp),
				iArg(nHead), iArg(nKV), iArg(dh), iArg(past+t0), fArg(o.Scale), fArg(o.SoftCap), iArg(o.Window), iArg(bidirT))
			b.launch("toy_attention_combine", jobs, 1, min(256, rowThreads(dh)), pArg(op+at), pArg(opart), pArg(mp), pArg(lp),
				iArg(nHead), iArg(dh), iArg(past+t0), iArg(chunks), iArg(o.Window), iArg(bidirT), pArg(sp))
		}
		return
	}
	chunk := max(1, min(T, (64<<20)/(nHead*S)))
	scores, c := b.take(4 * chunk * nHead * S)
	defer b.give(scores, c)
	for t0 := 0; t0 < T; t0 += chunk {
		n := min(chunk, T-t0)
		b.launch("toy_attention", n*nHead, 1, 128, pArg(op), pArg(qp), pArg(kp), pArg(vp), pArg(scores),
			iArg(nHead), iArg(nKV), iArg(dh), iArg(past), iArg(t0), fArg(o.Scale), iArg(S), fArg(o.SoftCap),
			iArg(o.Window), iArg(bidirT), pArg(sp))
	}
}

// Embedding: the ids go up, one block per token gathers its row.
func (b *Backend) Embedding(out, table *tensor.Tensor, ids []int32) {
	if len(ids) == 0 {
		return
	}
	defer b.enter()()
	tp, op := b.in(table), b.out(out)
	ip, c := b.take(4 * len(ids))
	defer b.give(ip, c)
	b.upload(ip, unsafe.Slice((*byte)(unsafe.Pointer(&ids[0])), 4*len(ids)))
	D, T := table.Dim(1), len(ids)
	switch table.DType() {
	case tensor.F32:
		b.launch("toy_embed_f32", T, 1, 256, pArg(op), pArg(tp), pArg(ip), iArg(D))
	case tensor.F16, tensor.BF16:
		b.launch("toy_embed_half", T, 1, 256, pArg(op), pArg(tp), pArg(ip), iArg(D), bArg(table.DType() == tensor.BF16))
	case tensor.Q8_0:
		b.launch("toy_embed_q8", T, 1, 256, pArg(op), pArg(tp), pArg(ip), iArg(D))
	case tensor.Q4_0, tensor.Q5_0, tensor.Q4_1, tensor.Q5_1, tensor.Q2_K, tensor.Q3_K, tensor.Q4_K, tensor.Q5_K, tensor.Q6_K,
		tensor.IQ4_NL, tensor.IQ4_XS, tensor.MXFP4:
		rowBytes, _ := table.DType().RowBytes(D)
		b.launch("toy_embed_quant", T, 1, 256, pArg(op), pArg(tp), pArg(ip), iArg(D), iArg(rowBytes), iArg(int(table.DType())))
	default:
		panic(fmt.Sprintf("cuda Embedding: table type %v is not supported", table.DType()))
	}
}

// SetRows copies src into rows [at, at+n) of dst on the device.
func (b *Backend) SetRows(dst *tensor.Tensor, at int, src *tensor.Tensor) {
	if src.Len() == 0 {
		return
	}
	defer b.enter()()
	sp := b.in(src)
	b.in(dst) // the rest of dst must be on the device too
	dp := b.out(dst)
	b.must(b.l.call("cuMemcpyDtoDAsync", b.l.cu.memcpyDtoDAsync, dp+uintptr(4*at*dst.Cols()), sp, uintptr(4*src.Len()), b.stream))
}

// Columns copies columns [from, from+out.Cols()) of x (splitting fused
// projections on the device).
func (b *Backend) Columns(out, x *tensor.Tensor, from int) {
	if out.Len() == 0 {
		return
	}
	defer b.enter()()
	xp, op := b.in(x), b.out(out)
	b.elementwise("toy_columns", out.Len(), pArg(op), pArg(xp), iArg(x.Rows()), iArg(x.Cols()), iArg(from), iArg(out.Cols()))
}

// PlaceColumns copies src [R, n] into columns [at, at+n) of out (joining
// per-head results, tensor.ConcatColumns) on the device.
func (b *Backend) PlaceColumns(out, src *tensor.Tensor, at int) {
	if src.Len() == 0 {
		return
	}
	defer b.enter()()
	sp, op := b.in(src), b.out(out)
	b.elementwise("toy_place_columns", src.Len(), pArg(op), pArg(sp), iArg(src.Rows()), iArg(src.Cols()), iArg(at), iArg(out.Cols()))
}

// ScatterAdd copies dst into out, then adds scale[j]·src[j] to row ids[j] of
// out (a mixture of experts' combine, on the device): the ids go up, one
// thread per column adds the rows in order.
func (b *Backend) ScatterAdd(out, dst, src *tensor.Tensor, ids []int32, scale *tensor.Tensor) {
	if out.Len() == 0 {
		return
	}
	defer b.enter()()
	dp, op := b.in(dst), b.out(out)
	b.must(b.l.call("cuMemcpyDtoDAsync", b.l.cu.memcpyDtoDAsync, op, dp, uintptr(4*out.Len()), b.stream))
	if len(ids) == 0 {
		return
	}
	sp, cp := b.in(src), b.in(scale)
	ip, c := b.take(4 * len(ids))
	defer b.give(ip, c)
	b.upload(ip, unsafe.Slice((*byte)(unsafe.Pointer(&ids[0])), 4*len(ids)))
	C := out.Cols()
	b.launch("toy_scatter_add", (C+255)/256, 1, 256, pArg(op), pArg(sp), pArg(ip), pArg(cp), iArg(len(ids)), iArg(C))
}
