// The other k-quant weight types of llama.cpp's common mixes — Q5_K (Q5_K_M
// files: Q5_K and Q6_K), Q3_K and Q2_K (Q3_K_M, Q2_K files) — their
// layouts, dequantization and dot products against Q8_K activations, in
// the form kquant.go gives Q4_K and Q6_K: exact integer sums per
// super-block, then one float scaling.

package quant

import (
	"encoding/binary"
	"fmt"
	"math"
)

// Byte layout of a Q5_K super-block (176 bytes): fp16 d, fp16 dmin, 12 bytes
// of six-bit scales and mins packed as Q4_K's, 32 bytes of fifth bits, then
// 128 bytes of low nibbles laid out as Q4_K's quants. Weight i of sub-block
// j is d·scale_j·q_i − dmin·min_j with q_i = low nibble + 16·(bit j of
// high byte i%32), 0 … 31.
const (
	q5KBytes  = 176
	q5KScales = 4
	q5KHigh   = 16
	q5KQuants = 48
)

// Byte layout of a Q3_K super-block (110 bytes): 32 bytes of high bits
// (hmask), 64 bytes of low bit pairs, 12 bytes of sixteen six-bit scales,
// fp16 d. Weight i is d·(scale_{i/16} − 32)·q_i with q_i in −4 … 3: its low
// two bits minus 4 when its high bit is clear.
const (
	q3KBytes  = 110
	q3KQuants = 32
	q3KScales = 96
	q3KD      = 108
)

// Byte layout of a Q2_K super-block (84 bytes): 16 bytes each holding a
// group of 16 weights' four-bit scale (low nibble) and min (high nibble),
// 64 bytes of bit pairs, fp16 d, fp16 dmin. Weight i of group g = i/16 is
// d·scale_g·q_i − dmin·min_g with q_i in 0 … 3.
const (
	q2KBytes  = 84
	q2KQuants = 16
	q2KD      = 80
	q2KDmin   = 82
)

// q5KQuant returns the 5-bit quant (0 … 31) of weight i of a Q5_K block:
// q4KQuant's nibble of the low bits, and bit i/32 of high byte i%32.
func q5KQuant(blk []byte, i int) uint8 {
	return q4KQuant(blk[q5KQuants:], i) | (blk[q5KHigh+i%32]>>(i/32)&1)<<4
}

// q2Bits returns the bit pair of weight i of a Q2_K or Q3_K super-block
// whose 64 bytes of pairs are qs: each half of 128 weights takes 32 bytes,
// weight l + 32k of the half (k = 0 … 3) bits 2k, 2k+1 of byte l.
func q2Bits(qs []byte, i int) uint8 {
	return qs[i/128*32+i%32] >> (2 * (i % 128 / 32)) & 3
}

// q3KQuant returns the signed quant (−4 … 3) of weight i of a Q3_K block:
// its bit pair, less 4 when bit 4·(i/128) + (i%128)/32 of hmask byte i%32
// is clear.
func q3KQuant(blk []byte, i int) int8 {
	q := int8(q2Bits(blk[q3KQuants:], i))
	if blk[i%32]>>(4*(i/128)+i%128/32)&1 == 0 {
		q -= 4
	}
	return q
}

// q3KScale returns group g's scale (0 … 15) minus 32, −32 … 31: its low
// four bits are a nibble of byte g%8 (low for g < 8), its high two bits
// bits 2·(g/4), 2·(g/4)+1 of byte 8 + g%4.
func q3KScale(s []byte, g int) int8 {
	lo := s[g%8] & 0xF
	if g >= 8 {
		lo = s[g%8] >> 4
	}
	hi := s[8+g%4] >> (2 * (g / 4)) & 3
	return int8(lo|hi<<4) - 32
}

// DequantizeQ5K expands Q5_K super-blocks into dst (len = 256 × blocks).
func DequantizeQ5K(dst []float32, src []byte) {
	for b := 0; b < len(dst)/QK; b++ {
		blk := src[b*q5KBytes : (b+1)*q5KBytes]
		d := FP16ToF32(binary.LittleEndian.Uint16(blk))
		dmin := FP16ToF32(binary.LittleEndian.Uint16(blk[2:]))
		y := dst[b*QK : (b+1)*QK]
		for j := 0; j < QK/32; j++ {
			sc, m := q4KScaleMin(j, blk[q5KScales:])
			d1, m1 := d*float32(sc), dmin*float32(m)
			for i := 32 * j; i < 32*(j+1); i++ {
				y[i] = d1*float32(q5KQuant(blk, i)) - m1
			}
		}
	}
}

// DequantizeQ3K expands Q3_K super-blocks into dst (len = 256 × blocks).
func DequantizeQ3K(dst []float32, src []byte) {
	for b := 0; b < len(dst)/QK; b++ {
		blk := src[b*q3KBytes : (b+1)*q3KBytes]
		d := FP16ToF32(binary.LittleEndian.Uint16(blk[q3KD:]))
		y := dst[b*QK : (b+1)*QK]
		for i := range y {
			y[i] = d * float32(q3KScale(blk[q3KScales:], i/16)) * float32(q3KQuant(blk, i))
		}
	}
}

