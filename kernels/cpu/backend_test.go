// Every kernel against the pure-Go backend (and the C references), on every
// variant this CPU can run, over random shapes including odd and tiny ones.

package cpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/toyml/toy/toy/tensor"
	"github.com/toyml/toy/toy/tensor/quant"
)

// backends returns the fast and reference backends of every variant this
// CPU runs; it skips the test where no library loads.
func backends(t *testing.T) map[string]*Backend {
	t.Helper()
	out := map[string]*Backend{}
	for _, v := range Variants() {
		b, err := LoadVariant(v)
		if err != nil {
			t.Fatalf("load %s: %v", v, err)
		}
		out[v] = b
		out[v+"-ref"] = b.reference()
	}
	if len(out) == 0 {
		t.Skip("no native kernels on this platform")
	}
	t.Logf("variants: %v", Variants())
	return out
}

func randTensor(r *rand.Rand, shape ...int) *tensor.Tensor {
	x := tensor.New(shape...)
	for i := range x.Data() {
		x.Data()[i] = float32(r.NormFloat64())
	}
	return x
}

func encode(t testing.TB, x *tensor.Tensor, dt tensor.DType) *tensor.Tensor {
	w, err := tensor.FromBytes(dt, tensor.EncodeRow(nil, x.Data(), dt), x.Shape()...)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func identical(got, want []float32) (int, bool) {
	for i := range want {
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
			return i, false
		}
	}
	return 0, true
}

var matmulShapes = [][3]int{ // M, K, N
	{1, 32, 1}, {1, 64, 3}, {2, 32, 17}, {3, 96, 16}, {1, 576, 576}, {5, 160, 33}, {7, 64, 100},
	{17, 128, 50}, {64, 576, 192}, {1, 1536, 576}, {33, 32, 31}, {128, 576, 64},
	{1, 64, 6}, {1, 160, 130}, {2, 64, 9}, // decode: four-row passes over quarters, and the rows left over
	// a few rows (f32.c's small tiles): every group count, odd N, and a K
	// K + 1 and K + 7 (below) leave tails
	{4, 96, 13}, {6, 128, 9}, {8, 32, 70}, {9, 160, 5}, {11, 64, 7}, {10, 64, 21}, {12, 96, 66}, {15, 192, 3}, {16, 64, 9},
}

// TestMatMul: on an Exact backend every weight type keeps the Go summation
// order, so the products are bit-identical to tensor.Go{}.
func TestMatMul(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for name, b := range backends(t) {
		b = b.Exact()
		for _, dt := range []tensor.DType{tensor.F32, tensor.F16, tensor.Q8_0, tensor.BF16} {
			for _, s := range matmulShapes {
				M, K, N := s[0], s[1], s[2]
				for _, odd := range []int{0, 1, 7} { // F32 and F16 also at K not a multiple of 32
					if odd != 0 && (dt == tensor.Q8_0 || K > 200) {
						continue
					}
					k := K + odd
					x, wf := randTensor(r, M, k), randTensor(r, N, k)
					w := encode(t, wf, dt)
					want, got := tensor.New(M, N), tensor.New(M, N)
					tensor.Go{}.MatMul(want, x, w)
					b.MatMul(got, x, w)
					if i, ok := identical(got.Data(), want.Data()); !ok {
						t.Fatalf("%s %v [%d %d]·[%d %d]ᵀ: element %d = %v, Go %v (want bit-identical)",
							name, dt, M, k, N, k, i, got.Data()[i], want.Data()[i])
					}
				}
			}
		}
	}
}

// fusedShapes adds random shapes, odd and tiny ones among them, to
// matmulShapes (M, K, N).
func fusedShapes(r *rand.Rand) [][3]int {
	s := append([][3]int{{16, 1, 1}, {9, 3, 13}, {40, 7, 25}, {31, 1536, 13}, {32, 33, 12}, {65, 100, 61}}, matmulShapes...)
	for range 20 {
		s = append(s, [3]int{1 + r.IntN(70), 1 + r.IntN(300), 1 + r.IntN(80)})
	}
	return s
}

