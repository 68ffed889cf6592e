// The native CPU backend: tensor.Backend over the C kernels.

package cpu

import (
	"math"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/toyml/toy/toy/tensor"
	"github.com/toyml/toy/toy/tensor/quant"
)

// Backend runs ops on host memory with the C kernels of one library variant
// (MatMul, RMSNorm, SiLU, SwiGLU, Attention, and the fused gated delta
// rule), and every other primitive as the tensor.Go it embeds (Add, Mul,
// Scale, LayerNorm, RoPE, Softmax, GELU, Tanh, Embedding, SetRows, …, and
// products with BF16 weights).
type Backend struct {
	tensor.Go
	lib *library
	ks  *kernelSet // lib.fast, or lib.ref for the reference backend in tests
	fma bool       // F32/F16 prefill products may use the fused kernels (see Fused)
}

// taped is set by the first MatMul that runs while a tape records: from then
// on this process trains, and every F32/F16 product, forward and backward
// (the backward pass runs with no tape active), takes the bit-identical
// kernels. See "Numerics" in doc.go.
var taped atomic.Bool

var (
	_ tensor.Backend              = (*Backend)(nil)
	_ tensor.GatedDeltaNetBackend = (*Backend)(nil)
)

// Load returns the backend for the best variant this CPU supports (or the
// one TOY_CPU_VARIANT names). It fails with a *kernels.NativeCallError.
func Load() (*Backend, error) {
	name, err := bestVariant()
	if err != nil {
		return nil, err
	}
	return LoadVariant(name)
}

// LoadVariant returns the backend for the named variant ("avx512", "avx2",
// "neon", …; see Variants). The CPU must support it.
func LoadVariant(name string) (*Backend, error) {
	lib, err := loadLibrary(name)
	if err != nil {
		return nil, err
	}
	return &Backend{lib: lib, ks: &lib.fast, fma: os.Getenv("TOY_FMA") == "1"}, nil
}

// Variants returns the variants this CPU can run, best first.
func Variants() []string {
	var names []string
	for _, v := range variants() {
		if v.ok {
			names = append(names, v.name)
		}
	}
	return names
}

// Name returns "native".
func (b *Backend) Name() string { return "native" }

// Variant is the instruction-set variant of the loaded library.
func (b *Backend) Variant() string { return b.lib.variant }

// Path is where the library was written and loaded from.
func (b *Backend) Path() string { return b.lib.path }

// reference returns a backend that calls the plain C reference kernels.
func (b *Backend) reference() *Backend { return &Backend{lib: b.lib, ks: &b.lib.ref, fma: b.fma} }

// Exact returns a backend on the same library that never uses the fused
// multiply-add kernels: every F32 and F16 product is bit-identical to
// tensor.Go{}. It is the default (Load, LoadVariant) unless TOY_FMA=1.
func (b *Backend) Exact() *Backend { return &Backend{lib: b.lib, ks: b.ks} }

// Fused returns a backend on the same library whose F32/F16 prefill
// products use the fused multiply-add kernels (about 1.7× the exact ones'
// speed, within float32 rounding of tensor.Go{}; see doc.go) until a tape
// records. TOY_FMA=1 makes Load return such a backend.
func (b *Backend) Fused() *Backend { return &Backend{lib: b.lib, ks: b.ks, fma: true} }

// fused reports whether F32/F16 products may take the fused multiply-add
// kernels: only on a Fused backend, and never again once a tape has
// recorded a MatMul in this process.
func (b *Backend) fused() bool {
	if tensor.Recording() {
		taped.Store(true)
	}
	return b.fma && !taped.Load()
}

func ptr[T any](s []T) uintptr {
	if len(s) == 0 {
		return 0
	}
	return uintptr(unsafe.Pointer(&s[0]))
}

func u(n int) uintptr { return uintptr(n) }

func f32bits(f float32) uintptr { return uintptr(math.Float32bits(f)) }

// scratch buffers for converted activations, reused across calls.
var (
	f32Scratch  sync.Pool // *[]float32
	byteScratch sync.Pool // *[]byte
	i32Scratch  sync.Pool // *[]int32: Q8_0 block sums
)

func getI32(n int) *[]int32 {
	if p, ok := i32Scratch.Get().(*[]int32); ok && cap(*p) >= n {
		*p = (*p)[:n]
		return p
	}
	s := make([]int32, n)
	return &s
}

