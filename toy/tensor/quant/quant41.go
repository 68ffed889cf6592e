// The 4- and 5-bit block types with an offset, Q4_1 and Q5_1 (older files):
// 32 weights per block under an fp16 scale d and an fp16 minimum m,
// multiplied with Q8_1 activations as llama.cpp does.

package quant

import (
	"encoding/binary"
	"fmt"
	"math"
)

// Q4_1 block (20 bytes): fp16 d, fp16 m, then 16 bytes of nibbles as in
// Q4_0 (weights 0–15 low, 16–31 high); weight i is d·q_i + m, q_i in 0 … 15.
// Q5_1 block (24 bytes): fp16 d, fp16 m, a 32-bit word of fifth bits (bit i
// for weight i), the nibbles; weight i is d·q_i + m, q_i in 0 … 31.
// Q8_1 block (36 bytes, activations): fp16 d, fp16 s, 32 int8 q; element i
// is d·q_i, and s = d·Σq (rounded to fp16), what the weights' m multiplies.
const (
	q4_1Bytes = 20
	q5_1Bytes = 24
	q8_1Bytes = 36
)

// q4_1Quant returns weight i's quant (0 … 15).
func q4_1Quant(blk []byte, i int) uint8 {
	b := blk[4+i%16]
	if i >= 16 {
		b >>= 4
	}
	return b & 0xF
}

// q5_1Quant returns weight i's quant (0 … 31).
func q5_1Quant(blk []byte, i int) uint8 {
	b := blk[8+i%16]
	if i >= 16 {
		b >>= 4
	}
	return b&0xF | byte(binary.LittleEndian.Uint32(blk[4:])>>i&1)<<4
}

// q41Format returns the block size and quant reader of Q4_1 or Q5_1.
func q41Format(t Type) (bytes int, quant func([]byte, int) uint8) {
	switch t {
	case Q4_1:
		return q4_1Bytes, q4_1Quant
	case Q5_1:
		return q5_1Bytes, q5_1Quant
	}
	panic(fmt.Sprintf("q41Format: %v", t))
}

// decodeQ41 expands Q4_1 or Q5_1 blocks into dst: d·q + m.
func decodeQ41(dst []float32, src []byte, t Type) {
	bytes, quant := q41Format(t)
	for b := 0; b < len(dst)/32; b++ {
		blk := src[b*bytes : (b+1)*bytes]
		d := FP16ToF32(binary.LittleEndian.Uint16(blk))
		m := FP16ToF32(binary.LittleEndian.Uint16(blk[2:]))
		for i := 0; i < 32; i++ {
			dst[32*b+i] = d*float32(quant(blk, i)) + m
		}
	}
}

// quantizeQ8_1 quantizes x (len a multiple of 32) into Q8_1 blocks appended
// to dst: d and q as QuantizeQ8_0 computes them (llama.cpp's AVX path), and
// s = fp16(d·Σq) with d the float32 amax/127, before its rounding to fp16.
func quantizeQ8_1(dst []byte, x []float32) []byte {
	for b := 0; b < len(x); b += 32 {
		blk := x[b : b+32]
		var amax float32
		for _, v := range blk {
			amax = max(amax, float32(math.Abs(float64(v))))
		}
		d := amax / 127
		var id float32
		if amax != 0 {
			id = 127 / amax
		}
		at := len(dst)
		dst = binary.LittleEndian.AppendUint16(dst, F32ToFP16(d))
		dst = append(dst, 0, 0) // s, below
		var s int32
		for _, v := range blk {
			q := int8(math.RoundToEven(float64(v * id)))
			dst = append(dst, byte(q))
			s += int32(q)
		}
		binary.LittleEndian.PutUint16(dst[at+2:], F32ToFP16(d*float32(s)))
	}
	return dst
}

// dotQ41 returns the dot product of a Q4_1 or Q5_1 weight row with Q8_1
// activations: per block the exact integer s = Σ q_w·q_x, then
// sum += s·(d_w·d_x) and sum += m_w·s_x, in block order.
func dotQ41(w []byte, bytes int, quant func([]byte, int) uint8, x []byte) float32 {
	var sum float32
	for b := 0; b < len(x)/q8_1Bytes; b++ {
		blk := w[b*bytes : (b+1)*bytes]
		xb := x[b*q8_1Bytes : (b+1)*q8_1Bytes]
		var s int32
		for i := 0; i < 32; i++ {
			s += int32(quant(blk, i)) * int32(int8(xb[4+i]))
		}
		d := FP16ToF32(binary.LittleEndian.Uint16(blk)) * FP16ToF32(binary.LittleEndian.Uint16(xb))
		sum += float32(s) * d
		sum += FP16ToF32(binary.LittleEndian.Uint16(blk[2:])) * FP16ToF32(binary.LittleEndian.Uint16(xb[2:]))
	}
	return sum
}

// quantizeQ41 quantizes x (len a multiple of 32) as llama.cpp's reference
// quantizers for Q4_1 (levels 16) and Q5_1 (levels 32) do: per block
// d = (max − min)/(levels − 1), m = min, q = trunc((x − min)/d + 0.5)
// (Q4_1 capped at 15), with the float32 d and min, before their rounding
// to fp16.
func quantizeQ41(dst []byte, x []float32, t Type) []byte {
	if len(x)%32 != 0 {
		panic(fmt.Sprintf("quantize %v: length %d is not a multiple of 32", t, len(x)))
	}
	bytes, _ := q41Format(t)
	levels := 16
	if t == Q5_1 {
		levels = 32
	}
	for b := 0; b < len(x); b += 32 {
		lo, hi := float32(math.MaxFloat32), float32(-math.MaxFloat32)
		for _, v := range x[b : b+32] {
			if v < lo { // not min/max: a −0 after a +0 must not replace it, as in ggml
				lo = v
			}
			if v > hi {
				hi = v
			}
		}
		d := (hi - lo) / float32(levels-1)
		var id float32
		if d != 0 {
			id = 1 / d
		}
		blk := make([]byte, bytes)
		binary.LittleEndian.PutUint16(blk, F32ToFP16(d))
		binary.LittleEndian.PutUint16(blk[2:], F32ToFP16(lo))
		var qh uint32
		for i, v := range x[b : b+32] {
			q := uint8(float32((v-lo)*id) + 0.5) // rounded product: no fused multiply-add
			if t == Q4_1 {
				q = uint8(min(15, int8(q)))
			}
			at := 4 + i%16
			if t == Q5_1 {
				at = 8 + i%16
				qh |= uint32(q>>4&1) << i
			}
			if i >= 16 {
				blk[at] |= (q & 0xF) << 4
			} else {
				blk[at] |= q & 0xF
			}
		}
		if t == Q5_1 {
			binary.LittleEndian.PutUint32(blk[4:], qh)
		}
		dst = append(dst, blk...)
	}
	return dst
}

// QuantizeQ4_1 quantizes x (len a multiple of 32) into Q4_1 blocks appended
// to dst.
func QuantizeQ4_1(dst []byte, x []float32) []byte { return quantizeQ41(dst, x, Q4_1) }

// QuantizeQ5_1 quantizes x (len a multiple of 32) into Q5_1 blocks appended
// to dst.
func QuantizeQ5_1(dst []byte, x []float32) []byte { return quantizeQ41(dst, x, Q5_1) }
