// Quantizers that write what llama.cpp's quantizer writes: for every block
// type, the bytes of ggml's ggml_quantize_chunk, without an importance
// matrix (llama-quantize without --imatrix) or with one (--imatrix; the
// weighted searches are in wquantize.go). The k-quants and IQ4 types search
// for their scales: a few candidate steps per (sub-)block, each followed by
// a weighted least-squares fit, keeping the one of least error; the
// super-block scale is then rounded to fp16 and every weight re-rounded
// against the scale actually stored.
//
// The arithmetic is float32 in ggml's order, and every product that is then
// added is converted to float32 explicitly, so that no platform fuses it
// into a multiply-add (ggml's reference build does not), and the bytes are
// the same everywhere. tests/quantize gates them against llama.cpp itself.
//
// The simple quantizers QuantizeQ4K, QuantizeQ6K, … of kquant.go stay as
// they are: the gate models of tests/reference are written with them, and
// their llama.cpp goldens record those exact bytes.

package quant

import (
	"encoding/binary"
	"math"
)

// groupMaxEps is ggml's threshold below which a group counts as all zero.
const groupMaxEps = 1e-15

// RowQuantizer returns the function that writes one row of type t into
// dst (exactly the row's bytes; len(x) a whole number of t's blocks) as
// llama.cpp's ggml_quantize_chunk does, with the row's importances qw, one
// per column (nil: none), or nil when t cannot be written (I32, or a ggml
// type toy does not compute with). The k-quants and IQ4 types run ggml's
// scale searches, Q4_0 … Q5_1 its reference rounding (with importances,
// its weighted search over the row), Q8_0 and MXFP4 its rounding; F16 and
// BF16 round to nearest even, F32 is copied. Types that take no
// importances ignore qw, as llama.cpp does.
func RowQuantizer(t Type) func(dst []byte, x, qw []float32) {
	blocks := func(size, bytes int, block func(dst []byte, x, qw []float32)) func([]byte, []float32, []float32) {
		return func(dst []byte, x, qw []float32) {
			for b := 0; b < len(x)/size; b++ {
				var w []float32
				if qw != nil {
					w = qw[b*size : (b+1)*size]
				}
				block(dst[b*bytes:(b+1)*bytes], x[b*size:(b+1)*size], w)
			}
		}
	}
	// unweighted writes a type that takes no importances.
	unweighted := func(quantize func([]byte, []float32) []byte) func([]byte, []float32, []float32) {
		return func(dst []byte, x, _ []float32) { quantize(dst[:0], x) } // dst has exactly the room: written in place
	}
	// legacy writes Q4_0 … Q5_1: the reference rounding, or with
	// importances the weighted search over the whole row.
	legacy := func(quantize func([]byte, []float32) []byte) func([]byte, []float32, []float32) {
		return func(dst []byte, x, qw []float32) {
			if qw == nil {
				quantize(dst[:0], x)
				return
			}
			searchQ32Row(t, dst, x, qw)
		}
	}
	switch t {
	case Q2_K:
		return blocks(QK, q2KBytes, searchQ2K)
	case Q3_K:
		return blocks(QK, q3KBytes, searchQ3K)
	case Q4_K:
		return blocks(QK, q4KBytes, searchQ4K)
	case Q5_K:
		return blocks(QK, q5KBytes, searchQ5K)
	case Q6_K:
		return blocks(QK, q6KBytes, searchQ6K)
	case IQ4_NL:
		return blocks(32, iq4NLBytes, searchIQ4NL)
	case IQ4_XS:
		return blocks(QK, iq4XSBytes, searchIQ4XS)
	case Q8_0:
		return blocks(Q8BlockSize, Q8BlockLen, func(dst []byte, x, _ []float32) { roundQ8_0(dst, x) })
	case Q4_0:
		return legacy(QuantizeQ4_0)
	case Q5_0:
		return legacy(QuantizeQ5_0)
	case Q4_1:
		return legacy(QuantizeQ4_1)
	case Q5_1:
		return legacy(QuantizeQ5_1)
	case MXFP4:
		return unweighted(QuantizeMXFP4)
	case F32, F16, BF16:
		return unweighted(func(dst []byte, x []float32) []byte { return EncodeRow(dst, x, t) })
	}
	return nil
}

