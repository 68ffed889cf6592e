package tensor

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// backends lists every backend the op tests run on.
var backends = []Backend{Go{}}

// onEach runs f once per backend, with that backend active.
func onEach(t *testing.T, f func(t *testing.T)) {
	for _, b := range backends {
		t.Run(b.Name(), func(t *testing.T) {
			old := ActiveBackend()
			SetBackend(b)
			defer SetBackend(old)
			f(t)
		})
	}
}

func near(t *testing.T, what string, got, want []float32, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	for i := range got {
		if d := math.Abs(float64(got[i] - want[i])); d > tol*math.Max(1, math.Abs(float64(want[i]))) || math.IsNaN(float64(got[i])) {
			t.Fatalf("%s[%d] = %v, want %v (|Δ| %.2e > %.0e)", what, i, got[i], want[i], d, tol)
		}
	}
}

func randTensor(r *rand.Rand, shape ...int) *Tensor {
	x := New(shape...)
	for i := range x.f32 {
		x.f32[i] = float32(r.NormFloat64())
	}
	return x
}

func TestRMSNormByHand(t *testing.T) {
	onEach(t, func(t *testing.T) {
		// x = [3, 4]: mean(x²) = 12.5, so y = x / √12.5 = [0.848528, 1.131371], then ⊙ w = [1, 2].
		y := RMSNorm(FromFloat32([]float32{3, 4}, 1, 2), FromFloat32([]float32{1, 2}, 2), 0)
		near(t, "RMSNorm", y.Data(), []float32{0.8485281, 2.2627417}, 1e-6)
	})
}

func TestLayerNormByHand(t *testing.T) {
	onEach(t, func(t *testing.T) {
		// x = [1, 2, 3]: mean 2, var 2/3, y = (x−2)/√(2/3) = [−1.224745, 0, 1.224745]; ⊙ w + b.
		y := LayerNorm(FromFloat32([]float32{1, 2, 3}, 1, 3), FromFloat32([]float32{1, 1, 2}, 3), FromFloat32([]float32{0, 1, 0}, 3), 0)
		near(t, "LayerNorm", y.Data(), []float32{-1.2247449, 1, 2.4494898}, 1e-6)
	})
}

func TestSoftmaxShiftInvariant(t *testing.T) {
	onEach(t, func(t *testing.T) {
		// softmax(x + c) = softmax(x); softmax([0, ln 3]) = [1/4, 3/4].
		a := Softmax(FromFloat32([]float32{0, float32(math.Log(3))}, 1, 2), -1)
		b := Softmax(FromFloat32([]float32{100, 100 + float32(math.Log(3))}, 1, 2), -1)
		near(t, "softmax", a.Data(), []float32{0.25, 0.75}, 1e-6)
		near(t, "shifted softmax", b.Data(), a.Data(), 1e-6)
	})
}

// TestSoftmaxFlushesDenormals: a term below float32's smallest normal
// number, 2⁻¹²⁶ (e^-95 ≈ 5.5e-42), is 0, on every backend and in attention;
// one just above it (e^-80 ≈ 1.8e-35) is kept.
func TestSoftmaxFlushesDenormals(t *testing.T) {
	onEach(t, func(t *testing.T) {
		y := Softmax(FromFloat32([]float32{0, -95, -80}, 1, 3), -1).Data()
		if y[0] != 1 || y[1] != 0 || y[2] != float32(math.Exp(-80)) {
			t.Errorf("softmax of [0, -95, -80] = %v, want [1, 0, %v]", y, float32(math.Exp(-80)))
		}
		// One query, three keys along it: scores 0, −95 and −80 (scale 1),
		// values 1, 2^127 and 0 — the second key's weight, were it kept as a
		// denormal, would add about 9e-4 to the output.
		q := FromFloat32([]float32{1}, 1, 1)
		k := FromFloat32([]float32{0, -95, -80}, 3, 1)
		v := FromFloat32([]float32{1, 0x1p127, 0}, 3, 1)
		if o := AttentionWith(q, k, v, 1, 1, 2, AttentionOptions{Scale: 1}).Data(); o[0] != 1 {
			t.Errorf("attention over scores [0, -95, -80]: %v, want 1", o[0])
		}
	})
}