// fusedTol is how far a fused product may be from the Go one: 1e-5 of it,
// plus 4·2⁻²⁴·Σ|x_k·w_k| for the cancellation of a sum whose terms are much
// larger than its result. Each order rounds K times; both errors are sums of
// K roundings of partial sums no larger than Σ|x_k·w_k|, and for random signs
// they add up to a few units of 2⁻²⁴·Σ|x_k·w_k| (the test reports the
// largest multiple it saw).
func fusedTol(want float32, absSum float64) float64 {
	return 1e-5*math.Abs(float64(want)) + 4*0x1p-24*absSum
}

// absSums returns Σ_k |x[m,k]·w[n,k]| for each output, with x rounded to
// fp16 for F16 weights as the products do.
func absSums(x, w *tensor.Tensor) []float64 {
	M, K, N := x.Rows(), x.Cols(), w.Dim(0)
	wf := w.Float32s()
	out := make([]float64, M*N)
	for m := range M {
		for n := range N {
			var s float64
			for k := range K {
				xv := x.Data()[m*K+k]
				if w.DType() == tensor.F16 {
					xv = quant.RoundFP16(xv)
				}
				s += math.Abs(float64(xv) * float64(wf[n*K+k]))
			}
			out[m*N+n] = s
		}
	}
	return out
}

// TestMatMulFused: the fused multiply-add kernels (inference) against their
// plain C reference bit for bit (both add the products one by one in k order,
// each with one rounding) and against tensor.Go{} within fusedTol.
func TestMatMulFused(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	shapes := fusedShapes(r)
	worst := 0.0 // the largest |fused − Go| / (2⁻²⁴·Σ|x·w|) seen
	for name, b := range backends(t) {
		b = b.Fused()
		for _, dt := range []tensor.DType{tensor.F32, tensor.F16} {
			for _, s := range shapes {
				M, K, N := s[0], s[1], s[2]
				x, w := randTensor(r, M, K), encode(t, randTensor(r, N, K), dt)
				want, got := tensor.New(M, N), tensor.New(M, N)
				tensor.Go{}.MatMul(want, x, w)
				b.MatMul(got, x, w)
				sums := absSums(x, w)
				for i, wv := range want.Data() {
					d := math.Abs(float64(got.Data()[i]) - float64(wv))
					if sums[i] > 0 {
						worst = max(worst, d/(0x1p-24*sums[i]))
					}
					if d > fusedTol(wv, sums[i]) || math.IsNaN(float64(got.Data()[i])) {
						t.Fatalf("%s %v [%d %d]·[%d %d]ᵀ: element %d = %v, Go %v (Σ|x·w| = %v, tolerance %.3g)",
							name, dt, M, K, N, K, i, got.Data()[i], wv, sums[i], fusedTol(wv, sums[i]))
					}
				}
				if !strings.HasSuffix(name, "-ref") && M >= b.ks.packMin {
					ref := tensor.New(M, N)
					b.reference().MatMul(ref, x, w)
					if i, ok := identical(got.Data(), ref.Data()); !ok {
						t.Fatalf("%s %v [%d %d]·[%d %d]ᵀ: element %d = %v, C reference %v (want bit-identical)",
							name, dt, M, K, N, K, i, got.Data()[i], ref.Data()[i])
					}
				}
				if !strings.HasSuffix(name, "-ref") && M < b.ks.packMin { // the decode GEMV is not fused
					if i, ok := identical(got.Data(), want.Data()); !ok {
						t.Fatalf("%s %v [%d %d]·[%d %d]ᵀ: element %d = %v, Go %v (want bit-identical below %d rows)",
							name, dt, M, K, N, K, i, got.Data()[i], want.Data()[i], b.ks.packMin)
					}
				}
			}
		}
	}
	t.Logf("largest |fused − Go| = %.2f·2⁻²⁴·Σ|x·w| (allowed: 4 of these plus 1e-5·|Go|)", worst)
}