// nearestInt rounds to the nearest integer, ties to even, as ggml does:
// adding 1.5·2²³ leaves the integer in the low mantissa bits (exact for
// |f| < 2²²; beyond, it gives ggml's same wrong answer). The conversion
// rounds f first: once inlined, a product passed as f could otherwise be
// fused with the addition.
func nearestInt(f float32) int {
	return int(math.Float32bits(float32(f)+12582912)&0x007fffff) - 0x00400000
}

func absf(v float32) float32 { return math.Float32frombits(math.Float32bits(v) &^ (1 << 31)) }

// clampInt returns v limited to [lo, hi].
func clampInt(v, lo, hi int) int { return max(lo, min(hi, v)) }

// largest returns the element of largest magnitude, sign kept, and its
// magnitude (the first one, on ties).
func largest(x []float32) (m, amax float32) {
	for _, v := range x {
		if a := absf(v); a > amax {
			amax, m = a, v
		}
	}
	return m, amax
}

// fitAffine fits x ≈ scale·L − m with L in 0 … nmax and m ≥ 0 (a range
// [min(x, 0), max(x)] in nmax steps to start), minimizing Σ w·|err| (mad)
// or Σ w·err². It tries the step counts nmax + rmin + rdelta·k for
// k = 0 … nstep: for each the levels are rounded, then scale and offset
// solved by weighted least squares,
//
//	D = Σw·Σwl² − (Σwl)²,  scale = (Σw·Σwlx − Σwx·Σwl)/D,  −m = (Σwl²·Σwx − Σwl·Σwlx)/D,
//
// with m = 0 (and scale = Σwlx/Σwl²) when that offset comes out positive.
// A candidate of less error than the best so far also moves the range's
// low end, −m, that the later candidates round against (as ggml does). It
// returns scale and m, the levels in L (aux is scratch of len(x), at most
// 32). (ggml's make_qkx2_quants.)
func fitAffine(x, w []float32, nmax int, L, aux []uint8, rmin, rdelta float32, nstep int, mad bool) (scale, m float32) {
	n := len(x)
	w, L, aux = w[:n], L[:n], aux[:n]
	lo, hi := x[0], x[0]
	sumW := w[0]
	sumX := float32(sumW * x[0])
	for i := 1; i < n; i++ {
		if x[i] < lo {
			lo = x[i]
		}
		if x[i] > hi {
			hi = x[i]
		}
		sumW += w[i]
		sumX += float32(w[i] * x[i])
	}
	if lo > 0 {
		lo = 0
	}
	if hi == lo {
		clear(L)
		return 0, -lo
	}
	var shifted [32]float32 // x − lo (lo = −m), recomputed when a candidate moves lo
	shift := func() {
		for i, v := range x {
			shifted[i] = v - lo
		}
	}
	shift()
	// weightedErr is Σ w·|s·l + off − x| (mad) or Σ w·(s·l + off − x)².
	weightedErr := func(s, off float32, l []uint8) float32 {
		var e float32
		if mad {
			for i, v := range x {
				e += float32(w[i] * absf(float32(s*float32(l[i]))+off-v))
			}
			return e
		}
		for i, v := range x {
			d := float32(s*float32(l[i])) + off - v
			e += float32(w[i] * (d * d))
		}
		return e
	}
	fmax := float32(nmax)
	iscale := fmax / (hi - lo)
	scale = 1 / iscale
	for i := range L {
		L[i] = uint8(clampInt(nearestInt(iscale*shifted[i]), 0, nmax))
	}
	best := weightedErr(scale, lo, L)
	for k := 0; k <= nstep; k++ {
		iscale = (rmin + float32(rdelta*float32(k)) + fmax) / (hi - lo)
		var sumL, sumL2, sumXL float32
		for i, v := range x {
			l := clampInt(nearestInt(iscale*shifted[i]), 0, nmax)
			aux[i] = uint8(l)
			wl := float32(w[i] * float32(l))
			sumL += wl
			sumL2 += float32(wl * float32(l))
			sumXL += float32(wl * v)
		}
		D := float32(sumW*sumL2) - float32(sumL*sumL)
		if !(D > 0) { // not D <= 0: a NaN skips the candidate, as in ggml
			continue
		}
		s := (float32(sumW*sumXL) - float32(sumX*sumL)) / D
		off := (float32(sumL2*sumX) - float32(sumL*sumXL)) / D
		if off > 0 {
			off, s = 0, sumXL/sumL2
		}
		if e := weightedErr(s, off, aux); e < best {
			copy(L, aux)
			best, scale, lo = e, s, off // the later candidates start from this offset
			shift()
		}
	}
	return scale, -lo
}