func getF32(n int) *[]float32 {
	if p, ok := f32Scratch.Get().(*[]float32); ok && cap(*p) >= n {
		*p = (*p)[:n]
		return p
	}
	s := make([]float32, n)
	return &s
}

func getBytes(n int) *[]byte {
	if p, ok := byteScratch.Get().(*[]byte); ok && cap(*p) >= n {
		*p = (*p)[:n]
		return p
	}
	s := make([]byte, n)
	return &s
}

// MatMul computes out[M, N] = x[M, K]·w[N, K]ᵀ, splitting the rows of w
// across the workers. F16 weights take fp16-rounded activations, Q8_0, Q4_0,
// Q5_0, IQ4_NL and MXFP4 weights Q8_0-quantized ones, Q4_1 and Q5_1
// weights Q8_1 ones and the k-quants (Q2_K … Q6_K) and IQ4_XS Q8_K ones, as
// tensor.Go{} does. On a Fused backend, F32 and F16 products of
// toy_pack_threshold() rows or more use fused multiply-adds until a tape
// records (see doc.go).
func (b *Backend) MatMul(out, x, w *tensor.Tensor) {
	fused := b.fused() // first: a recorded product of any weight type marks the process as training
	M, K, N := x.Rows(), x.Cols(), w.Dim(0)
	if M == 0 || N == 0 || K == 0 {
		tensor.Go{}.MatMul(out, x, w)
		return
	}
	o, xs := out.Data(), x.Data()
	switch w.DType() {
	case tensor.F32, tensor.F16:
		var fn, ws uintptr
		switch {
		case w.DType() == tensor.F32 && fused:
			fn, ws = b.ks.matmulF32FMA, ptr(w.Data())
		case w.DType() == tensor.F32:
			fn, ws = b.ks.matmulF32, ptr(w.Data())
		case fused:
			fn, ws = b.ks.matmulF16FMA, ptr(w.Bytes())
		default:
			fn, ws = b.ks.matmulF16, ptr(w.Bytes())
		}
		xv := xs
		if w.DType() == tensor.F16 {
			xr := getF32(M * K)
			defer f32Scratch.Put(xr)
			call(b.ks.roundF16, ptr(*xr), ptr(xs), u(M*K))
			xv = *xr
		}
		if M >= b.ks.packMin {
			xp := getF32((M + 15) / 16 * 16 * K)
			defer f32Scratch.Put(xp)
			// Blocks of 16 rows pack independently (toy_pack_x's layout).
			xvp, xpp := xv, *xp
			workers.run(M, split(M, 16, 16), func(lo, hi int) {
				call(b.ks.packX, ptr(xpp[lo*K:]), ptr(xvp[lo*K:]), u(hi-lo), u(K))
			})
			xv = *xp
		}
		op, xvp := ptr(o), ptr(xv)
		workers.run(N, split(N, 16, 16), func(lo, hi int) {
			// x repacked for a few rows, or NB F16 rows widened for the C
			// gemm (f32.c); the F32 decode GEMV needs none
			var scratch *[]float32
			switch {
			case M == 1 && w.DType() == tensor.F32:
			case M < b.ks.packMin:
				scratch = getF32(16 * K)
			case w.DType() == tensor.F16:
				scratch = getF32(64 * K)
			}
			var sp uintptr
			if scratch != nil {
				sp = ptr(*scratch)
			}
			call(fn, op, xvp, ws, u(M), u(K), u(N), u(lo), u(hi), sp)
			if scratch != nil {
				f32Scratch.Put(scratch)
			}
		})
		runtime.KeepAlive(xv)
		runtime.KeepAlive(w)
	case tensor.Q8_0:
		nb := K / quant.Q8BlockSize
		rb := nb * quant.Q8BlockLen
		xq := getBytes(M * rb)
		// From 2 rows on the kernel may use weight tiles repacked so that a
		// lane holds a row (AVX-512 and AVX-VNNI from 2 rows, AVX2 from 3);
		// it needs the block sums of x and a tile's worth of scratch (see
		// q8.c). The workers that quantize the rows of x sum their blocks too.
		var xsum []int32
		var xsumBuf *[]int32
		if M >= 2 {
			xsumBuf = getI32(M * nb)
			defer i32Scratch.Put(xsumBuf)
			xsum = *xsumBuf
		}
		workers.run(M, split(M, 1, 8), func(lo, hi int) {
			call(b.ks.quantizeQ8, ptr((*xq)[lo*rb:]), ptr(xs[lo*K:]), u((hi-lo)*nb))
			if xsum != nil {
				call(b.ks.q8XSum, ptr(xsum[lo*nb:]), ptr((*xq)[lo*rb:]), u((hi-lo)*nb))
			}
		})
		scratchLen := 0
		if xsum != nil {
			scratchLen = nb * 576
		}
		ws := w.Bytes()
		matmulRows(b.ks.matmulQ8, ptr(o), ptr(*xq), ptr(ws), M, K, N, ptr(xsum), scratchLen)
		runtime.KeepAlive(ws)
		runtime.KeepAlive(xsum)
		byteScratch.Put(xq)
	case tensor.Q4_K, tensor.Q6_K, tensor.Q5_K, tensor.Q3_K, tensor.Q2_K, tensor.IQ4_XS:
		if K%quant.QK != 0 { // not a whole number of super-blocks: Go says what is wrong
			tensor.Go{}.MatMul(out, x, w)
			return
		}
		b.matmulKQuant(o, xs, w, M, K, N)
	case tensor.Q4_0, tensor.Q5_0, tensor.IQ4_NL, tensor.MXFP4:
		if K%quant.Q8BlockSize != 0 {
			tensor.Go{}.MatMul(out, x, w)
			return
		}
		b.matmulQ45(o, xs, w, M, K, N)
	case tensor.Q4_1, tensor.Q5_1:
		if K%32 != 0 {
			tensor.Go{}.MatMul(out, x, w)
			return
		}
		b.matmulQ41(o, xs, w, M, K, N)
	default:
		tensor.Go{}.MatMul(out, x, w)
	}
	runtime.KeepAlive(xs)
	runtime.KeepAlive(o)
}