func TestSoftmaxCausalMask(t *testing.T) {
	onEach(t, func(t *testing.T) {
		// Two rows of three columns with one past position: row 0 sees
		// columns 0–1, row 1 sees all three.
		y := Softmax(FromFloat32([]float32{0, 0, 9, 0, 0, 0}, 2, 3), 1)
		near(t, "causal softmax", y.Data(), []float32{0.5, 0.5, 0, 1.0 / 3, 1.0 / 3, 1.0 / 3}, 1e-6)
	})
}

func TestRoPEPairings(t *testing.T) {
	onEach(t, func(t *testing.T) {
		// One head of 4 features at position 1, base 1: every pair rotates by
		// θ = 1 rad. Adjacent pairs are (0,1), (2,3); NeoX pairs (0,2), (1,3).
		x := FromFloat32([]float32{1, 0, 0, 1}, 1, 4)
		c, s := float32(math.Cos(1)), float32(math.Sin(1))
		near(t, "adjacent", RoPE(x, 1, 4, 4, 1, false).Data(), []float32{c, s, -s, c}, 1e-6)
		near(t, "neox", RoPE(x, 1, 4, 4, 1, true).Data(), []float32{c, -s, s, c}, 1e-6)
		// Position 0 is the identity; features past ropeDim pass through.
		near(t, "position 0", RoPE(x, 0, 4, 4, 10000, false).Data(), x.Data(), 0)
		near(t, "partial", RoPE(x, 1, 4, 2, 1, false).Data(), []float32{c, s, 0, 1}, 1e-6)
	})
}

// TestRoPEFactors: a frequency factor divides its pair's angle (and not the
// running θ product), and factors of 1 change nothing.
func TestRoPEFactors(t *testing.T) {
	onEach(t, func(t *testing.T) {
		// Base 1: both pairs at θ = 1 rad, then divided by 2 and by 4.
		x := FromFloat32([]float32{1, 0, 0, 1}, 1, 4)
		c2, s2 := float32(math.Cos(0.5)), float32(math.Sin(0.5))
		c4, s4 := float32(math.Cos(0.25)), float32(math.Sin(0.25))
		near(t, "adjacent", RoPEFactors(x, FromFloat32([]float32{2, 4}, 2), 1, 4, 4, 1, false).Data(), []float32{c2, s2, -s4, c4}, 1e-6)
		near(t, "neox", RoPEFactors(x, FromFloat32([]float32{2, 4}, 2), 1, 4, 4, 1, true).Data(), []float32{c2, -s4, s2, c4}, 1e-6)
		// Base 100: pair 1's angle is 7·100^(−1/2)/8 = 0.0875.
		c, s := float32(math.Cos(7)), float32(math.Sin(7))
		cf, sf := float32(math.Cos(0.0875)), float32(math.Sin(0.0875))
		near(t, "base 100", RoPEFactors(x, FromFloat32([]float32{1, 8}, 2), 7, 4, 4, 100, false).Data(), []float32{c, s, -sf, cf}, 1e-6)
		y := FromFloat32([]float32{0.3, -1.2, 2.5, 0.7, -0.1, 0.9, 1.1, -2}, 2, 4)
		near(t, "factors of 1", RoPEFactors(y, FromFloat32([]float32{1, 1}, 2), 5, 4, 4, 10000, false).Data(), RoPE(y, 5, 4, 4, 10000, false).Data(), 0)
	})
}

