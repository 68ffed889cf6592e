// The k-quant weight types of llama.cpp that models are most often shipped
// in (Q4_K_M files hold Q4_K and Q6_K tensors): their layouts, dequantization
// and dot products against Q8_K activations.
//
// A k-quant "super-block" holds QK = 256 weights as 8 (Q4_K) or 16 (Q6_K)
// sub-blocks, each with its own small integer scale, under one fp16 scale
// for the whole super-block. Products quantize the activations to Q8_K
// (256 int8 per block with a float32 scale and 16 partial sums) exactly as
// llama.cpp's CPU backend does, so that every sub-block dot product is an
// exact integer and only the per-block scaling is float arithmetic.

package quant

import (
	"encoding/binary"
	"fmt"
	"math"
)

// QK is the number of weights in a k-quant super-block.
const QK = 256

// Byte layout of a Q4_K super-block (144 bytes): fp16 d, fp16 dmin, 12 bytes
// holding 8 six-bit scales and 8 six-bit mins, then 128 bytes of 4-bit
// quants. Weight i of sub-block j is d·scale_j·q_i − dmin·min_j.
const (
	q4KBytes  = 144
	q4KScales = 4  // offset of the packed scales and mins
	q4KQuants = 16 // offset of the quants
)

// Byte layout of a Q6_K super-block (210 bytes): 128 bytes of low 4 bits,
// 64 bytes of high 2 bits, 16 int8 scales (one per 16 weights), fp16 d.
// Weight i is d·scale_{i/16}·(q_i − 32) with q_i a 6-bit value.
const (
	q6KBytes  = 210
	q6KHigh   = 128
	q6KScales = 192
	q6KD      = 208
)

// q4KScaleMin returns sub-block j's six-bit scale and min from the 12 packed
// bytes: the first four sub-blocks keep theirs in the low six bits of bytes
// j and j+4; the last four split theirs between a nibble of byte j+4 and the
// top two bits of bytes j−4 and j.
func q4KScaleMin(j int, s []byte) (scale, min uint8) {
	if j < 4 {
		return s[j] & 63, s[j+4] & 63
	}
	return s[j+4]&0xF | (s[j-4]>>6)<<4, s[j+4]>>4 | (s[j]>>6)<<4
}

// q4KQuant returns the 4-bit quant of weight i (0 … 255) of a super-block:
// each 32-byte group of quants holds two sub-blocks, the first in the low
// nibbles, the second in the high ones.
func q4KQuant(qs []byte, i int) uint8 {
	b := qs[i/64*32+i%32]
	if i%64 >= 32 {
		return b >> 4
	}
	return b & 0xF
}

// q6KQuant returns the signed 6-bit quant (−32 … 31) of weight i of a
// super-block. Each half of 128 weights takes 64 bytes of low bits and 32 of
// high bits: weight l+32k of the half has the low nibble (k even) or high
// nibble (k odd) of low byte l+32·(k%2) and bits 2k, 2k+1 of high byte l.
func q6KQuant(blk []byte, i int) int8 {
	half, r := i/128, i%128
	k, l := r/32, r%32
	lo := blk[half*64+l+32*(k%2)]
	if k >= 2 {
		lo >>= 4
	}
	hi := blk[q6KHigh+half*32+l] >> (2 * k) & 3
	return int8(lo&0xF|hi<<4) - 32
}

// DequantizeQ4K expands Q4_K super-blocks into dst (len = 256 × blocks).
func DequantizeQ4K(dst []float32, src []byte) {
	for b := 0; b < len(dst)/QK; b++ {
		blk := src[b*q4KBytes : (b+1)*q4KBytes]
		d := FP16ToF32(binary.LittleEndian.Uint16(blk))
		dmin := FP16ToF32(binary.LittleEndian.Uint16(blk[2:]))
		y := dst[b*QK : (b+1)*QK]
		for j := 0; j < QK/32; j++ {
			sc, m := q4KScaleMin(j, blk[q4KScales:])
			d1, m1 := d*float32(sc), dmin*float32(m)
			for i := 32 * j; i < 32*(j+1); i++ {
				y[i] = d1*float32(q4KQuant(blk[q4KQuants:], i)) - m1
			}
		}
	}
}