// matmulRows runs a quantized matmul kernel fn(out, xq, w, M, K, N, lo, hi,
// xsum, scratch) over the rows of w, split across the workers; each chunk
// gets scratchLen bytes of scratch (none when 0) for the kernels that repack
// weight tiles. The caller keeps the memory behind the pointers alive.
func matmulRows(fn, out, xq, w uintptr, M, K, N int, xsum uintptr, scratchLen int) {
	workers.run(N, split(N, 16, 16), func(lo, hi int) {
		var sp uintptr
		var scratch *[]byte
		if scratchLen > 0 {
			scratch = getBytes(scratchLen)
			sp = ptr(*scratch)
		}
		call(fn, out, xq, w, u(M), u(K), u(N), u(lo), u(hi), xsum, sp)
		if scratch != nil {
			byteScratch.Put(scratch)
		}
	})
}

// q8KBytes is one block of 256 activations quantized for the k-quant
// kernels (kq.c): int8 q[256], the int16 sums of each 16, float32 d, padding.
const q8KBytes = 320

// align64 returns b from its first 64-byte aligned element on (callers
// allot 64 bytes more).
func align64(b []byte) []byte {
	return b[(64-uintptr(unsafe.Pointer(&b[0]))%64)%64:]
}

// matmulKQuant: the k-quant weights. The workers quantize the rows of x to
// Q8_K (as tensor.Go{} does, bit for bit), then split the rows of w; from
// two activation rows on each chunk gets scratch for the prefill kernels,
// which repack tiles of weight rows (kq.c: Q4_K, Q6_K; kq2.c: Q5_K, Q3_K,
// Q2_K; iq4.c: IQ4_XS).
func (b *Backend) matmulKQuant(o, xs []float32, w *tensor.Tensor, M, K, N int) {
	nb := K / quant.QK
	rb := nb * q8KBytes
	xbuf := getBytes(M*rb + 64)
	defer byteScratch.Put(xbuf)
	xq := align64(*xbuf)[:M*rb]
	workers.run(M, split(M, 1, 8), func(lo, hi int) {
		call(b.ks.quantizeQ8K, ptr(xq[lo*rb:]), ptr(xs[lo*K:]), u((hi-lo)*nb))
	})
	var fn, scratch uintptr
	switch w.DType() {
	case tensor.Q4_K:
		fn, scratch = b.ks.matmulQ4K, b.ks.kqScratch
	case tensor.Q6_K:
		fn, scratch = b.ks.matmulQ6K, b.ks.kqScratch
	case tensor.Q5_K:
		fn, scratch = b.ks.matmulQ5K, b.ks.kq2Scratch
	case tensor.Q3_K:
		fn, scratch = b.ks.matmulQ3K, b.ks.kq2Scratch
	case tensor.Q2_K:
		fn, scratch = b.ks.matmulQ2K, b.ks.kq2Scratch
	case tensor.IQ4_XS:
		fn, scratch = b.ks.matmulIQ4XS, b.ks.iq4XSScratch
	}
	var scratchLen int
	if M > 1 {
		scratchLen = int(callRet(scratch, u(K)))
	}
	ws := w.Bytes()
	matmulRows(fn, ptr(o), ptr(xq), ptr(ws), M, K, N, 0, scratchLen)
	runtime.KeepAlive(ws)
	runtime.KeepAlive(xq)
	runtime.KeepAlive(xs)
	runtime.KeepAlive(o)
}