// TestRoPEScaling: linear scaling by 1/4 at position p is plain RoPE at
// position p/4 (exactly: a power of two commutes with float rounding); YaRN
// against its definition written out in float64.
func TestRoPEScaling(t *testing.T) {
	onEach(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(13, 14))
		x := randTensor(r, 1, 64) // 2 heads of 32
		lin := RoPEWith(x, 400, RoPEOptions{HeadDim: 32, Dim: 32, Base: 10000, Scaling: RoPEScaling{FreqScale: 0.25}})
		near(t, "linear 1/4", lin.Data(), RoPE(x, 100, 32, 32, 10000, false).Data(), 0)
		// YaRN, factor 8 over an original context of 64, dim 32, base 10000:
		// pair i turns 64/(2π·10000^(2i/32)) times over the context; the ramp
		// runs from pair ⌊32·ln(64/(2π·32))/(2 ln 10000)⌋ = 0 (β_fast 32) to
		// ⌈32·ln(64/(2π·1))/(2 ln 10000)⌉ = 5 (β_slow 1).
		s := RoPEScaling{FreqScale: 0.125, ExtFactor: 1, BetaFast: 32, BetaSlow: 1, OrigContext: 64, AttnFactor: 1}
		p := s.Params(32, 10000)
		if p.RampLow != 0 || p.RampHigh != 5 {
			t.Fatalf("ramp %v … %v, want 0 … 5", p.RampLow, p.RampHigh)
		}
		y := RoPEWith(x, 1000, RoPEOptions{HeadDim: 32, Dim: 32, Base: 10000, NeoX: true, Scaling: s})
		m := 1 + 0.1*math.Log(8)
		for h := 0; h < 2; h++ {
			want := make([]float32, 32)
			for i := 0; i < 16; i++ {
				phi := 1000 * math.Pow(10000, -float64(2*i)/32)
				ramp := 1 - min(1, max(0, (float64(i)-0)/5))
				theta := phi/8*(1-ramp) + phi*ramp
				a, b := float64(x.Row(0)[h*32+i]), float64(x.Row(0)[h*32+i+16])
				want[i] = float32(m * (a*math.Cos(theta) - b*math.Sin(theta)))
				want[i+16] = float32(m * (a*math.Sin(theta) + b*math.Cos(theta)))
			}
			near(t, "YaRN", y.Row(0)[h*32:(h+1)*32], want, 2e-4) // angles near 1000 rad: float32 θ is good to ~6e-5
		}
	})
}

// TestRoPETables: the kept cosine and sine tables give what fresh ones give,
// bit for bit, whatever ran before — options, positions and counts that
// differ in one thing each, factors changed in place, more tables than are
// kept — and RoPE's gradient (the inverse rotation) shares them.
func TestRoPETables(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	x := randTensor(r, 3, 64) // 2 heads of 32
	factors := FromFloat32([]float32{1, 2, 3, 4, 5, 6, 7, 8, 1, 1, 1, 1, 1, 1, 1, 1}, 16)
	yarn := RoPEScaling{FreqScale: 0.125, ExtFactor: 1, BetaFast: 32, BetaSlow: 1, OrigContext: 64}
	opts := []RoPEOptions{
		{HeadDim: 32, Dim: 32, Base: 10000},
		{HeadDim: 32, Dim: 32, Base: 10000, NeoX: true},
		{HeadDim: 32, Dim: 16, Base: 10000},
		{HeadDim: 32, Dim: 32, Base: 500000},
		{HeadDim: 32, Dim: 32, Base: 10000, Factors: factors},
		{HeadDim: 32, Dim: 32, Base: 10000, Scaling: RoPEScaling{FreqScale: 0.25}},
		{HeadDim: 32, Dim: 32, Base: 10000, Scaling: yarn},
		{HeadDim: 32, Dim: 32, Base: 10000, Scaling: RoPEScaling{AttnFactor: 0.5}},
	}
	clear := func() {
		ropeTables.Lock()
		ropeTables.recent, ropeTables.floats = nil, 0
		ropeTables.Unlock()
	}
	call := func(i, round int) (*Tensor, int, RoPEOptions) { // an options set, a position, 1 to 3 rows
		return x.Slice(0, 1+(i+round)%3), i / len(opts) * 7, opts[i%len(opts)]
	}
	for round := range 3 {
		want := make([][]float32, len(opts)*4)
		for i := range want {
			clear()
			rows, pos0, o := call(i, round)
			want[i] = RoPEWith(rows, pos0, o).Data()
		}
		clear()
		for range 2 { // the second pass finds every table kept
			for _, i := range r.Perm(len(want)) {
				rows, pos0, o := call(i, round)
				near(t, fmt.Sprintf("round %d, options %d at %d", round, i%len(opts), pos0), RoPEWith(rows, pos0, o).Data(), want[i], 0)
			}
		}
		factors.Data()[1] += 1 // in place: the tables follow the values
	}
	for pos0 := range 2 * ropeTablesMax { // more tables than are kept
		RoPEWith(x.Slice(0, 1), pos0, opts[0])
	}
	if n := len(ropeTables.recent); n > ropeTablesMax {
		t.Errorf("%d tables kept, want at most %d", n, ropeTablesMax)
	}
	xg := FromFloat32(slices.Clone(x.Data()), 3, 64).SetRequiresGrad(true)
	tape := NewTape()
	Record(tape)
	y := RoPEWith(xg, 9, opts[6])
	l := Sum(Mul(y, y))
	Record(nil)
	tape.Backward(l)
	// A rotation times m has the gradient 2m²x of the summed squares.
	m := yarn.Params(32, 10000).MScale
	near(t, "gradient", xg.Grad().Data(), Scale(x, 2*m*m).Data(), 1e-4)
}

