// A quick check of the GPU against the pure-Go backend, for toy install and
// the device tests.

package cuda

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/toyml/toy/toy/tensor"
	"github.com/toyml/toy/toy/tensor/quant"
)

// SelfTest runs every op of b on small random inputs and compares it with
// tensor.Go{} (relative tolerance 1e-5, 1e-4 for F16/BF16 products, plus
// the summation-order allowance of OpCase.Slack for products). It returns
// the first difference found.
func SelfTest(b *Backend) error {
	for _, c := range OpCases(rand.New(rand.NewPCG(42, 42)), 1) {
		want := c.Run(tensor.Go{})
		got := c.Run(b)
		if err := c.Check(got, want); err != nil {
			return fmt.Errorf("self-test on %s: %w", b.info.Name, err)
		}
	}
	return nil
}

// Compare checks got against want element by element: |g − w| ≤ tol·(1+|w|).
func Compare(op string, got, want []float32, tol float64) error {
	return compare(op, got, want, tol, nil)
}

// compare is Compare with an extra absolute allowance slack[i] per element.
func compare(op string, got, want []float32, tol float64, slack []float64) error {
	if len(got) != len(want) {
		return fmt.Errorf("%s: %d values, pure Go gives %d", op, len(got), len(want))
	}
	for i, w := range want {
		g := got[i]
		allow := tol * (1 + math.Abs(float64(w)))
		if slack != nil {
			allow += slack[i]
		}
		if math.IsNaN(float64(g)) != math.IsNaN(float64(w)) || math.Abs(float64(g-w)) > allow {
			return fmt.Errorf("%s: element %d is %v, pure Go gives %v (allowed difference %.2g)", op, i, g, w, allow)
		}
	}
	return nil
}

// OpCase is one op on fixed random inputs: Run executes it on a backend
// and returns the output's values.
type OpCase struct {
	Name string
	Tol  float64 // relative: |got − want| ≤ Tol·(1+|want|) …
	// Slack is, for matrix products, an absolute allowance per output
	// element on top of Tol: 4·2⁻²⁴·Σ_k |x_k·w_k|. Two float32 sums of the
	// same K products in different orders (Go's four-way split, cuBLAS's
	// tiles, a warp's lanes) typically differ by about 2⁻²⁴·Σ|x_k·w_k|,
	// which for K in the thousands exceeds 1e-5 of a result that cancels
	// towards 0. Nil for ops whose order is the reference's.
	Slack []float64
	Run   func(tensor.Backend) []float32
}

// Check compares a backend's output with the reference's, with c's
// tolerances.
func (c OpCase) Check(got, want []float32) error { return compare(c.Name, got, want, c.Tol, c.Slack) }

// productSlack is OpCase.Slack of out[M, N] = x[M, K]·w[N, K]ᵀ.
func productSlack(x, w []float32, M, K, N int) []float64 {
	s := make([]float64, M*N)
	for m := range M {
		for n := range N {
			a := 0.0
			for k := range K {
				a += math.Abs(float64(x[m*K+k]) * float64(w[n*K+k]))
			}
			s[m*N+n] = 4 * a / (1 << 24)
		}
	}
	return s
}