// fitSymmetric fits x ≈ scale·l with l in −nmax … nmax−1, weighing errors
// by w (nil: by x²), and stores l + nmax in L. The first step sends the
// element of largest magnitude to −nmax; 18 more, −(nmax ± 0.1·k)/max for
// k = 1 … 9, are tried; each gets its least-squares scale Σwxl/Σwl², and
// the one with the largest (Σwxl)²/Σwl² (the least error) is kept. (ggml's
// make_qx_quants, rmse_type 1.)
func fitSymmetric(x []float32, nmax int, L []int8, w []float32) float32 {
	top, amax := largest(x)
	if amax < groupMaxEps {
		clear(L)
		return 0
	}
	n := float32(nmax)
	sums := func(iscale float32) (sumLX, sumL2 float32) {
		for i, v := range x {
			l := float32(clampInt(nearestInt(iscale*v), -nmax, nmax-1))
			wi := v * v
			if w != nil {
				wi = w[i]
			}
			sumLX += float32(wi * v * l)
			sumL2 += float32(wi * l * l)
		}
		return sumLX, sumL2
	}
	store := func(iscale float32) {
		for i, v := range x {
			L[i] = int8(nmax + clampInt(nearestInt(iscale*v), -nmax, nmax-1))
		}
	}
	iscale := -n / top
	store(iscale)
	sumLX, sumL2 := sums(iscale)
	var scale float32
	if sumL2 != 0 {
		scale = sumLX / sumL2
	}
	best := scale * sumLX
	const tenth float32 = 0.1
	for k := -9; k <= 9; k++ {
		if k == 0 {
			continue
		}
		iscale = -(n + float32(tenth*float32(k))) / top
		sumLX, sumL2 = sums(iscale)
		if sumL2 > 0 && sumLX*sumLX > best*sumL2 {
			store(iscale)
			scale = sumLX / sumL2
			best = scale * sumLX
		}
	}
	return scale
}

// fitSymmetricRefined fits x ≈ scale·l with l in −nmax … nmax−1, weighing
// errors by x², and stores l + nmax in L: from the levels of the step that
// sends the largest element to −nmax, up to five passes move single
// weights to the level the least-squares scale of the others asks for,
// x·Σwl²/Σwxl, when that raises (Σwxl)²/Σwl². It returns Σwxl/Σwl².
// (ggml's make_q3_quants.)
func fitSymmetricRefined(x []float32, nmax int, L []int8) float32 {
	top, amax := largest(x)
	if amax < groupMaxEps {
		clear(L)
		return 0
	}
	iscale := -float32(nmax) / top
	var sumLX, sumL2 float32
	for i, v := range x {
		l := clampInt(nearestInt(iscale*v), -nmax, nmax-1)
		L[i] = int8(l)
		w, fl := v*v, float32(l)
		sumLX += float32(w * v * fl)
		sumL2 += float32(w * fl * fl)
	}
	for pass := 0; pass < 5; pass++ {
		changed := false
		for i, v := range x {
			w, fl := v*v, float32(L[i])
			slx := sumLX - float32(w*v*fl)
			if !(slx > 0) {
				continue
			}
			sl2 := sumL2 - float32(w*fl*fl)
			l := clampInt(nearestInt(v*sl2/slx), -nmax, nmax-1)
			if l == int(L[i]) {
				continue
			}
			fl = float32(l)
			slx += float32(w * v * fl)
			sl2 += float32(w * fl * fl)
			if sl2 > 0 && slx*slx*sumL2 > sumLX*sumLX*sl2 {
				L[i], sumLX, sumL2 = int8(l), slx, sl2
				changed = true
			}
		}
		if !changed {
			break
		}
	}
	for i := range L {
		L[i] += int8(nmax)
	}
	if sumL2 > 0 {
		return sumLX / sumL2
	}
	return 0
}