// TestMatMulTapeExact: once a tape records, the native backend's products
// forward and backward (Backward runs with no tape active) are those of
// tensor.Go{} bit for bit, so that training does not depend on the backend.
func TestMatMulTapeExact(t *testing.T) {
	b := backends(t)[Variants()[0]].Fused()
	defer taped.Store(taped.Load())
	taped.Store(false)
	run := func(be tensor.Backend) (y, dx, dw []float32) {
		old := tensor.ActiveBackend()
		tensor.SetBackend(be)
		defer tensor.SetBackend(old)
		r := rand.New(rand.NewPCG(25, 26))
		x := randTensor(r, 37, 96).SetRequiresGrad(true)
		w := randTensor(r, 50, 96).SetRequiresGrad(true)
		v := randTensor(r, 20, 50)
		tape := tensor.NewTape()
		tensor.Record(tape)
		h := tensor.MatMul(x, w)               // [37, 50]
		out := tensor.Sum(tensor.MatMul(h, v)) // [37, 20] → [1]
		tensor.Record(nil)
		tape.Backward(out)
		return h.Data(), x.Grad().Data(), w.Grad().Data()
	}
	gy, gdx, gdw := run(tensor.Go{})
	ny, ndx, ndw := run(b)
	for _, c := range []struct {
		name      string
		got, want []float32
	}{{"forward", ny, gy}, {"dx", ndx, gdx}, {"dw", ndw, gdw}} {
		if i, ok := identical(c.got, c.want); !ok {
			t.Errorf("%s: element %d = %v, Go %v (want bit-identical while training)", c.name, i, c.got[i], c.want[i])
		}
	}
	if !taped.Load() {
		t.Error("a MatMul ran under a tape and the backend did not switch to the exact kernels")
	}
}

// TestQuantizeQ8MatchesGo checks the C quantizer byte for byte, including
// ties: a block with amax 127 scales by exactly 1, so k+0.5 rounds to even.
func TestQuantizeQ8MatchesGo(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	x := make([]float32, 32*50)
	for i := range x {
		x[i] = float32(r.NormFloat64() * math.Pow(10, float64(i/32%7-3)))
	}
	for i := 0; i < 32; i++ { // block 0: ties
		x[i] = float32(i%8) - 3.5
	}
	x[31] = 127
	for i := 32; i < 64; i++ { // block 1: all zero
		x[i] = 0
	}
	want := quant.QuantizeQ8_0(nil, x)
	for name, b := range backends(t) {
		got := make([]byte, len(want))
		call(b.ks.quantizeQ8, ptr(got), ptr(x), u(len(x)/32))
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("%s: byte %d (block %d) = %d, Go %d", name, i, i/34, got[i], want[i])
			}
		}
	}
}

func TestRowOps(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for name, b := range backends(t) {
		for _, s := range [][2]int{{1, 1}, {1, 7}, {3, 64}, {5, 576}, {130, 33}, {2, 1536}} {
			R, D := s[0], s[1]
			x, w := randTensor(r, R, D), randTensor(r, D)
			x.Data()[0] *= 40 // reach far into exp's range
			check := func(op string, got, want *tensor.Tensor) {
				t.Helper()
				if i, ok := identical(got.Data(), want.Data()); !ok {
					t.Fatalf("%s %s [%d %d]: element %d = %v, Go %v", name, op, R, D, i, got.Data()[i], want.Data()[i])
				}
			}
			for _, wt := range []*tensor.Tensor{nil, w} {
				got, want := tensor.New(R, D), tensor.New(R, D)
				b.RMSNorm(got, x, wt, 1e-5)
				tensor.Go{}.RMSNorm(want, x, wt, 1e-5)
				if i, ok := identical(got.Data(), want.Data()); !ok { // same arithmetic, same order
					t.Fatalf("%s RMSNorm [%d %d]: element %d = %v, Go %v", name, R, D, i, got.Data()[i], want.Data()[i])
				}
			}
			got, want := tensor.New(R, D), tensor.New(R, D)
			b.SiLU(got, x)
			tensor.Go{}.SiLU(want, x)
			check("SiLU", got, want)
			up := randTensor(r, R, D)
			b.SwiGLU(got, x, up)
			tensor.Go{}.SwiGLU(want, x, up)
			check("SwiGLU", got, want)
		}
	}
}