func TestRoPEPreservesNorm(t *testing.T) {
	onEach(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(1, 2))
		x := randTensor(r, 5, 32)
		y := RoPE(x, 7, 8, 8, 10000, true)
		for i := 0; i < 5; i++ {
			var a, b float64
			for j := 0; j < 32; j++ {
				a += float64(x.Row(i)[j] * x.Row(i)[j])
				b += float64(y.Row(i)[j] * y.Row(i)[j])
			}
			if math.Abs(a-b) > 1e-4*a {
				t.Fatalf("row %d: |x|² = %v, |RoPE(x)|² = %v", i, a, b)
			}
		}
	})
}

func TestActivationsByHand(t *testing.T) {
	onEach(t, func(t *testing.T) {
		x := FromFloat32([]float32{0, 1, -1}, 1, 3)
		// SiLU(1) = 1/(1+e⁻¹) = 0.7310586, SiLU(−1) = −0.2689414.
		near(t, "SiLU", SiLU(x).Data(), []float32{0, 0.7310586, -0.2689414}, 1e-6)
		// GELU(1) = 0.841192 (tanh form); toy rounds through fp16 like ggml, so 1e-3.
		near(t, "GELU", GELU(x).Data(), []float32{0, 0.841192, -0.158808}, 1e-3)
		near(t, "SwiGLU", SwiGLU(x, FromFloat32([]float32{5, 2, 2}, 1, 3)).Data(), []float32{0, 1.4621172, -0.5378828}, 1e-6)
	})
}

func TestGELUMatchesExactWithinFP16(t *testing.T) {
	onEach(t, func(t *testing.T) {
		for v := float32(-12); v < 12; v += 0.01 {
			got := GELU(FromFloat32([]float32{v}, 1, 1)).Data()[0]
			want := geluExact(v)
			if d := math.Abs(float64(got - want)); d > 4e-3*math.Max(1, math.Abs(float64(want))) {
				t.Fatalf("GELU(%v) = %v, exact %v", v, got, want)
			}
		}
	})
}

func TestBroadcastAddMul(t *testing.T) {
	onEach(t, func(t *testing.T) {
		a := FromFloat32([]float32{1, 2, 3, 4}, 2, 2)
		b := FromFloat32([]float32{10, 20}, 2)
		near(t, "Add", Add(a, b).Data(), []float32{11, 22, 13, 24}, 0)
		near(t, "Mul", Mul(a, b).Data(), []float32{10, 40, 30, 80}, 0)
		near(t, "Scale", Scale(a, 0.5).Data(), []float32{0.5, 1, 1.5, 2}, 0)
	})
}