// packPairs packs 256 two-bit levels into 64 bytes as Q2_K and Q3_K store
// them (q2Bits reads them back).
func packPairs(qs []byte, L []int8) {
	for h := 0; h < QK; h += 128 {
		for l := 0; l < 32; l++ {
			qs[h/4+l] = byte(L[h+l] | L[h+l+32]<<2 | L[h+l+64]<<4 | L[h+l+96]<<6)
		}
	}
}

// searchQ2K writes one Q2_K super-block: its group scales and offsets
// (q2KScales, or q2KScalesWeighted with importances qw), then the weights
// re-rounded against the stored values.
func searchQ2K(out []byte, x, qw []float32) {
	var L [QK]uint8
	clear(out)
	var d, dmin uint16
	if qw == nil {
		d, dmin = q2KScales(out[:q2KQuants], x, &L)
	} else {
		d, dmin = q2KScalesWeighted(out[:q2KQuants], x, qw, &L)
	}
	binary.LittleEndian.PutUint16(out[q2KD:], d)
	binary.LittleEndian.PutUint16(out[q2KDmin:], dmin)
	df, dminf := FP16ToF32(d), FP16ToF32(dmin)
	for j := 0; j < QK/16; j++ {
		step := df * float32(out[j]&0xF)
		if step == 0 {
			continue
		}
		off := float32(dminf * float32(out[j]>>4)) // rounded before it is added (no FMA)
		for i := 16 * j; i < 16*(j+1); i++ {
			L[i] = uint8(clampInt(nearestInt((x[i]+off)/step), 0, 3))
		}
	}
	var Ls [QK]int8
	for i, l := range L {
		Ls[i] = int8(l)
	}
	packPairs(out[q2KQuants:q2KD], Ls[:])
}

// q2KScales finds a Q2_K super-block's scales: per 16-weight group an
// affine fit (3 steps, errors |err|·|x|, step counts 2.5 … 4), then the
// group scales and offsets as 4-bit shares (in sc, offset high) of
// d = max scale/15 and dmin = max offset/15, which it returns in fp16. L
// gets the fits' levels.
func q2KScales(sc []byte, x []float32, L *[QK]uint8) (d, dmin uint16) {
	var aux [16]uint8
	var w [16]float32
	var scales, mins [QK / 16]float32
	var maxScale, maxMin float32
	for j := range scales {
		xs := x[16*j : 16*(j+1)]
		for l, v := range xs {
			w[l] = absf(v)
		}
		scales[j], mins[j] = fitAffine(xs, w[:], 3, L[16*j:16*(j+1)], aux[:], -0.5, 0.1, 15, true)
		maxScale = max32(maxScale, scales[j])
		maxMin = max32(maxMin, mins[j])
	}
	if maxScale > 0 {
		iscale := 15 / maxScale
		for j, s := range scales {
			sc[j] = byte(nearestInt(iscale * s))
		}
		d = F32ToFP16(maxScale / 15)
	}
	if maxMin > 0 {
		iscale := 15 / maxMin
		for j, m := range mins {
			sc[j] |= byte(nearestInt(iscale*m) << 4)
		}
		dmin = F32ToFP16(maxMin / 15)
	}
	return d, dmin
}

// max32 is C's "if (v > m) m = v" (unlike max, it keeps m on NaN and −0).
func max32(m, v float32) float32 {
	if v > m {
		return v
	}
	return m
}