// DequantizeQ2K expands Q2_K super-blocks into dst (len = 256 × blocks).
func DequantizeQ2K(dst []float32, src []byte) {
	for b := 0; b < len(dst)/QK; b++ {
		blk := src[b*q2KBytes : (b+1)*q2KBytes]
		d := FP16ToF32(binary.LittleEndian.Uint16(blk[q2KD:]))
		dmin := FP16ToF32(binary.LittleEndian.Uint16(blk[q2KDmin:]))
		y := dst[b*QK : (b+1)*QK]
		for i := range y {
			sm := blk[i/16]
			y[i] = d*float32(sm&0xF)*float32(q2Bits(blk[q2KQuants:], i)) - dmin*float32(sm>>4)
		}
	}
}

// dotQ5K returns the dot product of a Q5_K weight row with Q8_K
// activations, as dotQ4K: per super-block the exact integer sums
// Σ_j scale_j·(q_w·q_x) and Σ_j min_j·Σq_x, scaled by d_w·d_x and dmin_w·d_x.
func dotQ5K(w []byte, x []q8K) float32 {
	var sum float32
	for b := range x {
		blk := w[b*q5KBytes : (b+1)*q5KBytes]
		xb := &x[b]
		var dots, mins int32
		for j := 0; j < QK/32; j++ {
			sc, m := q4KScaleMin(j, blk[q5KScales:])
			qs := blk[q5KQuants+j/2*32 : q5KQuants+j/2*32+32]
			qh := blk[q5KHigh : q5KHigh+32]
			xq := xb.q[32*j : 32*(j+1)]
			shift := 4 * uint(j%2)
			var dot int32
			for l, q := range qs {
				dot += int32(q>>shift&0xF|(qh[l]>>j&1)<<4) * int32(xq[l])
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

// dotQ3K returns the dot product of a Q3_K weight row with Q8_K
// activations, as dotQ6K: per super-block the exact integer sum
// Σ_g (scale_g − 32)·(q_w·q_x) over its 16 groups, scaled by d_w·d_x.
func dotQ3K(w []byte, x []q8K) float32 {
	var sum float32
	for b := range x {
		blk := w[b*q3KBytes : (b+1)*q3KBytes]
		xb := &x[b]
		var dots int32
		for g := 0; g < QK/16; g++ {
			var dot int32
			for i := 16 * g; i < 16*(g+1); i++ {
				dot += int32(q3KQuant(blk, i)) * int32(xb.q[i])
			}
			dots += int32(q3KScale(blk[q3KScales:], g)) * dot
		}
		sum += FP16ToF32(binary.LittleEndian.Uint16(blk[q3KD:])) * xb.d * float32(dots)
	}
	return sum
}

// dotQ2K returns the dot product of a Q2_K weight row with Q8_K
// activations, as dotQ4K with sixteen groups: the exact integer sums
// Σ_g scale_g·(q_w·q_x) and Σ_g min_g·Σq_x, scaled by d_w·d_x and
// dmin_w·d_x.
func dotQ2K(w []byte, x []q8K) float32 {
	var sum float32
	for b := range x {
		blk := w[b*q2KBytes : (b+1)*q2KBytes]
		xb := &x[b]
		var dots, mins int32
		for g := 0; g < QK/16; g++ {
			var dot int32
			for i := 16 * g; i < 16*(g+1); i++ {
				dot += int32(q2Bits(blk[q2KQuants:], i)) * int32(xb.q[i])
			}
			dots += int32(blk[g]&0xF) * dot
			mins += int32(blk[g]>>4) * int32(xb.bsums[g])
		}
		d := FP16ToF32(binary.LittleEndian.Uint16(blk[q2KD:])) * xb.d
		dmin := FP16ToF32(binary.LittleEndian.Uint16(blk[q2KDmin:])) * xb.d
		sum += d*float32(dots) - dmin*float32(mins)
	}
	return sum
}

// QuantizeQ5K quantizes x (len a multiple of 256) into Q5_K super-blocks
// appended to dst, as QuantizeQ4K does with 31 steps per sub-block.
func QuantizeQ5K(dst []byte, x []float32) []byte {
	if len(x)%QK != 0 {
		panic(fmt.Sprintf("QuantizeQ5K: length %d is not a multiple of %d", len(x), QK))
	}
	for b := 0; b < len(x); b += QK {
		var step, off [QK / 32]float32
		var maxStep, maxOff float32
		for j := range step {
			lo, hi := float32(0), float32(0)
			for _, v := range x[b+32*j : b+32*(j+1)] {
				lo, hi = min(lo, v), max(hi, v)
			}
			step[j], off[j] = (hi-lo)/31, -lo
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
		out := make([]byte, q5KBytes)
		binary.LittleEndian.PutUint16(out, F32ToFP16(d))
		binary.LittleEndian.PutUint16(out[2:], F32ToFP16(dmin))
		s := out[q5KScales:q5KHigh]
		for j := 0; j < 4; j++ {
			s[j] = sc[j] | (sc[j+4]>>4)<<6
			s[j+4] = mn[j] | (mn[j+4]>>4)<<6
			s[j+8] = sc[j+4]&0xF | (mn[j+4]&0xF)<<4
		}
		for i, v := range x[b : b+QK] {
			j := i / 32
			var q float64
			if st := d * float32(sc[j]); st > 0 {
				q = math.Round(float64((v + dmin*float32(mn[j])) / st))
			}
			u := uint8(max(0, min(31, q)))
			at := q5KQuants + i/64*32 + i%32
			if i%64 >= 32 {
				out[at] |= (u & 0xF) << 4
			} else {
				out[at] |= u & 0xF
			}
			out[q5KHigh+i%32] |= (u >> 4) << j
		}
		dst = append(dst, out...)
	}
	return dst
}

// QuantizeQ3K quantizes x (len a multiple of 256) into Q3_K super-blocks
// appended to dst: each 16-weight group's step is m/−4, m its element of
// largest magnitude (sign kept, so that m is exactly the level −4, as
// Q4_0's quantizer does), stored as a signed six-bit share (−31 … 31) of
// d = largest |step|/31; each weight is the nearest of the levels −4 … 3.
func QuantizeQ3K(dst []byte, x []float32) []byte {
	if len(x)%QK != 0 {
		panic(fmt.Sprintf("QuantizeQ3K: length %d is not a multiple of %d", len(x), QK))
	}
	for b := 0; b < len(x); b += QK {
		blk := x[b : b+QK]
		var step [QK / 16]float32
		var maxStep float32
		for g := range step {
			var amax float32
			for _, v := range blk[16*g : 16*(g+1)] {
				if a := float32(math.Abs(float64(v))); a > amax {
					amax, step[g] = a, v/-4
				}
			}
			maxStep = max(maxStep, amax/4)
		}
		d := RoundFP16(maxStep / 31)
		out := make([]byte, q3KBytes)
		binary.LittleEndian.PutUint16(out[q3KD:], F32ToFP16(d))
		var sc [QK / 16]int8
		s := out[q3KScales:q3KD]
		for g := range sc {
			if d > 0 {
				sc[g] = int8(max(-31, min(31, math.Round(float64(step[g]/d)))))
			}
			u := uint8(sc[g] + 32)
			if g < 8 {
				s[g] |= u & 0xF
			} else {
				s[g-8] |= (u & 0xF) << 4
			}
			s[8+g%4] |= (u >> 4) << (2 * (g / 4))
		}
		for i, v := range blk {
			var q float64
			if st := d * float32(sc[i/16]); st != 0 {
				q = math.Round(float64(v / st))
			}
			u := uint8(max(-4, min(3, q)) + 4) // 0 … 7: the high bit set means "no −4"
			out[q3KQuants+i/128*32+i%32] |= (u & 3) << (2 * (i % 128 / 32))
			out[i%32] |= (u >> 2) << (4*(i/128) + i%128/32)
		}
		dst = append(dst, out...)
	}
	return dst
}

// QuantizeQ2K quantizes x (len a multiple of 256) into Q2_K super-blocks
// appended to dst, as QuantizeQ4K does on groups of 16: each group spans
// [min(x, 0), max(x)] in 3 steps; d and dmin are the largest step and
// offset over 15, each group's four-bit scale and min its share of them.
func QuantizeQ2K(dst []byte, x []float32) []byte {
	if len(x)%QK != 0 {
		panic(fmt.Sprintf("QuantizeQ2K: length %d is not a multiple of %d", len(x), QK))
	}
	for b := 0; b < len(x); b += QK {
		blk := x[b : b+QK]
		var step, off [QK / 16]float32
		var maxStep, maxOff float32
		for g := range step {
			lo, hi := float32(0), float32(0)
			for _, v := range blk[16*g : 16*(g+1)] {
				lo, hi = min(lo, v), max(hi, v)
			}
			step[g], off[g] = (hi-lo)/3, -lo
			maxStep, maxOff = max(maxStep, step[g]), max(maxOff, off[g])
		}
		d, dmin := RoundFP16(maxStep/15), RoundFP16(maxOff/15)
		out := make([]byte, q2KBytes)
		binary.LittleEndian.PutUint16(out[q2KD:], F32ToFP16(d))
		binary.LittleEndian.PutUint16(out[q2KDmin:], F32ToFP16(dmin))
		for g := range step {
			var sc, mn uint8
			if d > 0 {
				sc = uint8(min(15, math.Round(float64(step[g]/d))))
			}
			if dmin > 0 {
				mn = uint8(min(15, math.Round(float64(off[g]/dmin))))
			}
			out[g] = sc | mn<<4
		}
		for i, v := range blk {
			sc, mn := out[i/16]&0xF, out[i/16]>>4
			var q float64
			if st := d * float32(sc); st > 0 {
				q = math.Round(float64((v + dmin*float32(mn)) / st))
			}
			out[q2KQuants+i/128*32+i%32] |= uint8(max(0, min(3, q))) << (2 * (i % 128 / 32))
		}
		dst = append(dst, out...)
	}
	return dst
}