// matmulQ45: Q4_0, Q5_0, IQ4_NL and MXFP4 weights, against Q8_0
// activations and their block sums (the kernels multiply unsigned quants
// and subtract the offset times Σx); scratch for the prefill kernels as in
// matmulKQuant (q45.c, iq4.c).
func (b *Backend) matmulQ45(o, xs []float32, w *tensor.Tensor, M, K, N int) {
	nb := K / quant.Q8BlockSize
	rb := nb * quant.Q8BlockLen
	xq := getBytes(M * rb)
	defer byteScratch.Put(xq)
	xsumBuf := getI32(M * nb)
	defer i32Scratch.Put(xsumBuf)
	xqs, xsum := *xq, *xsumBuf
	workers.run(M, split(M, 1, 8), func(lo, hi int) {
		call(b.ks.quantizeQ8, ptr(xqs[lo*rb:]), ptr(xs[lo*K:]), u((hi-lo)*nb))
		call(b.ks.q8XSum, ptr(xsum[lo*nb:]), ptr(xqs[lo*rb:]), u((hi-lo)*nb))
	})
	fn, scratch := b.ks.matmulQ4_0, b.ks.q45Scratch
	switch w.DType() {
	case tensor.Q5_0:
		fn = b.ks.matmulQ5_0
	case tensor.IQ4_NL:
		fn, scratch = b.ks.matmulIQ4NL, b.ks.iq4NLScratch
	case tensor.MXFP4:
		fn, scratch = b.ks.matmulMXFP4, b.ks.mxfp4Scratch
	}
	var scratchLen int
	if M > 1 {
		scratchLen = int(callRet(scratch, u(K)))
	}
	ws := w.Bytes()
	matmulRows(fn, ptr(o), ptr(xqs), ptr(ws), M, K, N, ptr(xsum), scratchLen)
	runtime.KeepAlive(ws)
	runtime.KeepAlive(xqs)
	runtime.KeepAlive(xsum)
	runtime.KeepAlive(xs)
	runtime.KeepAlive(o)
}

// matmulQ41: Q4_1 and Q5_1 weights, against Q8_1 activations (q41.c);
// scratch for the prefill kernels as in matmulKQuant.
func (b *Backend) matmulQ41(o, xs []float32, w *tensor.Tensor, M, K, N int) {
	nb := K / 32
	rb := nb * q8_1Bytes
	xq := getBytes(M * rb)
	defer byteScratch.Put(xq)
	xqs := *xq
	workers.run(M, split(M, 1, 8), func(lo, hi int) {
		call(b.ks.quantizeQ8_1, ptr(xqs[lo*rb:]), ptr(xs[lo*K:]), u((hi-lo)*nb))
	})
	fn := b.ks.matmulQ4_1
	if w.DType() == tensor.Q5_1 {
		fn = b.ks.matmulQ5_1
	}
	var scratchLen int
	if M > 1 {
		scratchLen = int(callRet(b.ks.q41Scratch, u(K)))
	}
	ws := w.Bytes()
	matmulRows(fn, ptr(o), ptr(xqs), ptr(ws), M, K, N, 0, scratchLen)
	runtime.KeepAlive(ws)
	runtime.KeepAlive(xqs)
	runtime.KeepAlive(xs)
	runtime.KeepAlive(o)
}