// searchQ3K writes one Q3_K super-block: its group scales as 6-bit shares
// (q3KShares, or q3KSharesWeighted with importances qw), then the weights
// re-rounded against the stored values.
func searchQ3K(out []byte, x, qw []float32) {
	var L [QK]int8
	var shares [QK / 16]uint8
	var d uint16
	if qw == nil {
		d = q3KShares(&shares, x, &L)
	} else {
		d = q3KSharesWeighted(&shares, x, qw, &L)
	}
	clear(out)
	sc := out[q3KScales:q3KD]
	for j, l := range shares {
		if j < 8 {
			sc[j] = l & 0xF
		} else {
			sc[j-8] |= (l & 0xF) << 4
		}
		sc[8+j%4] |= (l >> 4) << (2 * (j / 4))
	}
	binary.LittleEndian.PutUint16(out[q3KD:], d)
	df := FP16ToF32(d)
	for j := 0; j < QK/16; j++ {
		step := df * float32(q3KScale(sc, j))
		if step == 0 {
			continue
		}
		for i := 16 * j; i < 16*(j+1); i++ {
			L[i] = int8(clampInt(nearestInt(x[i]/step), -4, 3) + 4)
		}
	}
	// The high bit of weight i goes to bit i/32 of hmask byte i%32.
	for i := range L {
		if L[i] > 3 {
			out[i%32] |= 1 << (i / 32)
			L[i] -= 4
		}
	}
	packPairs(out[q3KQuants:q3KScales], L[:])
}

// q3KShares finds a Q3_K super-block's scales: per 16-weight group a
// symmetric fit over −4 … 3 (fitSymmetricRefined), then the group scales
// as signed 6-bit shares, stored + 32, of d = −(the group scale of largest
// magnitude)/32, which it returns in fp16. L gets the fits' levels.
func q3KShares(shares *[QK / 16]uint8, x []float32, L *[QK]int8) uint16 {
	var scales [QK / 16]float32
	var maxScale, amax float32
	for j := range scales {
		scales[j] = fitSymmetricRefined(x[16*j:16*(j+1)], 4, L[16*j:16*(j+1)])
		if a := absf(scales[j]); a > amax {
			amax, maxScale = a, scales[j]
		}
	}
	if maxScale == 0 {
		return 0 // all shares 0: the step re-rounds nothing
	}
	iscale := -32 / maxScale
	for j, s := range scales {
		shares[j] = byte(clampInt(int(int8(nearestInt(iscale*s))), -32, 31) + 32)
	}
	return F32ToFP16(1 / iscale)
}

// fitAffineSuperBlock finds a Q4_K or Q5_K super-block's scales over
// 0 … nmax: each 32-weight sub-block's scale and offset as 6-bit shares
// (affineScales, or affineScalesWeighted with importances qw), packed into
// the 12 bytes of sc; the weights are re-rounded against the stored values
// into L. It returns the fp16 d and dmin.
func fitAffineSuperBlock(x, qw []float32, nmax int, sc []byte, L *[QK]uint8) (d, dmin uint16) {
	var ls, lm [QK / 32]uint8
	if qw == nil {
		d, dmin = affineScales(&ls, &lm, x, nmax, L)
	} else {
		d, dmin = affineScalesWeighted(&ls, &lm, x, qw, nmax, L)
	}
	clear(sc)
	for j := range ls {
		if j < 4 {
			sc[j], sc[j+4] = ls[j], lm[j]
		} else {
			sc[j+4] = ls[j]&0xF | (lm[j]&0xF)<<4
			sc[j-4] |= (ls[j] >> 4) << 6
			sc[j] |= (lm[j] >> 4) << 6
		}
	}
	df, dminf := FP16ToF32(d), FP16ToF32(dmin)
	for j := 0; j < QK/32; j++ {
		s, m := q4KScaleMin(j, sc)
		step := df * float32(s)
		if step == 0 {
			continue
		}
		off := float32(dminf * float32(m))
		for i := 32 * j; i < 32*(j+1); i++ {
			L[i] = uint8(clampInt(nearestInt((x[i]+off)/step), 0, nmax))
		}
	}
	return d, dmin
}