func TestEmbeddingAllTypes(t *testing.T) {
	onEach(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(3, 4))
		table := randTensor(r, 10, 64)
		for _, dt := range []DType{F32, F16, BF16, Q8_0} {
			enc, _ := FromBytes(dt, EncodeRow(nil, table.Data(), dt), 10, 64)
			got := Embedding(enc, []int32{7, 0, 7})
			want := enc.Float32s()
			near(t, dt.String(), got.Data(), slices.Concat(want[7*64:8*64], want[:64], want[7*64:8*64]), 0)
		}
	})
}

// TestMatMulAgainstNaive checks every weight type against a float64 product
// of the same rounded operands, over odd and tiny sizes.
func TestMatMulAgainstNaive(t *testing.T) {
	onEach(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(5, 6))
		for _, sz := range [][3]int{{1, 32, 1}, {3, 64, 5}, {1, 96, 33}, {7, 32, 17}, {16, 256, 40}} {
			M, K, N := sz[0], sz[1], sz[2]
			x, w := randTensor(r, M, K), randTensor(r, N, K)
			for _, dt := range []DType{F32, F16, BF16, Q8_0} {
				wt, err := FromBytes(dt, EncodeRow(nil, w.Data(), dt), N, K)
				if err != nil {
					t.Fatal(err)
				}
				got := MatMul(x, wt)
				// The reference rounds x to the weight's dot type too.
				xr := x.Data()
				if dt != F32 {
					xr = DecodeRowsOf(EncodeRow(nil, xr, dt), dt, len(xr))
				}
				wf := wt.Float32s()
				want := make([]float32, M*N)
				for m := 0; m < M; m++ {
					for n := 0; n < N; n++ {
						var s float64
						for k := 0; k < K; k++ {
							s += float64(xr[m*K+k]) * float64(wf[n*K+k])
						}
						want[m*N+n] = float32(s)
					}
				}
				near(t, fmt.Sprintf("%v %dx%dx%d", dt, M, K, N), got.Data(), want, 2e-5*math.Sqrt(float64(K)))
			}
		}
	})
}

// DecodeRowsOf decodes n elements of type dt (test helper).
func DecodeRowsOf(b []byte, dt DType, n int) []float32 {
	out := make([]float32, n)
	DecodeRow(out, b, dt)
	return out
}

// TestAttentionMatchesComposition checks the fused attention op against the
// same computation written with MatMul, Softmax and a transpose, per head.
func TestAttentionMatchesComposition(t *testing.T) {
	onEach(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(7, 8))
		T, past, H, KV, dh := 3, 4, 4, 2, 8
		S := past + T
		q, k, v := randTensor(r, T, H*dh), randTensor(r, S, KV*dh), randTensor(r, S, KV*dh)
		scale := float32(1 / math.Sqrt(float64(dh)))
		got := Attention(q, k, v, H, KV, past, scale)
		for h := 0; h < H; h++ {
			g := h / (H / KV)
			qh, kh, vhT := New(T, dh), New(S, dh), New(dh, S)
			for i := 0; i < T; i++ {
				copy(qh.Row(i), q.Row(i)[h*dh:(h+1)*dh])
			}
			for s := 0; s < S; s++ {
				copy(kh.Row(s), k.Row(s)[g*dh:(g+1)*dh])
				for j := 0; j < dh; j++ {
					vhT.Row(j)[s] = v.Row(s)[g*dh+j]
				}
			}
			p := Softmax(Scale(MatMul(qh, kh), scale), past) // [T, S]
			want := MatMul(p, vhT)                           // [T, dh]
			for i := 0; i < T; i++ {
				near(t, fmt.Sprintf("head %d row %d", h, i), got.Row(i)[h*dh:(h+1)*dh], want.Row(i), 1e-5)
			}
		}
	})
}

