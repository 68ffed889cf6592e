// The weighted searches RowQuantizer runs when given importances: what
// llama.cpp's quantizer writes with an importance matrix (llama-quantize
// --imatrix, ggml's quantize_row_<type>_impl). The imatrix holds, per column, the
// mean squared activation that multiplies it; a weight's error then counts
//
//	w_i = imatrix_i · √(σ² + x_i²)
//
// with σ² a mean square of the weights around it (of its super-block, or
// of its row for Q4_0 … Q5_1), so that both the input's importance and the
// weight's own size matter. Q6_K weighs by the imatrix alone.
//
// The searches reuse the unweighted fits of kquantize.go (fitAffine,
// fitSymmetric, iq4Step) with these weights, but they choose the
// super-block scales differently: rather than the largest sub-block scale
// over 63 (or 15), fitShares fits one step to all the sub-block scales,
// weighted by each sub-block's total importance. As in kquantize.go, the
// arithmetic is float32 in ggml's order with no fused multiply-adds.

package quant

import (
	"encoding/binary"
	"math"
)

// sumSquares returns Σ x², added in order.
func sumSquares(x []float32) float32 {
	var s float32
	for _, v := range x {
		s += float32(v * v)
	}
	return s
}

// sum returns Σ x, added in order.
func sum(x []float32) float32 {
	var s float32
	for _, v := range x {
		s += v
	}
	return s
}

// importanceWeights sets w_i = qw_i·√(σ² + x_i²), the weight of an error in
// x_i given the importance qw_i of its column.
func importanceWeights(w, x, qw []float32, sigma2 float32) {
	for i, v := range x {
		w[i] = qw[i] * float32(math.Sqrt(float64(sigma2+float32(v*v))))
	}
}

// fitShares fits the (sub-block scales) x ≈ scale·l with l in 0 … nmax,
// minimizing Σ w·err², and stores l in L. The step max/nmax and eight
// neighbours, max/(nmax ± 0.1·k) for k = 1 … 4, are tried by their error;
// from the best one's levels, up to five passes move single values to the
// level the least-squares scale of the others asks for, x·Σwl²/Σwxl, when
// that raises (Σwxl)²/Σwl². It returns Σwxl/Σwl². A set whose largest value
// is below ggml's epsilon gets all zeros. (ggml's make_qp_quants.)
func fitShares(x []float32, nmax int, L []uint8, w []float32) float32 {
	var top float32
	for _, v := range x {
		if !(top > v) { // C's MAX(top, v): a NaN is taken
			top = v
		}
	}
	if top < groupMaxEps {
		clear(L)
		return 0
	}
	n := float32(nmax)
	// sqErr is Σ w·(x − s·l)², l = round(iscale·x) capped at nmax (at the
	// first step, as ggml does, only wrapped to a byte).
	sqErr := func(iscale, s float32, capped bool) float32 {
		var e float32
		for i, v := range x {
			l := nearestInt(iscale * v)
			if capped {
				l = min(nmax, l)
			} else {
				l = int(uint8(l))
			}
			diff := v - float32(s*float32(l))
			e += float32(w[i] * diff * diff)
		}
		return e
	}
	iscale := n / top
	best := sqErr(iscale, 1/iscale, false)
	const tenth float32 = 0.1
	for k := -4; k <= 4; k++ {
		if k == 0 {
			continue
		}
		ik := (float32(tenth*float32(k)) + n) / top
		if e := sqErr(ik, 1/ik, true); e < best {
			best, iscale = e, ik
		}
	}
	var sumLX, sumL2 float32
	for i, v := range x {
		l := min(nmax, nearestInt(iscale*v))
		L[i] = uint8(l)
		fl := float32(l) // the level before its wrap to a byte, as ggml adds it
		sumLX += float32(w[i] * v * fl)
		sumL2 += float32(w[i] * fl * fl)
	}
	for pass := 0; pass < 5; pass++ {
		changed := false
		for i, v := range x {
			fl := float32(L[i])
			slx := sumLX - float32(w[i]*v*fl)
			sl2 := sumL2 - float32(w[i]*fl*fl)
			if !(slx > 0 && sl2 > 0) {
				continue
			}
			l := min(nmax, nearestInt(v*sl2/slx))
			if l == int(L[i]) {
				continue
			}
			fl = float32(l)
			slx += float32(w[i] * v * fl)
			sl2 += float32(w[i] * fl * fl)
			if slx*slx*sumL2 > sumLX*sumLX*sl2 {
				L[i], sumLX, sumL2 = uint8(l), slx, sl2
				changed = true
			}
		}
		if !changed {
			break
		}
	}
	if sumL2 > 0 {
		return sumLX / sumL2
	}
	return 0
}

// q2KScalesWeighted is q2KScales with importances qw: per 16-weight group
// an affine fit over 0 … 3 (errors squared and weighted by
// importanceWeights, σ² the super-block's mean square; step counts
// 2.1 … 3.9), then the group scales and offsets as 4-bit shares of steps
// d and dmin found by fitShares, each weighted by the groups' total
// importance.
func q2KScalesWeighted(sc []byte, x, qw []float32, L *[QK]uint8) (d, dmin uint16) {
	var aux [16]uint8
	var w [16]float32
	var scales, mins, sw [QK / 16]float32
	sigma2 := sumSquares(x) / QK
	for j := range scales {
		xs := x[16*j : 16*(j+1)]
		importanceWeights(w[:], xs, qw[16*j:16*(j+1)], sigma2)
		sw[j] = sum(w[:])
		scales[j], mins[j] = fitAffine(xs, w[:], 3, L[16*j:16*(j+1)], aux[:], -0.9, 0.05, 36, false)
	}
	var ls, lm [QK / 16]uint8
	dm := fitShares(scales[:], 15, ls[:], sw[:])
	mm := fitShares(mins[:], 15, lm[:], sw[:])
	for j := range sc {
		sc[j] = ls[j] | lm[j]<<4
	}
	return F32ToFP16(dm), F32ToFP16(mm)
}