// affineScales finds the shares of a Q4_K or Q5_K super-block: per
// 32-weight sub-block an affine fit over 0 … nmax (errors weighted by
// rms(x) + |x|; Q4_K tries step counts 14 … 17, Q5_K 30.5 … 32), then
// each sub-block's scale and offset as 6-bit shares of d = max scale/63
// and dmin = max offset/63, which it returns in fp16. L gets the fits'
// levels.
func affineScales(ls, lm *[QK / 32]uint8, x []float32, nmax int, L *[QK]uint8) (d, dmin uint16) {
	rmin, rdelta, nstep := float32(-1), float32(0.1), 20 // Q4_K
	if nmax == 31 {
		rmin, nstep = -0.5, 15 // Q5_K
	}
	var aux [32]uint8
	var w [32]float32
	var scales, mins [QK / 32]float32
	var maxScale, maxMin float32
	for j := range scales {
		xs := x[32*j : 32*(j+1)]
		rms := float32(math.Sqrt(float64(sumSquares(xs) / 32)))
		for l, v := range xs {
			w[l] = rms + absf(v)
		}
		scales[j], mins[j] = fitAffine(xs, w[:], nmax, L[32*j:32*(j+1)], aux[:], rmin, rdelta, nstep, false)
		maxScale = max32(maxScale, scales[j])
		maxMin = max32(maxMin, mins[j])
	}
	var invScale, invMin float32
	if maxScale > 0 {
		invScale = 63 / maxScale
	}
	if maxMin > 0 {
		invMin = 63 / maxMin
	}
	for j := range scales {
		ls[j] = min(63, uint8(nearestInt(invScale*scales[j])))
		lm[j] = min(63, uint8(nearestInt(invMin*mins[j])))
	}
	return F32ToFP16(maxScale / 63), F32ToFP16(maxMin / 63)
}

// searchQ4K writes one Q4_K super-block: fitAffineSuperBlock over 0 … 15.
func searchQ4K(out []byte, x, qw []float32) {
	var L [QK]uint8
	d, dmin := fitAffineSuperBlock(x, qw, 15, out[q4KScales:q4KQuants], &L)
	binary.LittleEndian.PutUint16(out, d)
	binary.LittleEndian.PutUint16(out[2:], dmin)
	q := out[q4KQuants:]
	for h := 0; h < QK; h += 64 {
		for l := 0; l < 32; l++ {
			q[h/2+l] = L[h+l] | L[h+l+32]<<4
		}
	}
}

// searchQ5K writes one Q5_K super-block: fitAffineSuperBlock over 0 … 31.
func searchQ5K(out []byte, x, qw []float32) {
	var L [QK]uint8
	d, dmin := fitAffineSuperBlock(x, qw, 31, out[q5KScales:q5KHigh], &L)
	binary.LittleEndian.PutUint16(out, d)
	binary.LittleEndian.PutUint16(out[2:], dmin)
	qh, ql := out[q5KHigh:q5KQuants], out[q5KQuants:]
	clear(qh)
	for h := 0; h < QK; h += 64 {
		for l := 0; l < 32; l++ {
			lo, hi := L[h+l], L[h+l+32]
			qh[l] |= (lo>>4)<<(h/32) | (hi>>4)<<(h/32+1)
			ql[h/2+l] = lo&0xF | (hi&0xF)<<4
		}
	}
}