// DequantizeQ6K expands Q6_K super-blocks into dst (len = 256 × blocks).
func DequantizeQ6K(dst []float32, src []byte) {
	for b := 0; b < len(dst)/QK; b++ {
		blk := src[b*q6KBytes : (b+1)*q6KBytes]
		d := FP16ToF32(binary.LittleEndian.Uint16(blk[q6KD:]))
		y := dst[b*QK : (b+1)*QK]
		for i := range y {
			y[i] = d * float32(int8(blk[q6KScales+i/16])) * float32(q6KQuant(blk, i))
		}
	}
}

// q8K is one block of activations quantized for k-quant products: 256 int8
// values x ≈ d·q, and the sums of each 16 of them (which Q4_K's mins need).
type q8K struct {
	d     float32
	q     [QK]int8
	bsums [QK / 16]int16
}

// quantizeQ8K quantizes x (len a multiple of 256) as llama.cpp's
// quantize_row_q8_K does: per block, the element of largest magnitude, max
// (sign kept), sets iscale = −127/max, so that it becomes −127 and d = 1/iscale
// has the opposite sign; q = round-half-even(iscale·x) capped at 127.
func quantizeQ8K(dst []q8K, x []float32) []q8K {
	for b := 0; b < len(x); b += QK {
		blk := x[b : b+QK]
		var amax, max float32
		for _, v := range blk {
			if a := float32(math.Abs(float64(v))); a > amax {
				amax, max = a, v
			}
		}
		var y q8K
		if amax != 0 {
			iscale := -127 / max
			for i, v := range blk {
				y.q[i] = int8(min(127, math.RoundToEven(float64(iscale*v))))
			}
			for j := range y.bsums {
				var s int16
				for _, q := range y.q[16*j : 16*(j+1)] {
					s += int16(q)
				}
				y.bsums[j] = s
			}
			y.d = 1 / iscale
		}
		dst = append(dst, y)
	}
	return dst
}

// dotQ4K returns the dot product of a Q4_K weight row with Q8_K
// activations: per super-block the exact integer sums Σ_j scale_j·(q_w·q_x)
// and Σ_j min_j·Σq_x, scaled by d_w·d_x and dmin_w·d_x.
func dotQ4K(w []byte, x []q8K) float32 {
	var sum float32
	for b := range x {
		blk := w[b*q4KBytes : (b+1)*q4KBytes]
		xb := &x[b]
		var dots, mins int32
		for j := 0; j < QK/32; j++ {
			sc, m := q4KScaleMin(j, blk[q4KScales:])
			qs := blk[q4KQuants+j/2*32 : q4KQuants+j/2*32+32]
			xq := xb.q[32*j : 32*(j+1)]
			var dot int32
			if j%2 == 0 {
				for i, q := range qs {
					dot += int32(q&0xF) * int32(xq[i])
				}
			} else {
				for i, q := range qs {
					dot += int32(q>>4) * int32(xq[i])
				}
			}
			dots += int32(sc) * dot
			mins += int32(m) * (int32(xb.bsums[2*j]) + int32(xb.bsums[2*j+1]))
		}
		d := FP16ToF32(binary.LittleEndian.Uint16(blk)) * xb.d
		dmin := FP16ToF32(binary.LittleEndian.Uint16(blk[2:])) * xb.d
		sum += d*float32(dots) - dmin*float32(mins)
	}
	return sum
}

// dotQ6K returns the dot product of a Q6_K weight row with Q8_K
// activations: per super-block the exact integer sum Σ_j scale_j·(q_w·q_x)
// over its 16 sub-blocks, scaled by d_w·d_x.
func dotQ6K(w []byte, x []q8K) float32 {
	var sum float32
	for b := range x {
		blk := w[b*q6KBytes : (b+1)*q6KBytes]
		xb := &x[b]
		var dots int32
		for j := 0; j < QK/16; j++ {
			var dot int32
			for i := 16 * j; i < 16*(j+1); i++ {
				dot += int32(q6KQuant(blk, i)) * int32(xb.q[i])
			}
			dots += int32(int8(blk[q6KScales+j])) * dot
		}
		sum += FP16ToF32(binary.LittleEndian.Uint16(blk[q6KD:])) * xb.d * float32(dots)
	}
	return sum
}

// kquantDot returns the dot product of weight type t (a k-quant, or IQ4_XS)
// with Q8_K activations.
func kquantDot(t Type) func(w []byte, x []q8K) float32 {
	switch t {
	case Q4_K:
		return dotQ4K
	case Q6_K:
		return dotQ6K
	case Q5_K:
		return dotQ5K
	case Q3_K:
		return dotQ3K
	case Q2_K:
		return dotQ2K
	case IQ4_XS:
		return dotIQ4XS
	}
	panic(fmt.Sprintf("kquantDot: %v is not a k-quant", t))
}