// q3KSharesWeighted is q3KShares with importances qw: per 16-weight group
// a symmetric fit over −4 … 3 (fitSymmetric, errors weighted by
// importanceWeights, σ² twice the super-block's mean square), then the
// group scales as signed 6-bit shares, stored + 32, of a step d found by
// fitSymmetric, weighted by the groups' total importance.
func q3KSharesWeighted(shares *[QK / 16]uint8, x, qw []float32, L *[QK]int8) uint16 {
	var w [16]float32
	var scales, sw [QK / 16]float32
	sigma2 := 2 * sumSquares(x) / QK
	for j := range scales {
		xs := x[16*j : 16*(j+1)]
		importanceWeights(w[:], xs, qw[16*j:16*(j+1)], sigma2)
		sw[j] = sum(w[:])
		scales[j] = fitSymmetric(xs, 4, L[16*j:16*(j+1)], w[:])
	}
	var ls [QK / 16]int8
	d := fitSymmetric(scales[:], 32, ls[:], sw[:])
	for j, l := range ls {
		shares[j] = uint8(l)
	}
	return F32ToFP16(d)
}

// affineScalesWeighted is affineScales with importances qw: per 32-weight
// sub-block an affine fit over 0 … nmax (errors weighted by
// importanceWeights, σ² twice the super-block's mean square; step counts
// nmax − 0.9 … nmax + 0.9), then the sub-block scales and offsets as 6-bit
// shares of steps d and dmin found by fitShares, each weighted by the
// sub-blocks' total importance.
func affineScalesWeighted(ls, lm *[QK / 32]uint8, x, qw []float32, nmax int, L *[QK]uint8) (d, dmin uint16) {
	var aux [32]uint8
	var w [32]float32
	var scales, mins, sw [QK / 32]float32
	sigma2 := 2 * sumSquares(x) / QK
	for j := range scales {
		xs := x[32*j : 32*(j+1)]
		importanceWeights(w[:], xs, qw[32*j:32*(j+1)], sigma2)
		sw[j] = sum(w[:])
		scales[j], mins[j] = fitAffine(xs, w[:], nmax, L[32*j:32*(j+1)], aux[:], -0.9, 0.05, 36, false)
	}
	dBlock := fitShares(scales[:], 63, ls[:], sw[:])
	mBlock := fitShares(mins[:], 63, lm[:], sw[:])
	if nmax == 31 {
		// Q5_K caps the shares at 63 and Q4_K does not: they pass 63 only
		// when a negative sub-block scale wraps, and then differ.
		for j := range ls {
			ls[j], lm[j] = min(63, ls[j]), min(63, lm[j])
		}
	}
	return F32ToFP16(dBlock), F32ToFP16(mBlock)
}

// searchQ32Row writes a row of Q4_0, Q5_0, Q4_1 or Q5_1 blocks fitted with
// importances qw (errors weighted by importanceWeights, σ² the row's mean
// square): Q4_0 and Q5_0 a symmetric fit (fitSymmetric) over −8 … 7 or
// −16 … 15, Q4_1 and Q5_1 an affine fit (fitAffine) over 0 … 15 or
// 0 … 31 with step counts nmax − 0.9 … nmax + 0.9. The levels are the
// fit's, not re-rounded against the fp16 scale.
func searchQ32Row(t Type, dst []byte, x, qw []float32) {
	// The nibbles (weight j low, j+16 high) follow the scales and, in the
	// 5-bit types, a 32-bit word of fifth bits (bit i for weight i).
	bytes, qs := t.TypeSize(), 2 // Q4_0: fp16 d, nibbles
	switch t {
	case Q5_0: // d, fifth bits, nibbles
		qs = 6
	case Q4_1: // d, m, nibbles
		qs = 4
	case Q5_1: // d, m, fifth bits, nibbles
		qs = 8
	}
	sigma2 := sumSquares(x) / float32(len(x))
	var w [32]float32
	for b := 0; b < len(x)/32; b++ {
		xb := x[32*b : 32*(b+1)]
		blk := dst[b*bytes : (b+1)*bytes]
		importanceWeights(w[:], xb, qw[32*b:32*(b+1)], sigma2)
		var q [32]uint8
		switch t {
		case Q4_0, Q5_0:
			nmax := 8
			if t == Q5_0 {
				nmax = 16
			}
			var L [32]int8
			d := fitSymmetric(xb, nmax, L[:], w[:])
			binary.LittleEndian.PutUint16(blk, F32ToFP16(d))
			for i, l := range L {
				q[i] = uint8(l)
			}
		case Q4_1, Q5_1:
			nmax := 15
			if t == Q5_1 {
				nmax = 31
			}
			var aux [32]uint8
			d, m := fitAffine(xb, w[:], nmax, q[:], aux[:], -0.9, 0.05, 36, false)
			binary.LittleEndian.PutUint16(blk, F32ToFP16(d))
			binary.LittleEndian.PutUint16(blk[2:], F32ToFP16(-m))
		}
		var qh uint32
		for j := 0; j < 16; j++ {
			blk[qs+j] = q[j]&0xF | (q[j+16]&0xF)<<4
			qh |= uint32(q[j]>>4&1)<<j | uint32(q[j+16]>>4&1)<<(j+16)
		}
		if t == Q5_0 || t == Q5_1 {
			binary.LittleEndian.PutUint32(blk[qs-4:], qh)
		}
	}
}