// searchQ6K writes one Q6_K super-block: per 16-weight group a symmetric
// fit over −32 … 31 (fitSymmetric, errors weighted by x², or by the
// importances qw alone), the group scales as int8 shares of d = −(the
// group scale of largest magnitude)/128, and the weights re-rounded
// against the stored values. A block whose scales are all below ggml's
// epsilon is all zero.
func searchQ6K(out []byte, x, qw []float32) {
	var L [QK]int8
	var scales [QK / 16]float32
	var maxScale, amax float32
	for j := range scales {
		var w []float32
		if qw != nil {
			w = qw[16*j : 16*(j+1)]
		}
		scales[j] = fitSymmetric(x[16*j:16*(j+1)], 32, L[16*j:16*(j+1)], w)
		if a := absf(scales[j]); a > amax {
			amax, maxScale = a, scales[j]
		}
	}
	clear(out)
	if amax < groupMaxEps {
		return
	}
	iscale := -128 / maxScale
	d := F32ToFP16(1 / iscale)
	binary.LittleEndian.PutUint16(out[q6KD:], d)
	for j, s := range scales {
		out[q6KScales+j] = byte(int8(min(127, nearestInt(iscale*s))))
	}
	df := FP16ToF32(d)
	for j := 0; j < QK/16; j++ {
		step := df * float32(int8(out[q6KScales+j]))
		if step == 0 {
			continue
		}
		for i := 16 * j; i < 16*(j+1); i++ {
			L[i] = int8(clampInt(nearestInt(x[i]/step), -32, 31) + 32)
		}
	}
	for h := 0; h < QK; h += 128 {
		ql, qh := out[h/2:], out[q6KHigh+h/4:]
		for l := 0; l < 32; l++ {
			q1, q2, q3, q4 := byte(L[h+l]), byte(L[h+l+32]), byte(L[h+l+64]), byte(L[h+l+96])
			ql[l] = q1&0xF | (q3&0xF)<<4
			ql[l+32] = q2&0xF | (q4&0xF)<<4
			qh[l] = q1>>4 | (q2>>4)<<2 | (q3>>4)<<4 | (q4>>4)<<6
		}
	}
}

// iq4Index returns the index of the IQ4 level nearest to v, the upper one
// on ties (ggml's best_index_int8, a binary search). The levels are
// integers, so ⌊v⌋ alone brackets v between two of them: iq4Upper gives
// the upper one's index for each ⌊v⌋, and the tie test is ggml's.
func iq4Index(v float32) uint8 {
	v = float32(v) // a product passed as v must not be fused with the subtractions below
	k := &kvaluesIQ4NL
	if v <= float32(k[0]) {
		return 0
	}
	if !(v < float32(k[15])) { // also NaN, where ggml's search ends at the top
		return 15
	}
	f := int(v) // ⌊v⌋: truncation, less one for negative non-integers
	var neg, down int
	if float32(f) > v {
		neg = 1
	}
	hi := int(iq4Upper[f-neg-int(k[0])])
	if v-float32(k[hi-1]) < float32(k[hi])-v { // written so as to compile without branches
		down = 1
	}
	return uint8(hi - down)
}

// iq4Upper[f+127] is the index of the first level above f, for
// f = −127 … 112 (ggml's binary search's upper bound for v in [f, f+1)).
var iq4Upper = func() (t [113 + 127]uint8) {
	for f := range t {
		hi := uint8(1)
		for int(kvaluesIQ4NL[hi]) <= f-127 {
			hi++
		}
		t[f] = hi
	}
	return t
}()

// iq4Step returns the step d of a 32-weight IQ4 block, x ≈ d·kvalues[q],
// errors weighted by w (nil: by x²): the step that sends the element of
// largest magnitude to the level −127, then the steps max/(k − 127) for
// k = −7 … 7, each with the levels nearest to x/step and its least-squares
// step Σwkx/Σwk²; the one with the largest (Σwkx)²/Σwk² wins. A block
// below ggml's epsilon gets 0.
func iq4Step(x, w []float32) float32 {
	top, amax := largest(x)
	if amax < groupMaxEps {
		return 0
	}
	sums := func(id float32) (sumQX, sumQ2 float32) {
		for i, v := range x {
			q := float32(kvaluesIQ4NL[iq4Index(id*v)])
			wi := v * v
			if w != nil {
				wi = w[i]
			}
			sumQX += float32(wi * q * v)
			sumQ2 += float32(wi * q * q)
		}
		return sumQX, sumQ2
	}
	first := float32(kvaluesIQ4NL[0])
	sumQX, sumQ2 := sums(1 / (-top / first))
	var d float32
	if sumQ2 > 0 {
		d = sumQX / sumQ2
	}
	best := d * sumQX
	for k := -7; k <= 7; k++ {
		sumQX, sumQ2 = sums(float32(k+int(kvaluesIQ4NL[0])) / top)
		if sumQ2 > 0 && sumQX*sumQX > best*sumQ2 {
			d = sumQX / sumQ2
			best = d * sumQX
		}
	}
	return d
}

