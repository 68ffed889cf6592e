// The non-linear 4-bit types of llama.cpp, IQ4_NL and IQ4_XS (common in
// LM Studio and bartowski uploads): each 4-bit index selects one of 16
// fixed levels, denser near zero, instead of a uniform step. IQ4_NL is
// Q4_0's layout with that table (Q8_0 activations, as llama.cpp's
// vec_dot_type); IQ4_XS puts 8 such sub-blocks of 32 under one fp16 scale
// with six-bit sub-block scales, as the k-quants do (Q8_K activations).

package quant

import (
	"encoding/binary"
	"fmt"
	"math"
)

// kvaluesIQ4NL is llama.cpp's kvalues_iq4nl (ggml-common.h): the level each
// 4-bit index of IQ4_NL and IQ4_XS stands for.
var kvaluesIQ4NL = [16]int8{-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113}

// IQ4_NL block (18 bytes): fp16 d, then 16 bytes of indices laid out as
// Q4_0's nibbles (weights 0–15 low, 16–31 high); weight i is
// d·kvalues[q_i].
//
// IQ4_XS super-block (136 bytes): fp16 d, a 16-bit word scales_h, 4 bytes
// scales_l, then 128 bytes of indices, 16 per sub-block of 32 weights (in
// each byte, weight l of the sub-block low and weight l+16 high). Sub-block
// j's six-bit scale is ls_j = nibble j%2 of scales_l[j/2] | (bits 2j, 2j+1
// of scales_h) << 4, and weight i of it is d·(ls_j − 32)·kvalues[q_i].
const (
	iq4NLBytes   = 18
	iq4XSBytes   = 136
	iq4XSScalesH = 2
	iq4XSScalesL = 4
	iq4XSQuants  = 8
)

// iq4NLQuant returns weight i's level, kvalues[q_i] (−127 … 113).
func iq4NLQuant(blk []byte, i int) int8 {
	b := blk[2+i%16]
	if i >= 16 {
		b >>= 4
	}
	return kvaluesIQ4NL[b&0xF]
}

// iq4XSScale returns sub-block j's scale ls_j − 32 (−32 … 31).
func iq4XSScale(blk []byte, j int) int8 {
	lo := blk[iq4XSScalesL+j/2] >> (4 * (j % 2)) & 0xF
	hi := byte(binary.LittleEndian.Uint16(blk[iq4XSScalesH:])>>(2*j)) & 3
	return int8(lo|hi<<4) - 32
}

// iq4XSQuant returns weight i's level (−127 … 113): byte i%16 of its
// sub-block's 16, low nibble for i%32 < 16.
func iq4XSQuant(blk []byte, i int) int8 {
	b := blk[iq4XSQuants+i/32*16+i%16]
	if i%32 >= 16 {
		b >>= 4
	}
	return kvaluesIQ4NL[b&0xF]
}

// DequantizeIQ4XS expands IQ4_XS super-blocks into dst (len = 256 × blocks):
// per sub-block dl = d·(ls − 32), weight = dl·kvalues[q], as llama.cpp's
// dequantize_row_iq4_xs.
func DequantizeIQ4XS(dst []float32, src []byte) {
	for b := 0; b < len(dst)/QK; b++ {
		blk := src[b*iq4XSBytes : (b+1)*iq4XSBytes]
		d := FP16ToF32(binary.LittleEndian.Uint16(blk))
		y := dst[b*QK : (b+1)*QK]
		for j := 0; j < QK/32; j++ {
			dl := d * float32(iq4XSScale(blk, j))
			for i := 32 * j; i < 32*(j+1); i++ {
				y[i] = dl * float32(iq4XSQuant(blk, i))
			}
		}
	}
}

// dotIQ4XS returns the dot product of an IQ4_XS weight row with Q8_K
// activations, as dotQ6K: per super-block the exact integer sum
// Σ_j (ls_j − 32)·Σ kvalues[q_w]·q_x over its 8 sub-blocks (at most
// 8·32·32·127·127 in magnitude: it fits int32), scaled by d_w·d_x.
func dotIQ4XS(w []byte, x []q8K) float32 {
	var sum float32
	for b := range x {
		blk := w[b*iq4XSBytes : (b+1)*iq4XSBytes]
		xb := &x[b]
		var dots int32
		for j := 0; j < QK/32; j++ {
			qs := blk[iq4XSQuants+16*j : iq4XSQuants+16*(j+1)]
			xq := xb.q[32*j : 32*(j+1)]
			var dot int32
			for l, q := range qs {
				dot += int32(kvaluesIQ4NL[q&0xF])*int32(xq[l]) + int32(kvaluesIQ4NL[q>>4])*int32(xq[l+16])
			}
			dots += int32(iq4XSScale(blk, j)) * dot
		}
		sum += FP16ToF32(binary.LittleEndian.Uint16(blk)) * xb.d * float32(dots)
	}
	return sum
}