// q8_1Bytes is one block of 32 activations quantized for Q4_1 and Q5_1
// (q41.c): fp16 d, fp16 s = d·Σq, int8 q[32].
const q8_1Bytes = 36

// RMSNorm normalises each row: out = x / sqrt(mean(x²) + eps) ⊙ w.
func (b *Backend) RMSNorm(out, x, w *tensor.Tensor, eps float32) {
	R, D := x.Rows(), x.Cols()
	if R == 0 || D == 0 {
		return
	}
	o, xs := out.Data(), x.Data()
	var ws []float32
	if w != nil {
		ws = w.Data()
	}
	workers.run(R, split(R, 1, 4), func(lo, hi int) {
		call(b.ks.rmsnorm, ptr(o), ptr(xs), ptr(ws), u(D), u(lo), u(hi), f32bits(eps))
	})
	runtime.KeepAlive(o)
	runtime.KeepAlive(xs)
	runtime.KeepAlive(ws)
}

// elementwise splits n elements into chunks of at least 4096: an
// exponential a element, so a batched decode step's SwiGLU (8 rows of 1536)
// is worth the two threads.
func elementwise(n int, fn func(lo, hi int)) { workers.run(n, split(n, 16, 1<<12), fn) }

// SiLU: out = x·σ(x).
func (b *Backend) SiLU(out, x *tensor.Tensor) {
	o, xs := out.Data(), x.Data()
	elementwise(len(o), func(lo, hi int) { call(b.ks.silu, ptr(o[lo:]), ptr(xs[lo:]), u(hi-lo)) })
	runtime.KeepAlive(o)
	runtime.KeepAlive(xs)
}

// drArgs is csrc's toy_dr_args.
type drArgs struct {
	T, D, QS, VS, GS int64
	Scale, _         uint32
}

// GatedDeltaNet implements tensor.GatedDeltaNetBackend, bit for bit as
// tensor.GatedDeltaNet's own loop: q and k normalised per head (l2Rows),
// the decays e^g in float64 rounded once, then each value head over the T
// tokens in C (toy_delta_rule), the heads split across the workers.
func (b *Backend) GatedDeltaNet(out, q, k, v, g, beta, state *tensor.Tensor, eps float32) {
	T, Hv := g.Rows(), g.Cols()
	if T == 0 {
		return
	}
	D := v.Cols() / Hv
	Hk := q.Cols() / D
	qn, kn := l2Rows(q.Data(), D, eps), l2Rows(k.Data(), D, eps) // [T, Hk·D]
	decay := make([]float32, T*Hv)
	for i, gv := range g.Data() {
		decay[i] = float32(math.Exp(float64(gv)))
	}
	var S []float32 // [Hv, D·D]
	if state != nil {
		S = state.Data()
	} else {
		S = make([]float32, Hv*D*D)
	}
	vs, bs, o := v.Data(), beta.Data(), out.Data()
	a := &drArgs{T: int64(T), D: int64(D), QS: int64(Hk * D), VS: int64(Hv * D), GS: int64(Hv),
		Scale: math.Float32bits(1 / float32(math.Sqrt(float64(D))))}
	workers.run(Hv, 1, func(lo, hi int) {
		u := make([]float32, D)
		for h := lo; h < hi; h++ {
			kh := h % Hk
			call(b.ks.deltaRule, ptr(S[h*D*D:]), ptr(qn[kh*D:]), ptr(kn[kh*D:]), ptr(vs[h*D:]), ptr(o[h*D:]), ptr(decay[h:]),
				ptr(bs[h:]), ptr(u), uintptr(unsafe.Pointer(a)))
		}
		runtime.KeepAlive(u)
	})
	runtime.KeepAlive(a)
	runtime.KeepAlive(S)
	runtime.KeepAlive(qn)
	runtime.KeepAlive(kn)
	runtime.KeepAlive(vs)
	runtime.KeepAlive(bs)
	runtime.KeepAlive(o)
	runtime.KeepAlive(decay)
}

// l2Rows returns x with each run of D values divided by max(‖x‖, eps), as
// tensor's gated delta rule normalises q and k (ggml_l2_norm): the sum of
// squares in float64, the scale in float32.
func l2Rows(x []float32, D int, eps float32) []float32 {
	y := make([]float32, len(x))
	for r := 0; r < len(x); r += D {
		var sum float64
		for _, v := range x[r : r+D] {
			sum += float64(v * v)
		}
		s := 1 / max(float32(math.Sqrt(float64(float32(sum)))), eps)
		for i, v := range x[r : r+D] {
			y[r+i] = v * s
		}
	}
	return y
}