func TestSiLUExtremes(t *testing.T) {
	x := tensor.FromFloat32([]float32{-200, -100, -88, -87, -20, -1e-8, 0, 1e-8, 3, 20, 87, 88, 89, 100, 1e30}, 15)
	for name, b := range backends(t) {
		got, want := tensor.New(15), tensor.New(15)
		b.SiLU(got, x)
		tensor.Go{}.SiLU(want, x)
		for i := range want.Data() {
			g, w := float64(got.Data()[i]), float64(want.Data()[i])
			if math.Float64bits(g) != math.Float64bits(w) {
				t.Errorf("%s: SiLU(%v) = %v, Go %v", name, x.Data()[i], g, w)
			}
		}
	}
}

func TestAttention(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for name, b := range backends(t) {
		for _, c := range []struct {
			T, past, H, KV, Dh int
			cap                float32
			window             int
			bidir              bool
			wide               bool // scores spread over hundreds: terms below 2⁻¹²⁶, flushed to 0
		}{
			{1, 0, 1, 1, 1, 0, 0, false, false}, {1, 5, 4, 2, 8, 0, 0, false, false}, {3, 0, 2, 2, 16, 0, 0, false, false},
			{7, 9, 9, 3, 64, 0, 0, false, false}, {16, 0, 4, 1, 33, 0, 0, false, false}, {1, 200, 9, 3, 64, 0, 0, false, false},
			// Gemma 2: soft-capped scores (a small cap, so tanh saturates), sliding windows
			{7, 9, 4, 2, 16, 0.5, 0, false, false}, {5, 3, 4, 2, 16, 50, 4, false, false}, {1, 200, 4, 2, 32, 3, 16, false, false},
			{9, 0, 2, 1, 8, 0, 1, false, false},
			// encoders: every query sees every key
			{6, 0, 3, 3, 8, 0, 0, true, false}, {4, 3, 2, 1, 8, 1, 0, true, false},
			{1, 200, 9, 3, 64, 0, 0, false, true}, {7, 9, 9, 3, 64, 0, 0, false, true}, {16, 0, 4, 1, 33, 0, 0, false, true},
			{5, 3, 4, 2, 16, 50, 4, false, true},
		} {
			S := c.past + c.T + 2 // extra rows the kernel must not read as keys
			q := randTensor(r, c.T, c.H*c.Dh)
			k, v := randTensor(r, S, c.KV*c.Dh), randTensor(r, S, c.KV*c.Dh)
			o := tensor.AttentionOptions{Scale: float32(1 / math.Sqrt(float64(c.Dh))), SoftCap: c.cap, Window: c.window, Bidirectional: c.bidir}
			if c.cap > 0 {
				o.Scale *= 4 // scores well into tanh's curve
			}
			if c.wide {
				o.Scale *= 50
			}
			got, want := tensor.New(c.T, c.H*c.Dh), tensor.New(c.T, c.H*c.Dh)
			b.Attention(got, q, k.Slice(0, c.past+c.T), v.Slice(0, c.past+c.T), c.H, c.KV, c.past, o)
			tensor.Go{}.Attention(want, q, k.Slice(0, c.past+c.T), v.Slice(0, c.past+c.T), c.H, c.KV, c.past, o)
			if i, ok := identical(got.Data(), want.Data()); !ok {
				t.Fatalf("%s attention %+v: element %d = %v, Go %v", name, c, i, got.Data()[i], want.Data()[i])
			}
		}
	}
}

// TestAttentionFlushesDenormals: a softmax term below 2⁻¹²⁶ is 0 in the
// kernels as in Go (tensor's softmaxExp). One query over three keys with
// scores 0, −95 and −80 and values 1, 2^127 and 0 gives exactly 1; were the
// second weight (e^-95 ≈ 5.5e-42) kept as a denormal, about 9e-4 more. With
// a head width of 16 the AVX-512 kernel runs it too.
func TestAttentionFlushesDenormals(t *testing.T) {
	for name, b := range backends(t) {
		for _, dh := range []int{1, 16} {
			q, k, v := tensor.New(1, dh), tensor.New(3, dh), tensor.New(3, dh)
			q.Data()[0] = 1
			for s, score := range []float32{0, -95, -80} {
				k.Data()[s*dh] = score
				v.Data()[s*dh] = []float32{1, 0x1p127, 0}[s]
			}
			out := tensor.New(1, dh)
			b.Attention(out, q, k, v, 1, 1, 2, tensor.AttentionOptions{Scale: 1})
			if o := out.Data()[0]; o != 1 {
				t.Errorf("%s, head width %d: attention over scores [0, -95, -80] gives %v, want 1", name, dh, o)
			}
		}
	}
}