// iq4Nearest returns the index of the table level nearest to v (the lower
// one on ties).
func iq4Nearest(v float32) uint8 {
	best, dist := 0, float32(math.Inf(1))
	for i, k := range kvaluesIQ4NL {
		if e := float32(math.Abs(float64(v - float32(k)))); e < dist {
			best, dist = i, e
		}
	}
	return uint8(best)
}

// iq4Fit picks levels for the 32 weights of x against the step s (each
// the nearest level to x/s) and returns them with the least-squares step
// for them, Σ x·k / Σ k² (the levels are never 0, so Σ k² > 0).
func iq4Fit(x []float32, s float32) (idx [32]uint8, ls float32) {
	var id float32
	if s != 0 {
		id = 1 / s
	}
	var sxk, skk float64
	for i, v := range x {
		idx[i] = iq4Nearest(v * id)
		k := float64(kvaluesIQ4NL[idx[i]])
		sxk, skk = sxk+float64(v)*k, skk+k*k
	}
	return idx, float32(sxk / skk)
}

// QuantizeIQ4NL quantizes x (len a multiple of 32) into IQ4_NL blocks
// appended to dst, the simple way: the element of largest magnitude, m
// (sign kept), sets the first step m/−127 (m becomes the level −127),
// each weight takes the nearest level, and d is the least-squares step for
// those levels. (llama.cpp also tries a range of steps around the first,
// and weighs errors; files it writes load the same way.)
func QuantizeIQ4NL(dst []byte, x []float32) []byte {
	if len(x)%32 != 0 {
		panic(fmt.Sprintf("QuantizeIQ4NL: length %d is not a multiple of 32", len(x)))
	}
	for b := 0; b < len(x); b += 32 {
		var amax, top float32
		for _, v := range x[b : b+32] {
			if a := float32(math.Abs(float64(v))); a > amax {
				amax, top = a, v
			}
		}
		idx, d := iq4Fit(x[b:b+32], top/-127)
		blk := make([]byte, iq4NLBytes)
		binary.LittleEndian.PutUint16(blk, F32ToFP16(d))
		for i, q := range idx[:16] {
			blk[2+i] = q | idx[16+i]<<4
		}
		dst = append(dst, blk...)
	}
	return dst
}

// QuantizeIQ4XS quantizes x (len a multiple of 256) into IQ4_XS
// super-blocks appended to dst: each sub-block's step s_j is found as
// QuantizeIQ4NL finds d; the super-block's d is max|s_j|/31, each
// sub-block's scale ls_j − 32 = round(s_j/d) in −32 … 31, and each weight
// the level nearest to x/(d·(ls_j − 32)).
func QuantizeIQ4XS(dst []byte, x []float32) []byte {
	if len(x)%QK != 0 {
		panic(fmt.Sprintf("QuantizeIQ4XS: length %d is not a multiple of %d", len(x), QK))
	}
	for b := 0; b < len(x); b += QK {
		blk := x[b : b+QK]
		var step [QK / 32]float32
		var maxStep float32
		for j := range step {
			var amax, top float32
			for _, v := range blk[32*j : 32*(j+1)] {
				if a := float32(math.Abs(float64(v))); a > amax {
					amax, top = a, v
				}
			}
			_, step[j] = iq4Fit(blk[32*j:32*(j+1)], top/-127)
			maxStep = max(maxStep, float32(math.Abs(float64(step[j]))))
		}
		d := RoundFP16(maxStep / 31)
		out := make([]byte, iq4XSBytes)
		binary.LittleEndian.PutUint16(out, F32ToFP16(d))
		var scalesH uint16
		for j, s := range step {
			var l float64
			if d > 0 {
				l = max(-32, min(31, math.Round(float64(s/d))))
			}
			ls := uint8(l + 32)
			out[iq4XSScalesL+j/2] |= (ls & 0xF) << (4 * (j % 2))
			scalesH |= uint16(ls>>4) << (2 * j)
			idx, _ := iq4Fit(blk[32*j:32*(j+1)], d*float32(l))
			q := out[iq4XSQuants+16*j : iq4XSQuants+16*(j+1)]
			for i := range q {
				q[i] = idx[i] | idx[16+i]<<4
			}
		}
		binary.LittleEndian.PutUint16(out[iq4XSScalesH:], scalesH)
		dst = append(dst, out...)
	}
	return dst
}