// SwiGLU: out = SiLU(gate) ⊙ up.
func (b *Backend) SwiGLU(out, gate, up *tensor.Tensor) {
	o, g, us := out.Data(), gate.Data(), up.Data()
	elementwise(len(o), func(lo, hi int) { call(b.ks.swiglu, ptr(o[lo:]), ptr(g[lo:]), ptr(us[lo:]), u(hi-lo)) })
	runtime.KeepAlive(o)
	runtime.KeepAlive(g)
	runtime.KeepAlive(us)
}

// attnArgs mirrors toy_attn_args (ops.c): the attention kernel's shape and
// options, passed by pointer (purego passes at most 15 arguments).
type attnArgs struct {
	h, kv, dh      int64    // query heads, KV heads, head size
	past           int64    // positions before the first query
	bidirT         int64    // T for bidirectional attention, else 0
	window         int64    // sliding window, 0 for none
	scale, softCap float32  // score scale; soft cap, 0 for none
	sinks          *float32 // one sink logit per query head [H], or nil
}

// Attention: attention of q [T, H·Dh] over k, v [S, KV·Dh] with o's scores,
// mask and sinks, one job per (token, head), jobs split across the workers.
//
// The kernel knows no chunks (o.Chunk, Llama 4): the queries of one chunk
// see the keys from the chunk's first position on, so each run of queries
// within a chunk is causal attention over k and v from that row, at the
// position past+t0 − c0. Bidirectional chunks take the Go path.
func (b *Backend) Attention(out, q, k, v *tensor.Tensor, nHead, nKV, past int, o tensor.AttentionOptions) {
	T := q.Rows()
	if T == 0 {
		return
	}
	od, qs, ks, vs := out.Data(), q.Data(), k.Data(), v.Data()
	if o.Chunk <= 0 {
		b.attention(od, qs, ks, vs, T, nHead, nKV, q.Cols()/nHead, past, o)
		return
	}
	if o.Bidirectional {
		tensor.Go{}.Attention(out, q, k, v, nHead, nKV, past, o)
		return
	}
	qc, kc, chunk := q.Cols(), k.Cols(), o.Chunk
	o.Chunk = 0
	for t0 := 0; t0 < T; {
		c0 := (past + t0) / chunk * chunk // the first position of query t0's chunk
		t1 := min(T, c0+chunk-past)       // the queries up to the chunk's end
		b.attention(od[t0*qc:t1*qc], qs[t0*qc:t1*qc], ks[c0*kc:], vs[c0*kc:], t1-t0, nHead, nKV, qc/nHead, past+t0-c0, o)
		t0 = t1
	}
}

// attention runs the kernel on the T queries of qs [T, H·Dh], at positions
// past, past+1, …, over the rows of ks and vs (position 0 their first).
func (b *Backend) attention(od, qs, ks, vs []float32, T, nHead, nKV, dh, past int, o tensor.AttentionOptions) {
	a := &attnArgs{h: int64(nHead), kv: int64(nKV), dh: int64(dh), past: int64(past), window: int64(o.Window),
		scale: o.Scale, softCap: o.SoftCap}
	if o.Bidirectional {
		a.bidirT = int64(T)
	}
	var sinks []float32
	if o.Sinks != nil {
		sinks = o.Sinks.Data() // [H]
		a.sinks = &sinks[0]
	}
	// Chunks of whole KV groups: the kernel runs a group's heads together.
	jobs, group := T*nHead, nHead/nKV
	workers.run(jobs, split(jobs, group, group), func(lo, hi int) {
		scratch := getF32(4 * (past + T + 16)) // four heads' scores, padded to 16 keys
		call(b.ks.attention, ptr(od), ptr(qs), ptr(ks), ptr(vs), uintptr(unsafe.Pointer(a)), u(lo), u(hi), ptr(*scratch))
		f32Scratch.Put(scratch)
	})
	runtime.KeepAlive(a)
	runtime.KeepAlive(sinks)
	runtime.KeepAlive(od)
	runtime.KeepAlive(qs)
	runtime.KeepAlive(ks)
	runtime.KeepAlive(vs)
}