// OpCases returns cases for every primitive of tensor.Backend (each case
// named by its method; TestOpCasesCoverBackend checks that none is
// missing) and the fused kernels, tensor.ExpertsBackend and
// tensor.GatedDeltaNetBackend, on shapes scaled by size (1: tiny, for install;
// larger for the device tests), including ragged ones (rows not a multiple
// of the kernels' tiles).
func OpCases(r *rand.Rand, size int) []OpCase {
	randT := func(shape ...int) *tensor.Tensor {
		x := tensor.New(shape...)
		for i := range x.Data() {
			x.Data()[i] = float32(r.NormFloat64())
		}
		return x
	}
	// fresh returns a copy of x with no device storage, so each backend
	// starts from host memory.
	fresh := func(x *tensor.Tensor) *tensor.Tensor {
		if x == nil {
			return nil
		}
		y, err := tensor.FromBytes(x.DType(), append([]byte(nil), x.Bytes()...), x.Shape()...)
		if err != nil {
			panic(err)
		}
		return y
	}
	op := func(shape []int, f func(b tensor.Backend, out *tensor.Tensor)) func(tensor.Backend) []float32 {
		return func(b tensor.Backend) []float32 {
			out := tensor.New(shape...)
			f(b, out)
			return out.Float32s()
		}
	}
	var cases []OpCase
	D := 64 * size
	for _, dt := range []tensor.DType{tensor.F32, tensor.F16, tensor.BF16, tensor.Q8_0} {
		shapes := [][3]int{{1, D, 33}, {3, D + 32, 40}, {9, 2 * D, 17}, {40, D, 70 * size}}
		if dt == tensor.Q8_0 { // the tensor-core tiles: ragged in M and N, one block of K, 34 blocks
			shapes = append(shapes, [3]int{17, 32, 9}, [3]int{65, 1088, 70}, [3]int{130, 96 * size, 129})
		}
		for _, s := range shapes {
			x, wf := randT(s[0], s[1]), randT(s[2], s[1])
			w, err := tensor.FromBytes(dt, tensor.EncodeRow(nil, wf.Data(), dt), s[2], s[1])
			if err != nil {
				panic(err)
			}
			tol := 1e-5
			if dt != tensor.F32 && dt != tensor.Q8_0 || s[0] >= gemmMin {
				tol = 1e-4
			}
			cases = append(cases, OpCase{fmt.Sprintf("MatMul %v %v", dt, s), tol, productSlack(x.Data(), wf.Data(), s[0], s[1], s[2]),
				op([]int{s[0], s[2]}, func(b tensor.Backend, out *tensor.Tensor) {
					b.MatMul(out, fresh(x), fresh(w))
				})})
		}
	}
	// The 2- to 6-bit types: bit-identical to Go (integer block dots, the
	// float scaling in Go's order), so tolerance 0.
	for _, c := range []struct {
		dt      tensor.DType
		M, K, N int
	}{
		{tensor.Q4_0, 1, 64, 33}, {tensor.Q4_0, 9, 96, 17}, {tensor.Q5_0, 1, 1088, 5}, {tensor.Q5_0, 40, 64, 10 * size},
		{tensor.Q4_K, 1, 256, 33}, {tensor.Q4_K, 9, 512, 17}, {tensor.Q6_K, 1, 512, 33}, {tensor.Q6_K, 40, 256, 10 * size},
		{tensor.Q5_K, 1, 256, 33}, {tensor.Q5_K, 9, 512, 17}, {tensor.Q3_K, 1, 512, 33}, {tensor.Q3_K, 40, 256, 10 * size},
		{tensor.Q2_K, 1, 256, 33}, {tensor.Q2_K, 9, 512, 17}, {tensor.Q4_1, 1, 1088, 5}, {tensor.Q4_1, 9, 96, 17},
		{tensor.Q5_1, 1, 64, 33}, {tensor.Q5_1, 40, 64, 10 * size},
		{tensor.IQ4_NL, 1, 1088, 5}, {tensor.IQ4_NL, 9, 96, 17}, {tensor.IQ4_XS, 1, 256, 33}, {tensor.IQ4_XS, 40, 512, 10 * size},
		{tensor.MXFP4, 1, 1088, 5}, {tensor.MXFP4, 9, 96, 17},
	} {
		x, wf := randT(c.M, c.K), randT(c.N, c.K)
		w, err := tensor.FromBytes(c.dt, tensor.EncodeRow(nil, wf.Data(), c.dt), c.N, c.K)
		if err != nil {
			panic(err)
		}
		cases = append(cases, OpCase{fmt.Sprintf("MatMul %v %v", c.dt, [3]int{c.M, c.K, c.N}), 0, nil,
			op([]int{c.M, c.N}, func(b tensor.Backend, out *tensor.Tensor) { b.MatMul(out, fresh(x), fresh(w)) })})
	}
	// The routed products (fused, tensor.ExpertsBackend): 2 tokens, 3
	// of 4 experts each, x a row per token and a row per chosen expert; the
	// reference is MatMul of each row with its expert's matrix, and the
	// tolerances are MatMul's.
	idsT, err := tensor.FromBytes(tensor.I32, int32Bytes(3, 0, 2, 1, 3, 0), 2, 3)
	if err != nil {
		panic(err)
	}
	for _, dt := range []tensor.DType{tensor.F32, tensor.F16, tensor.BF16, tensor.Q8_0, tensor.Q4_0, tensor.Q5_0,
		tensor.IQ4_NL, tensor.Q4_1, tensor.Q5_1, tensor.Q4_K, tensor.Q6_K, tensor.Q5_K, tensor.Q3_K, tensor.Q2_K, tensor.IQ4_XS,
		tensor.MXFP4} {
		const E, N, K = 4, 17, 256
		wf := randT(E, N, K)
		w, err := tensor.FromBytes(dt, tensor.EncodeRow(nil, wf.Data(), dt), E, N, K)
		if err != nil {
			panic(err)
		}
		for _, rows := range []int{2, 6} {
			x := randT(rows, K)
			tol, slack := 0.0, []float64(nil)
			if dt == tensor.F32 || dt == tensor.F16 || dt == tensor.BF16 || dt == tensor.Q8_0 { // as MatMul's cases
				tol, slack = 1e-5, make([]float64, 6*N)
				for s, e := range []int{3, 0, 2, 1, 3, 0} {
					copy(slack[s*N:], productSlack(x.Row(s*rows/6), wf.Data()[e*N*K:(e+1)*N*K], 1, K, N))
				}
			}
			cases = append(cases, OpCase{fmt.Sprintf("MatMulID %v, %d rows of x", dt, rows), tol, slack,
				op([]int{6, N}, func(b tensor.Backend, out *tensor.Tensor) {
					if eb, ok := b.(tensor.ExpertsBackend); ok {
						eb.MatMulID(out, fresh(x), fresh(w), fresh(idsT))
						return
					}
					for s, e := range []int{3, 0, 2, 1, 3, 0} {
						r := s * rows / 6
						o := tensor.New(1, N)
						b.MatMul(o, fresh(x).Slice(r, r+1), tensor.Select(fresh(w), e))
						copy(out.Row(s), o.Data())
					}
				})})
		}
	}
	// TopK, GatherColumns and WeightedSum against their host forms in
	// toy/tensor (what the tensor functions run without the interface).
	scores := randT(5, 16)
	scores.Data()[3], scores.Data()[9] = scores.Data()[7], scores.Data()[7] // ties
	for _, g := range [][3]int{{4, 1, 1}, {3, 4, 2}, {2, 8, 3}} {
		k, groups, used := g[0], g[1], g[2]
		cases = append(cases, OpCase{fmt.Sprintf("TopK %d in %d groups, %d used", k, groups, used), 0, nil, func(b tensor.Backend) []float32 {
			var ids []int32
			if eb, ok := b.(tensor.ExpertsBackend); ok {
				t, _ := tensor.FromBytes(tensor.I32, make([]byte, 4*5*k), 5, k)
				eb.TopK(t, fresh(scores), k, groups, used)
				ids = t.Int32s()
			} else {
				onHost(func() { ids = tensor.TopK(fresh(scores), k, groups, used).Int32s() })
			}
			out := make([]float32, len(ids))
			for i, id := range ids {
				out[i] = float32(id)
			}
			return out
		}})
	}
	hs, ws := randT(6, D), randT(2, 3)
	cases = append(cases, OpCase{"GatherColumns", 0, nil, op([]int{2, 3}, func(b tensor.Backend, out *tensor.Tensor) {
		if eb, ok := b.(tensor.ExpertsBackend); ok {
			eb.GatherColumns(out, fresh(scores).Slice(0, 2), fresh(idsT))
			return
		}
		onHost(func() { copy(out.Data(), tensor.GatherColumns(fresh(scores).Slice(0, 2), idsT).Data()) })
	})})
	cases = append(cases, OpCase{"RowSumReciprocal", 0, nil, op([]int{2, 1}, func(b tensor.Backend, out *tensor.Tensor) {
		if eb, ok := b.(tensor.ExpertsBackend); ok {
			eb.RowSumReciprocal(out, fresh(ws))
			return
		}
		onHost(func() { copy(out.Data(), tensor.RowSumReciprocal(fresh(ws)).Data()) })
	})})
	cases = append(cases, OpCase{"WeightedSum", 0, nil, op([]int{2, D}, func(b tensor.Backend, out *tensor.Tensor) {
		if eb, ok := b.(tensor.ExpertsBackend); ok {
			eb.WeightedSum(out, fresh(hs), fresh(ws))
			return
		}
		onHost(func() { copy(out.Data(), tensor.WeightedSum(fresh(hs), fresh(ws)).Data()) })
	})})
	R := 5
	x, y, row, w, bias := randT(R, D), randT(R, D), randT(D), randT(D), randT(D)
	shape := []int{R, D}
	add := func(name string, f func(b tensor.Backend, out *tensor.Tensor)) {
		cases = append(cases, OpCase{name, 1e-5, nil, op(shape, f)})
	}
	add("Add", func(b tensor.Backend, o *tensor.Tensor) { b.Add(o, fresh(x), fresh(y)) })
	add("Add row", func(b tensor.Backend, o *tensor.Tensor) { b.Add(o, fresh(x), fresh(row)) })
	add("Mul row", func(b tensor.Backend, o *tensor.Tensor) { b.Mul(o, fresh(x), fresh(row)) })
	add("Scale", func(b tensor.Backend, o *tensor.Tensor) { b.Scale(o, fresh(x), 0.37) })
	add("RMSNorm", func(b tensor.Backend, o *tensor.Tensor) { b.RMSNorm(o, fresh(x), fresh(w), 1e-5) })
	add("RMSNorm no weight", func(b tensor.Backend, o *tensor.Tensor) { b.RMSNorm(o, fresh(x), nil, 1e-6) })
	add("LayerNorm", func(b tensor.Backend, o *tensor.Tensor) { b.LayerNorm(o, fresh(x), fresh(w), fresh(bias), 1e-5) })
	ff := tensor.New(8)
	for i := range ff.Data() {
		ff.Data()[i] = 1 + 7*float32(r.Float64())
	}
	rope := func(pos0, headDim, dim int, base float32, neox bool, ff *tensor.Tensor, s tensor.RoPEScaling) func(b tensor.Backend, o *tensor.Tensor) {
		return func(b tensor.Backend, o *tensor.Tensor) {
			b.RoPE(o, fresh(x), pos0, tensor.RoPEOptions{HeadDim: headDim, Dim: dim, Base: base, NeoX: neox, Factors: fresh(ff), Scaling: s})
		}
	}
	none, linear := tensor.RoPEScaling{}, tensor.RoPEScaling{FreqScale: 0.25}
	yarn := tensor.RoPEScaling{FreqScale: 0.125, ExtFactor: 1, BetaFast: 32, BetaSlow: 1, OrigContext: 64, AttnFactor: 0.9}
	add("RoPE adjacent", rope(7, 16, 16, 10000, false, nil, none))
	add("RoPE neox partial", rope(3, 32, 16, 1e6, true, nil, none))
	add("RoPE factors", rope(300, 16, 16, 5e5, false, ff, none))
	add("RoPE factors neox", rope(5, 32, 16, 1e4, true, ff, none))
	add("RoPE linear", rope(700, 16, 16, 1e4, false, nil, linear))
	add("RoPE YaRN neox", rope(900, 32, 32, 1e4, true, nil, yarn))
	add("Softmax", func(b tensor.Backend, o *tensor.Tensor) { b.Softmax(o, fresh(x), -1) })
	add("Softmax causal", func(b tensor.Backend, o *tensor.Tensor) { b.Softmax(o, fresh(x), 2) })
	add("SiLU", func(b tensor.Backend, o *tensor.Tensor) { b.SiLU(o, fresh(x)) })
	add("GELU", func(b tensor.Backend, o *tensor.Tensor) { b.GELU(o, fresh(x)) })
	add("Tanh", func(b tensor.Backend, o *tensor.Tensor) { b.Tanh(o, fresh(x)) })
	wide := randT(R, D)
	for i := range wide.Data() {
		wide.Data()[i] *= 3 // the exact GELU's tails as well as its bend
	}
	add("GELUErf", func(b tensor.Backend, o *tensor.Tensor) { b.GELUErf(o, fresh(wide)) })
	add("SwiGLU", func(b tensor.Backend, o *tensor.Tensor) { b.SwiGLU(o, fresh(x), fresh(y)) })
	// SwiGLUOAI: gpt-oss's alpha and limit on inputs spread to ±3·limit, so
	// that both clamps bite, and a tight limit on x and y.
	spread := []*tensor.Tensor{randT(R, D), randT(R, D)}
	for _, t := range spread {
		for i := range t.Data() {
			t.Data()[i] *= 7
		}
	}
	for _, c := range []struct {
		g, u         *tensor.Tensor
		alpha, limit float32
	}{{spread[0], spread[1], 1.702, 7}, {x, y, 1.702, 0.8}} {
		add(fmt.Sprintf("SwiGLUOAI alpha=%g limit=%g", c.alpha, c.limit), func(b tensor.Backend, o *tensor.Tensor) {
			b.SwiGLUOAI(o, fresh(c.g), fresh(c.u), c.alpha, c.limit)
		})
	}
	// Sigmoid and Softplus on inputs spread to ±21, past softplus's
	// threshold.
	spread21 := randT(R, D)
	for i := range spread21.Data() {
		spread21.Data()[i] *= 7
	}
	spread21.Data()[0], spread21.Data()[1] = 20, 20.5
	add("Sigmoid", func(b tensor.Backend, o *tensor.Tensor) { b.Sigmoid(o, fresh(spread21)) })
	add("Softplus", func(b tensor.Backend, o *tensor.Tensor) { b.Softplus(o, fresh(spread21)) })
	// CausalConv: 4 taps over a past and without one, one position
	// (decode) and several.
	for _, c := range []struct {
		T    int
		past bool
	}{{1, true}, {6, true}, {5, false}} {
		x, taps, past := randT(c.T, D), randT(D, 4), randT(1, 3*D)
		cases = append(cases, OpCase{fmt.Sprintf("CausalConv %+v", c), 1e-5, nil, op([]int{c.T, D}, func(b tensor.Backend, o *tensor.Tensor) {
			var p *tensor.Tensor
			if c.past {
				p = fresh(past)
			}
			b.CausalConv(o, p, fresh(x), fresh(taps))
		})})
	}
	// GatedDeltaNet (fused, tensor.GatedDeltaNetBackend): the output
	// and the state it leaves, from zeros and from a given state; key heads
	// shared by 2 value heads; head widths that fill one block of columns,
	// split over several (160), or end in a partial group of four (6).
	for _, c := range []struct {
		T, Hk, Hv, D int
		state        bool
	}{{1, 2, 4, 16, true}, {5, 1, 2, 6, false}, {7, 2, 2, 160, true}, {3 * size, 2, 4, 32, true}, {2, 1, 1, 8, false}} {
		q, k, v := randT(c.T, c.Hk*c.D), randT(c.T, c.Hk*c.D), randT(c.T, c.Hv*c.D)
		g, beta := randT(c.T, c.Hv), randT(c.T, c.Hv)
		for i := range g.Data() {
			g.Data()[i] = -float32(math.Abs(float64(g.Data()[i]))) // a decay ≤ 1
			beta.Data()[i] = 1 / (1 + float32(math.Exp(float64(-beta.Data()[i]))))
		}
		var S0 *tensor.Tensor
		if c.state {
			S0 = randT(c.Hv, c.D*c.D)
		}
		clear(q.Data()[:c.D]) // a zero row of q: ‖q‖ < eps
		cases = append(cases, OpCase{fmt.Sprintf("GatedDeltaNet %+v", c), 1e-5, nil, func(b tensor.Backend) []float32 {
			var o, S *tensor.Tensor
			if S0 != nil {
				S = fresh(S0)
			}
			if gb, ok := b.(tensor.GatedDeltaNetBackend); ok {
				o = tensor.New(c.T, c.Hv*c.D)
				gb.GatedDeltaNet(o, fresh(q), fresh(k), fresh(v), fresh(g), fresh(beta), S, 1e-6)
			} else {
				onHost(func() { o = tensor.GatedDeltaNet(fresh(q), fresh(k), fresh(v), fresh(g), fresh(beta), S, 1e-6) })
			}
			res := o.Float32s()
			if S != nil {
				res = append(res, S.Float32s()...)
			}
			return res
		}})
	}
	ids := []int32{3, 0, 7, 3}
	for _, dt := range []tensor.DType{tensor.F32, tensor.F16, tensor.BF16, tensor.Q8_0, tensor.Q4_0, tensor.Q5_0, tensor.Q4_1,
		tensor.Q5_1, tensor.Q2_K, tensor.Q3_K, tensor.Q4_K, tensor.Q5_K, tensor.Q6_K, tensor.IQ4_NL, tensor.IQ4_XS, tensor.MXFP4} {
		D := D
		if dt.BlockSize() == quant.QK {
			D = 2 * quant.QK
		}
		tf := randT(8, D)
		table, _ := tensor.FromBytes(dt, tensor.EncodeRow(nil, tf.Data(), dt), 8, D)
		cases = append(cases, OpCase{"Embedding " + dt.String(), 0, nil, op([]int{len(ids), D}, func(b tensor.Backend, o *tensor.Tensor) {
			b.Embedding(o, fresh(table), ids)
		})})
	}
	// Attention, one pass (toy_attention) and split-K (attnSplit: "split"
	// in the name): decode over 701 and 1536/1537 keys (the second query's
	// last chunk holds one key the first does not see), grouped heads, head
	// widths that split the chunk kernel's block into 4, 3 (threads left
	// over), 1 (dh 160 and 256) or 16 key groups; each side of the
	// threshold, 127/128 keys; prompts (many query rows over their own
	// keys, causal). Then the options: soft-
	// capped scores, sliding windows (shorter and longer than a chunk, in
	// both kernels) and bidirectional attention. Last, attention sinks
	// (gpt-oss) in both kernels and with each option: a logit per head, one
	// large enough to be the softmax's max and one −∞ (no sink).
	type attnCase struct {
		T, H, KV, dh, past int
		cap                float32
		window             int
		bidir              bool
	}
	plain := []attnCase{{1, 4, 2, 16, 5, 0, 0, false}, {4, 4, 4, 16, 0, 0, 0, false}, {3, 8, 2, 32, 9 * size, 0, 0, false},
		{1, 4, 1, 64, 700, 0, 0, false}, {2, 8, 2, 64, 1535, 0, 0, false}, {1, 3, 1, 80, 600, 0, 0, false}, {1, 2, 1, 160, 520, 0, 0, false},
		{1, 4, 2, 64, 510, 0, 0, false}, {1, 4, 2, 64, 511, 0, 0, false}, {16, 16, 4, 16, 496, 0, 0, false}, {17, 15, 5, 16, 500, 0, 0, false},
		{1, 4, 2, 64, 126, 0, 0, false}, {1, 4, 2, 64, 127, 0, 0, false}, {1, 2, 2, 256, 300, 0, 0, false},
		{130, 4, 2, 32, 0, 0, 0, false}, {70, 6, 3, 16, 100, 0, 0, false}, {200, 2, 1, 64, 0, 0, 90, false}, {150, 3, 3, 8, 0, 0, 0, true},
		{5, 4, 2, 16, 7, 0.5, 0, false}, {6, 4, 2, 16, 9, 50, 4, false}, {2, 8, 2, 64, 1000, 2, 300, false},
		{1, 4, 1, 64, 700, 0, 600, false}, {7, 3, 3, 8, 0, 0, 0, true}, {4, 2, 1, 8, 3, 1, 0, true}}
	sinks := []attnCase{{1, 4, 2, 16, 5, 0, 0, false}, {4, 4, 2, 32, 3, 0, 0, false}, {6, 4, 2, 16, 9, 50, 4, false},
		{4, 2, 1, 8, 3, 1, 0, true}, {1, 4, 1, 64, 700, 0, 0, false}, {2, 8, 2, 64, 1535, 0, 0, false},
		{2, 8, 2, 64, 1000, 2, 300, false}, {1, 4, 2, 64, 511, 0, 0, false}}
	for i, a := range append(plain, sinks...) {
		S := a.past + a.T
		q, k, v := randT(a.T, a.H*a.dh), randT(S+2, a.KV*a.dh), randT(S+2, a.KV*a.dh)
		name := "Attention "
		if attnSplit(a.T, a.H, S, a.dh, a.bidir) > 0 {
			name += "split "
		}
		withSinks := i >= len(plain)
		if withSinks {
			name += "sinks "
		}
		name += fmt.Sprintf("%+v", a)
		o := tensor.AttentionOptions{Scale: 0.125, SoftCap: a.cap, Window: a.window, Bidirectional: a.bidir}
		if a.cap > 0 {
			o.Scale = 0.5 // scores well into tanh's curve
		}
		if withSinks {
			o.Sinks = randT(a.H)
			o.Sinks.Data()[0] = 6                         // above every score: the max
			o.Sinks.Data()[a.H-1] = float32(math.Inf(-1)) // no sink
		}
		cases = append(cases, OpCase{name, 1e-5, nil, op([]int{a.T, a.H * a.dh}, func(b tensor.Backend, out *tensor.Tensor) {
			o := o
			o.Sinks = fresh(o.Sinks)
			b.Attention(out, fresh(q), fresh(k), fresh(v), a.H, a.KV, a.past, o)
		})})
	}
	cache, src := randT(6, D), randT(2, D)
	cases = append(cases, OpCase{"SetRows", 0, nil, func(b tensor.Backend) []float32 {
		dst := fresh(cache)
		b.SetRows(dst, 3, fresh(src))
		return dst.Float32s()
	}})
	cases = append(cases, OpCase{"Columns", 0, nil, op([]int{R, 24}, func(b tensor.Backend, o *tensor.Tensor) {
		b.Columns(o, fresh(x), 8)
	})})
	// PlaceColumns: x's 24 columns from 8 and then its first 8, side by
	// side.
	cases = append(cases, OpCase{"PlaceColumns", 0, nil, op([]int{R, 32}, func(b tensor.Backend, out *tensor.Tensor) {
		left, right := tensor.New(R, 24), tensor.New(R, 8)
		for r := 0; r < R; r++ {
			copy(left.Row(r), x.Row(r)[8:32])
			copy(right.Row(r), x.Row(r)[:8])
		}
		b.PlaceColumns(out, fresh(left), 0)
		b.PlaceColumns(out, fresh(right), 24)
	})})
	// ScatterAdd: row 2 gets two rows, in order.
	ids, rows, wts := []int32{2, 0, 2, 5}, randT(4, D), randT(4, 1)
	for _, scaled := range []bool{true, false} {
		cases = append(cases, OpCase{fmt.Sprintf("ScatterAdd scaled=%v", scaled), 0, nil, op([]int{6, D}, func(b tensor.Backend, o *tensor.Tensor) {
			var s *tensor.Tensor
			if scaled {
				s = fresh(wts)
			}
			b.ScatterAdd(o, fresh(cache), fresh(rows), ids, s)
		})})
	}
	return cases
}

// onHost runs f with pure Go active: the plain paths of the fused ops,
// which tensor's functions run when the backend has no kernel.
func onHost(f func()) {
	old := tensor.ActiveBackend()
	tensor.SetBackend(tensor.Go{})
	defer tensor.SetBackend(old)
	f()
}

// int32Bytes returns v's elements as little-endian bytes (an I32 tensor's).
func int32Bytes(v ...int32) []byte {
	b := make([]byte, 0, 4*len(v))
	for _, x := range v {
		b = binary.LittleEndian.AppendUint32(b, uint32(x))
	}
	return b
}