// TestAttentionSinks: gpt-oss's attention sinks, one logit per query head
// that joins each softmax as a key with no value, so a query's
// probabilities sum to e^{Σ}/(e^{Σ} + e^{sink}) < 1. Native against pure Go,
// bit for bit, over GQA, sliding windows, decode and prefill with and
// without a past; each case also checks that the sinks change Go's result,
// so a kernel that ignored them would fail.
func TestAttentionSinks(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for name, b := range backends(t) {
		for _, c := range []struct {
			T, past, H, KV, Dh int
			window             int
		}{
			{1, 0, 1, 1, 1, 0}, {1, 5, 4, 2, 8, 0}, {3, 0, 2, 2, 16, 0}, {7, 9, 8, 2, 64, 0},
			{16, 0, 4, 1, 33, 0}, {1, 200, 8, 1, 64, 0}, {5, 3, 4, 2, 16, 4}, {1, 200, 16, 2, 64, 128},
			{12, 40, 8, 4, 32, 8}, {9, 0, 2, 1, 8, 1}, {33, 17, 16, 2, 64, 16},
		} {
			S := c.past + c.T + 2 // extra rows the kernel must not read as keys
			q := randTensor(r, c.T, c.H*c.Dh)
			k, v := randTensor(r, S, c.KV*c.Dh), randTensor(r, S, c.KV*c.Dh)
			sinks := tensor.New(c.H) // around the scores' scale, some well above it
			for h := range sinks.Data() {
				sinks.Data()[h] = float32(2 * r.NormFloat64())
			}
			sinks.Data()[0] = 6
			o := tensor.AttentionOptions{Scale: float32(1 / math.Sqrt(float64(c.Dh))), Window: c.window, Sinks: sinks}
			keys, values := k.Slice(0, c.past+c.T), v.Slice(0, c.past+c.T)
			got, want, plain := tensor.New(c.T, c.H*c.Dh), tensor.New(c.T, c.H*c.Dh), tensor.New(c.T, c.H*c.Dh)
			b.Attention(got, q, keys, values, c.H, c.KV, c.past, o)
			tensor.Go{}.Attention(want, q, keys, values, c.H, c.KV, c.past, o)
			if i, ok := identical(got.Data(), want.Data()); !ok {
				t.Fatalf("%s attention with sinks %+v: element %d = %v, Go %v", name, c, i, got.Data()[i], want.Data()[i])
			}
			o.Sinks = nil
			tensor.Go{}.Attention(plain, q, keys, values, c.H, c.KV, c.past, o)
			if _, same := identical(plain.Data(), want.Data()); same {
				t.Fatalf("attention %+v: the sinks change nothing", c)
			}
		}
	}
}

// TestAttentionChunks: Llama 4's chunked attention, a query seeing only the
// keys of its own chunk of positions. The kernel has no chunks; the backend
// runs each chunk's queries over the keys from the chunk's start. Native
// against pure Go, bit for bit: prefill across several chunks, decode at a
// chunk's first and last position, with a window and sinks inside chunks,
// and the bidirectional case (Go's path); each case also checks that the
// chunks change Go's result.
func TestAttentionChunks(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for name, b := range backends(t) {
		for _, c := range []struct {
			T, past, H, KV, Dh int
			chunk, window      int
			sinks, bidir       bool
		}{
			{16, 0, 4, 2, 8, 5, 0, false, false}, {1, 10, 4, 2, 8, 5, 0, false, false}, {1, 14, 4, 2, 8, 5, 0, false, false},
			{7, 9, 8, 2, 64, 4, 0, false, false}, {33, 17, 16, 2, 64, 16, 0, false, false}, {12, 3, 4, 1, 16, 4, 3, true, false},
			{20, 0, 2, 1, 8, 6, 9, true, false}, {9, 2, 2, 2, 8, 4, 0, false, true},
		} {
			S := c.past + c.T + 2 // extra rows the kernel must not read as keys
			q := randTensor(r, c.T, c.H*c.Dh)
			k, v := randTensor(r, S, c.KV*c.Dh), randTensor(r, S, c.KV*c.Dh)
			o := tensor.AttentionOptions{Scale: float32(1 / math.Sqrt(float64(c.Dh))), Window: c.window, Chunk: c.chunk, Bidirectional: c.bidir}
			if c.sinks {
				o.Sinks = randTensor(r, c.H)
			}
			keys, values := k.Slice(0, c.past+c.T), v.Slice(0, c.past+c.T)
			got, want, whole := tensor.New(c.T, c.H*c.Dh), tensor.New(c.T, c.H*c.Dh), tensor.New(c.T, c.H*c.Dh)
			b.Attention(got, q, keys, values, c.H, c.KV, c.past, o)
			tensor.Go{}.Attention(want, q, keys, values, c.H, c.KV, c.past, o)
			if i, ok := identical(got.Data(), want.Data()); !ok {
				t.Fatalf("%s chunked attention %+v: element %d = %v, Go %v", name, c, i, got.Data()[i], want.Data()[i])
			}
			o.Chunk = 0
			tensor.Go{}.Attention(whole, q, keys, values, c.H, c.KV, c.past, o)
			if _, same := identical(whole.Data(), want.Data()); same {
				t.Fatalf("attention %+v: the chunks change nothing", c)
			}
		}
	}
}