// QuantizeQ4K quantizes x (len a multiple of 256) into Q4_K super-blocks
// appended to dst, the simple way: each 32-weight sub-block spans
// [min(x, 0), max(x)] in 15 steps; the super-block's d and dmin are the
// largest step and offset over 63, the six-bit scale and min each
// sub-block's share of them. (llama.cpp searches for scales with smaller
// error; files it writes load the same way.)
func QuantizeQ4K(dst []byte, x []float32) []byte {
	if len(x)%QK != 0 {
		panic(fmt.Sprintf("QuantizeQ4K: length %d is not a multiple of %d", len(x), QK))
	}
	for b := 0; b < len(x); b += QK {
		blk := x[b : b+QK]
		var step, off [QK / 32]float32
		var maxStep, maxOff float32
		for j := range step {
			lo, hi := float32(0), float32(0)
			for _, v := range blk[32*j : 32*(j+1)] {
				lo, hi = min(lo, v), max(hi, v)
			}
			step[j], off[j] = (hi-lo)/15, -lo
			maxStep, maxOff = max(maxStep, step[j]), max(maxOff, off[j])
		}
		d, dmin := RoundFP16(maxStep/63), RoundFP16(maxOff/63)
		var sc, mn [QK / 32]uint8
		for j := range sc {
			if d > 0 {
				sc[j] = uint8(min(63, math.Round(float64(step[j]/d))))
			}
			if dmin > 0 {
				mn[j] = uint8(min(63, math.Round(float64(off[j]/dmin))))
			}
		}
		out := make([]byte, q4KBytes)
		binary.LittleEndian.PutUint16(out, F32ToFP16(d))
		binary.LittleEndian.PutUint16(out[2:], F32ToFP16(dmin))
		s := out[q4KScales:q4KQuants]
		for j := 0; j < 4; j++ {
			s[j] = sc[j] | (sc[j+4]>>4)<<6
			s[j+4] = mn[j] | (mn[j+4]>>4)<<6
			s[j+8] = sc[j+4]&0xF | (mn[j+4]&0xF)<<4
		}
		for i, v := range blk {
			j := i / 32
			var q float64
			if step := d * float32(sc[j]); step > 0 {
				q = math.Round(float64((v + dmin*float32(mn[j])) / step))
			}
			q = max(0, min(15, q))
			at := q4KQuants + i/64*32 + i%32
			if i%64 >= 32 {
				out[at] |= uint8(q) << 4
			} else {
				out[at] |= uint8(q)
			}
		}
		dst = append(dst, out...)
	}
	return dst
}

// QuantizeQ6K quantizes x (len a multiple of 256) into Q6_K super-blocks
// appended to dst: each 16-weight sub-block's step is max|x|/31, stored as an
// int8 share of the super-block's d = largest step/127, and each weight the
// nearest of the 64 steps −32 … 31.
func QuantizeQ6K(dst []byte, x []float32) []byte {
	if len(x)%QK != 0 {
		panic(fmt.Sprintf("QuantizeQ6K: length %d is not a multiple of %d", len(x), QK))
	}
	for b := 0; b < len(x); b += QK {
		blk := x[b : b+QK]
		var step [QK / 16]float32
		var maxStep float32
		for j := range step {
			for _, v := range blk[16*j : 16*(j+1)] {
				step[j] = max(step[j], float32(math.Abs(float64(v)))/31)
			}
			maxStep = max(maxStep, step[j])
		}
		d := RoundFP16(maxStep / 127)
		out := make([]byte, q6KBytes)
		binary.LittleEndian.PutUint16(out[q6KD:], F32ToFP16(d))
		for j := range step {
			if d > 0 {
				out[q6KScales+j] = byte(int8(min(127, math.Round(float64(step[j]/d)))))
			}
		}
		for i, v := range blk {
			var q float64
			if s := d * float32(int8(out[q6KScales+i/16])); s > 0 {
				q = math.Round(float64(v / s))
			}
			u := uint8(max(-32, min(31, q)) + 32)
			half, r := i/128, i%128
			k, l := r/32, r%32
			lo := &out[half*64+l+32*(k%2)]
			if k >= 2 {
				*lo |= (u & 0xF) << 4
			} else {
				*lo |= u & 0xF
			}
			out[q6KHigh+half*32+l] |= (u >> 4) << (2 * k)
		}
		dst = append(dst, out...)
	}
	return dst
}
