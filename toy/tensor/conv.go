// A depthwise causal convolution over time (LFM2's short convolutions,
// Qwen3.5's before the delta rule).

package tensor

import "fmt"

// CausalConv convolves each channel of x [T, C] over time with its own L
// taps, row c of taps [C, L]:
//
//	y_t = Σ_{j<L} taps[:, j] ⊙ x_{t−L+1+j}
//
// where the L−1 positions before x come from past, flat [1, (L−1)·C]
// (oldest first; nil for zeros, the start of a sequence). Each product is
// rounded, then they are added in tap order, ((p_0 + p_1) + p_2) + …, as
// llama.cpp's ggml_ssm_conv sums them. Gradients flow to x, taps and past.
func CausalConv(past, x, taps *Tensor) *Tensor {
	mustF32("CausalConv", "x", x)
	mustF32("CausalConv", "taps", taps)
	T, C := x.Rows(), x.Cols()
	if len(taps.shape) != 2 || taps.Rows() != C || taps.Cols() < 1 {
		panic(fmt.Sprintf("CausalConv: x %v, taps %v: want taps [%d, L ≥ 1]", x.shape, taps.shape, C))
	}
	L := taps.Cols()
	if past != nil {
		mustF32("CausalConv", "past", past)
		if past.Len() != (L-1)*C {
			panic(fmt.Sprintf("CausalConv: past %v, want (L−1)·C = %d values", past.shape, (L-1)*C))
		}
	}
	b := beFor(past, x, taps)
	out := newOut(b, T, C)
	b.CausalConv(out, past, x, taps)
	record("CausalConv", out, func(g *Tensor) []*Tensor {
		dpast, dx, dtaps := causalConvGrad(g.f32, past, x.f32, taps.f32, T, C, L)
		return []*Tensor{dpast, FromFloat32(dx, T, C), FromFloat32(dtaps, C, L)}
	}, past, x, taps)
	return out
}

// CausalConv is the pure-Go causal convolution.
func (Go) CausalConv(out, past, x, taps *Tensor) {
	var pv []float32
	if past != nil {
		pv = past.f32
	}
	causalConv(out.f32, pv, x.f32, taps.f32, x.Rows(), x.Cols(), taps.Cols())
}

// causalConv writes y [T, C]; past is nil or [(L−1)·C]. Row t reads
// position t−L+1+j for tap j: past's row L−1+(t−L+1+j) when that is
// negative (zeros without a past), else x's.
func causalConv(y, past, x, taps []float32, T, C, L int) {
	var zeros []float32
	if past == nil {
		zeros = make([]float32, C)
	}
	parallelFor(T, max(1, 4096/max(C, 1)), func(lo, hi int) {
		rows := make([][]float32, L)
		for t := lo; t < hi; t++ {
			for j := range rows {
				if rows[j] = inputRow(past, x, t-L+1+j, C, L); rows[j] == nil {
					rows[j] = zeros
				}
			}
			yt := y[t*C : (t+1)*C]
			if L == 4 { // Qwen3.5's and Qwen3-Next's four taps, unrolled
				r0, r1, r2, r3 := rows[0][:C], rows[1][:C], rows[2][:C], rows[3][:C]
				for c := range yt {
					w := taps[c*4 : c*4+4 : c*4+4]
					// Each product rounded (no fused multiply-add), then
					// added in tap order.
					yt[c] = ((float32(r0[c]*w[0]) + float32(r1[c]*w[1])) + float32(r2[c]*w[2])) + float32(r3[c]*w[3])
				}
				continue
			}
			for c := range yt {
				w := taps[c*L : c*L+L]
				s := rows[0][c] * w[0]
				for j := 1; j < L; j++ {
					s += float32(rows[j][c] * w[j])
				}
				yt[c] = s
			}
		}
	})
}

// inputRow returns the C inputs of position p (negative: from past, nil
// when past is nil).
func inputRow(past, x []float32, p, C, L int) []float32 {
	if p >= 0 {
		return x[p*C : (p+1)*C]
	}
	if past == nil {
		return nil
	}
	r := L - 1 + p
	return past[r*C : (r+1)*C]
}

// causalConvGrad returns the gradients of past (nil when past is nil), x
// and taps given g, the output's gradient [T, C].
func causalConvGrad(g []float32, past *Tensor, x, taps []float32, T, C, L int) (*Tensor, []float32, []float32) {
	var pv, dpv []float32
	if past != nil {
		pv = past.f32
		dpv = make([]float32, len(pv))
	}
	dx, dtaps := make([]float32, T*C), make([]float32, C*L)
	for t := range T {
		gt := g[t*C : (t+1)*C]
		for j := range L {
			p := t - L + 1 + j
			src := inputRow(pv, x, p, C, L)
			if src == nil {
				continue
			}
			dsrc := inputRow(dpv, dx, p, C, L)
			for c, gv := range gt {
				dsrc[c] += float32(gv * taps[c*L+j])
				dtaps[c*L+j] += float32(gv * src[c])
			}
		}
	}
	if past == nil {
		return nil, dx, dtaps
	}
	return FromFloat32(dpv, past.shape...), dx, dtaps
}