// TestDelegatedOps runs the ops without kernels through the backend, so a
// wrong delegation shows.
func TestDelegatedOps(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	b := backends(t)[Variants()[0]]
	x, y := randTensor(r, 3, 8), randTensor(r, 3, 8)
	for _, op := range []struct {
		name string
		f    func(be tensor.Backend, out *tensor.Tensor)
	}{
		{"Add", func(be tensor.Backend, out *tensor.Tensor) { be.Add(out, x, y) }},
		{"Mul", func(be tensor.Backend, out *tensor.Tensor) { be.Mul(out, x, y) }},
		{"Scale", func(be tensor.Backend, out *tensor.Tensor) { be.Scale(out, x, 0.5) }},
		{"LayerNorm", func(be tensor.Backend, out *tensor.Tensor) { be.LayerNorm(out, x, nil, nil, 1e-5) }},
		{"RoPE", func(be tensor.Backend, out *tensor.Tensor) {
			be.RoPE(out, x, 3, tensor.RoPEOptions{HeadDim: 4, Dim: 4, Base: 10000, NeoX: true})
		}},
		{"Softmax", func(be tensor.Backend, out *tensor.Tensor) { be.Softmax(out, x, 2) }},
		{"GELU", func(be tensor.Backend, out *tensor.Tensor) { be.GELU(out, x) }},
		{"GELUErf", func(be tensor.Backend, out *tensor.Tensor) { be.GELUErf(out, x) }},
		{"Sigmoid", func(be tensor.Backend, out *tensor.Tensor) { be.Sigmoid(out, x) }},
		{"Softplus", func(be tensor.Backend, out *tensor.Tensor) { be.Softplus(out, x) }},
		{"Tanh", func(be tensor.Backend, out *tensor.Tensor) { be.Tanh(out, x) }},
		{"SwiGLUOAI", func(be tensor.Backend, out *tensor.Tensor) { be.SwiGLUOAI(out, x, y, 1.702, 0.5) }},
		{"ScatterAdd", func(be tensor.Backend, out *tensor.Tensor) {
			be.ScatterAdd(out, x, y.Slice(0, 2), []int32{2, 2}, nil)
		}},
	} {
		got, want := tensor.New(3, 8), tensor.New(3, 8)
		op.f(b, got)
		op.f(tensor.Go{}, want)
		if i, ok := identical(got.Data(), want.Data()); !ok {
			t.Errorf("%s: element %d = %v, Go %v", op.name, i, got.Data()[i], want.Data()[i])
		}
	}
}

// TestRead: the bandwidth probe reads every byte (its XOR matches the
// reference's, which reads front to back) at sizes around its four streams.
func TestRead(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	buf := make([]byte, 64*1000)
	for i := range buf {
		buf[i] = byte(r.Uint32())
	}
	for name, b := range backends(t) {
		for _, n := range []int{0, 64, 192, 256, 320, 64 * 999, 64 * 1000} {
			got := callRet(b.ks.read, ptr(buf), u(n))
			want := callRet(b.lib.ref.read, ptr(buf), u(n))
			if got != want {
				t.Errorf("%s: toy_read of %d bytes = %#x, reference %#x", name, n, got, want)
			}
		}
	}
}