// TestAttentionOptions checks soft-capped, sliding-window, chunked and
// bidirectional attention against the definitions written out in float64:
// key j is seen by the query at position p iff (bidirectional or j ≤ p) and
// (no window or p − j < window) and (no chunks or ⌊j/c⌋ = ⌊p/c⌋), and each
// score s becomes c·tanh(s/c).
func TestAttentionOptions(t *testing.T) {
	onEach(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(11, 12))
		T, past, H, KV, dh := 5, 3, 4, 2, 8
		S := past + T
		q, k, v := randTensor(r, T, H*dh), randTensor(r, S, KV*dh), randTensor(r, S, KV*dh)
		for _, o := range []AttentionOptions{
			{Scale: 1.5, SoftCap: 2}, {Scale: 0.4, Window: 3}, {Scale: 0.4, Window: 1}, {Scale: 0.4, Bidirectional: true},
			{Scale: 3, SoftCap: 0.7, Window: 4},
			{Scale: 0.4, Chunk: 3}, {Scale: 0.4, Chunk: 4, Window: 2}, {Scale: 0.4, Chunk: 2, Bidirectional: true},
		} {
			got := AttentionWith(q, k, v, H, KV, past, o)
			for i := 0; i < T; i++ {
				p := past + i
				for h := 0; h < H; h++ {
					g := h / (H / KV)
					var w []float64
					var keys []int
					m := math.Inf(-1)
					for j := 0; j < S; j++ {
						if (!o.Bidirectional && j > p) || (o.Window > 0 && p-j >= o.Window) || (o.Chunk > 0 && j/o.Chunk != p/o.Chunk) {
							continue
						}
						var d float64
						for c := 0; c < dh; c++ {
							d += float64(q.Row(i)[h*dh+c]) * float64(k.Row(j)[g*dh+c])
						}
						d *= float64(o.Scale)
						if o.SoftCap > 0 {
							d = float64(o.SoftCap) * math.Tanh(d/float64(o.SoftCap))
						}
						w, keys, m = append(w, d), append(keys, j), max(m, d)
					}
					var sum float64
					for n := range w {
						w[n] = math.Exp(w[n] - m)
						sum += w[n]
					}
					want := make([]float32, dh)
					for c := range want {
						var acc float64
						for n, j := range keys {
							acc += w[n] / sum * float64(v.Row(j)[g*dh+c])
						}
						want[c] = float32(acc)
					}
					near(t, fmt.Sprintf("%+v query %d head %d", o, i, h), got.Row(i)[h*dh:(h+1)*dh], want, 1e-5)
				}
			}
		}
	})
}

func TestThreadsDoNotChangeResults(t *testing.T) {
	onEach(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(9, 10))
		x, w := randTensor(r, 9, 64), randTensor(r, 100, 64)
		wq, _ := FromBytes(Q8_0, EncodeRow(nil, w.Data(), Q8_0), 100, 64)
		defer SetThreads(Threads())
		SetThreads(1)
		a, aq := MatMul(x, w), MatMul(x, wq)
		SetThreads(7)
		b, bq := MatMul(x, w), MatMul(x, wq)
		if !slices.Equal(a.Data(), b.Data()) || !slices.Equal(aq.Data(), bq.Data()) {
			t.Fatal("results depend on the thread count")
		}
	})
}

func TestShapeErrorsPanicWithShapes(t *testing.T) {
	defer func() {
		p := recover()
		if p == nil || !containsAll(fmt.Sprint(p), "MatMul", "[2 3]", "[4 5]") {
			t.Fatalf("panic = %v, want the op name and both shapes", p)
		}
	}()
	MatMul(New(2, 3), New(4, 5))
}

func containsAll(s string, subs ...string) bool {
	for _, sub := range subs {
		if !contains(s, sub) {
			return false
		}
	}
	return true
}

func contains(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}

func TestFromBytesRejectsBadSizes(t *testing.T) {
	if _, err := FromBytes(Q8_0, make([]byte, 33), 1, 32); err == nil {
		t.Error("33 bytes accepted for one Q8_0 block")
	}
	if _, err := FromBytes(Q8_0, make([]byte, 34), 1, 31); err == nil {
		t.Error("row of 31 accepted for Q8_0")
	}
	if _, err := FromBytes(DType(99), nil, 1); err == nil {
		t.Error("unknown type accepted")
	}
}