// packIQ4 stores the 4-bit indices of 32 weights as 16 bytes (weight l
// low, weight l+16 high).
func packIQ4(q []byte, idx *[32]uint8) {
	for j := 0; j < 16; j++ {
		q[j] = idx[j] | idx[16+j]<<4
	}
}

// searchIQ4NL writes one IQ4_NL block: d = iq4Step(x) in fp16, and each
// weight the level nearest to x/d (d before its rounding). With
// importances qw, errors weigh qw·√(σ² + x²), σ² twice the block's mean
// square.
func searchIQ4NL(out []byte, x, qw []float32) {
	var buf [32]float32
	var w []float32
	if qw != nil {
		w = buf[:]
		importanceWeights(w, x, qw, sumSquares(x)*(2.0/32))
	}
	d := iq4Step(x, w)
	binary.LittleEndian.PutUint16(out, F32ToFP16(d))
	var id float32
	if d != 0 {
		id = 1 / d
	}
	var idx [32]uint8
	for j, v := range x {
		idx[j] = iq4Index(id * v)
	}
	packIQ4(out[2:], &idx)
}

// searchIQ4XS writes one IQ4_XS super-block: per 32-weight sub-block its
// step (iq4Step; with importances qw, errors weigh qw·√(σ² + x²), σ²
// twice the super-block's mean square), d = −(the step of largest
// magnitude)/32 in fp16, each sub-block's scale l = round(step/d) in
// −32 … 31 stored as l + 32, and each weight the level nearest to x/(d·l)
// (d before its rounding).
func searchIQ4XS(out []byte, x, qw []float32) {
	var steps [QK / 32]float32
	var maxStep, amax float32
	var buf [32]float32
	var w []float32
	var sigma2 float32
	if qw != nil {
		w = buf[:]
		sigma2 = sumSquares(x) * (2.0 / QK)
	}
	for j := range steps {
		if qw != nil {
			importanceWeights(w, x[32*j:32*(j+1)], qw[32*j:32*(j+1)], sigma2)
		}
		steps[j] = iq4Step(x[32*j:32*(j+1)], w)
		if a := absf(steps[j]); a > amax {
			amax, maxStep = a, steps[j]
		}
	}
	clear(out)
	d := -maxStep / 32
	binary.LittleEndian.PutUint16(out, F32ToFP16(d))
	var id float32
	if d != 0 {
		id = 1 / d
	}
	var scalesH uint16
	for j, s := range steps {
		l := clampInt(nearestInt(id*s), -32, 31)
		dl := d * float32(l)
		var idl float32
		if dl != 0 {
			idl = 1 / dl
		}
		var idx [32]uint8
		for i, v := range x[32*j : 32*(j+1)] {
			idx[i] = iq4Index(idl * v)
		}
		packIQ4(out[iq4XSQuants+16*j:], &idx)
		u := uint8(l + 32)
		out[iq4XSScalesL+j/2] |= (u & 0xF) << (4 * (j % 2))
		scalesH |= uint16(u>>4) << (2 * j)
	}
	binary.LittleEndian.PutUint16(out[iq4XSScalesH:], scalesH)
}

// roundQ8_0 writes one Q8_0 block as ggml's reference quantizer does
// (llama-quantize's Q8_0): d = max|x|/127, q = round(x·(1/d)), halves away
// from zero. (QuantizeQ8_0 quantizes activations as the AVX path does,
// x·127/max|x| rounded half to even, which can differ in the last bit.)
func roundQ8_0(out []byte, x []float32) {
	var amax float32
	for _, v := range x {
		if a := absf(v); !(amax > a) {
			amax = a
		}
	}
	d := amax / 127
	var id float32
	if d != 0 {
		id = 1 / d
	}
	binary.LittleEndian.PutUint16(out, F32ToFP16(d))
	for i, v := range x {
		out[2+i] = byte(int8(math.Round(float64(v * id))))
	}
}