func ExampleLoad() {
	b, err := Load()
	if err != nil {
		fmt.Println(err) // a *kernels.NativeCallError: what is missing, what to do
		return
	}
	tensor.SetBackend(b)
	defer tensor.SetBackend(tensor.Go{})
	y := tensor.MatMul(tensor.FromFloat32([]float32{1, 2}, 1, 2), tensor.FromFloat32([]float32{3, 4, 5, 6}, 2, 2))
	fmt.Println(y.Data())
	// Output: [11 17]
}

// TestSiLUSweep compares SiLU with the Go backend bit for bit on four million
// values spread over exp's whole range: the C exp (double precision, rounded
// to float32) must round like Go's float32(math.Exp(float64(x))).
func TestSiLUSweep(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	r := rand.New(rand.NewPCG(11, 12))
	n := 1 << 22
	x := tensor.New(n)
	for i := range x.Data() {
		x.Data()[i] = float32((r.Float64()*2 - 1) * math.Pow(10, r.Float64()*3-1))
	}
	want := tensor.New(n)
	tensor.Go{}.SiLU(want, x)
	for name, b := range backends(t) { // each variant vectorizes exp its own way
		got := tensor.New(n)
		b.SiLU(got, x)
		diff := 0
		for i := range want.Data() {
			if math.Float32bits(got.Data()[i]) != math.Float32bits(want.Data()[i]) {
				if diff < 5 {
					t.Errorf("%s: SiLU(%v) = %v, Go %v", name, x.Data()[i], got.Data()[i], want.Data()[i])
				}
				diff++
			}
		}
		if diff > 0 {
			t.Errorf("%s: %d of %d values differ", name, diff, n)
		}
	}
}

// TestSelfTest: what toy install runs passes on every variant.
func TestSelfTest(t *testing.T) {
	for name, b := range backends(t) {
		if err := SelfTest(b); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// The gated delta rule runs in C (toy_delta_rule) bit for bit as tensor's
// own loop: every value head, from a given state and from zeros, at a head
// width of vectors and one with tails, with key heads shared by two value
// heads.
func TestDeltaRule(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for name, b := range backends(t) {
		for _, s := range [][4]int{{5, 2, 4, 128}, {3, 1, 2, 6}, {1, 3, 3, 16}, {40, 2, 2, 32}} {
			T, Hk, Hv, D := s[0], s[1], s[2], s[3]
			q, k, v := randTensor(r, T, Hk*D), randTensor(r, T, Hk*D), randTensor(r, T, Hv*D)
			g, beta := randTensor(r, T, Hv), randTensor(r, T, Hv)
			for i := range g.Data() {
				g.Data()[i] = -0.5 * (g.Data()[i] + 1)      // log decays in (−1, 0]
				beta.Data()[i] = 0.5 * (beta.Data()[i] + 1) // in (0, 1)
			}
			start := randTensor(r, Hv, D*D)
			run := func(be tensor.Backend, zeros bool) (out, state []float32) {
				old := tensor.ActiveBackend()
				tensor.SetBackend(be)
				defer tensor.SetBackend(old)
				if zeros { // no state: S starts at zero
					return tensor.GatedDeltaNet(q, k, v, g, beta, nil, 1e-6).Data(), nil
				}
				st := tensor.FromFloat32(slices.Clone(start.Data()), Hv, D*D)
				return tensor.GatedDeltaNet(q, k, v, g, beta, st, 1e-6).Data(), st.Data()
			}
			for _, zeros := range []bool{false, true} {
				got, gotS := run(b, zeros)
				want, wantS := run(tensor.Go{}, zeros)
				if i, ok := identical(got, want); !ok {
					t.Fatalf("%s %v: output %d = %v, Go %v", name, s, i, got[i], want[i])
				}
				if i, ok := identical(gotS, wantS); !ok {
					t.Fatalf("%s %v: state %d = %v, Go %v", name, s, i, gotS[i], wantS[i])
				}
			}
		}
	}
}
