// The 4- and 5-bit block types older files use, and Q4_K_M files use where a
// row is not a whole number of 256-weight k-quant blocks (llama.cpp then
// stores Q5_0): 32 weights per block under one fp16 scale, multiplied with
// Q8_0 activations.

package quant

import (
	"encoding/binary"
	"fmt"
	"math"
)

// Q4_0 block (18 bytes): fp16 d, then 16 bytes whose low nibbles are weights
// 0–15 and high nibbles weights 16–31; weight i is d·(q_i − 8).
// Q5_0 block (22 bytes): fp16 d, a 32-bit word of fifth bits (bit i for
// weight i), then the low four bits as in Q4_0; weight i is d·(q_i − 16).
const (
	q4_0Bytes = 18
	q5_0Bytes = 22
)

// q4_0Quant returns weight i's quant minus its offset (−8 … 7).
func q4_0Quant(blk []byte, i int) int8 {
	b := blk[2+i%16]
	if i >= 16 {
		b >>= 4
	}
	return int8(b&0xF) - 8
}

// q5_0Quant returns weight i's quant minus its offset (−16 … 15).
func q5_0Quant(blk []byte, i int) int8 {
	b := blk[6+i%16]
	if i >= 16 {
		b >>= 4
	}
	high := byte(binary.LittleEndian.Uint32(blk[2:])>>i) & 1
	return int8(b&0xF|high<<4) - 16
}

// decodeQ32 expands blocks of 32 weights of size bytes each, whose quant i is
// quant(blk, i), into dst.
func decodeQ32(dst []float32, src []byte, bytes int, quant func([]byte, int) int8) {
	for b := 0; b < len(dst)/32; b++ {
		blk := src[b*bytes : (b+1)*bytes]
		d := FP16ToF32(binary.LittleEndian.Uint16(blk))
		for i := 0; i < 32; i++ {
			dst[32*b+i] = d * float32(quant(blk, i))
		}
	}
}

// dotQ32 returns the dot product of a row of 32-weight blocks with Q8_0
// activations: per block the exact integer sum of q_w·q_x, scaled by
// d_w·d_x.
func dotQ32(w []byte, bytes int, quant func([]byte, int) int8, x []byte) float32 {
	var sum float32
	for b := 0; b < len(x)/Q8BlockLen; b++ {
		blk := w[b*bytes : (b+1)*bytes]
		xb := x[b*Q8BlockLen : (b+1)*Q8BlockLen]
		var s int32
		for i := 0; i < 32; i++ {
			s += int32(quant(blk, i)) * int32(int8(xb[2+i]))
		}
		sum += float32(s) * (FP16ToF32(binary.LittleEndian.Uint16(blk)) * FP16ToF32(binary.LittleEndian.Uint16(xb)))
	}
	return sum
}

// quantizeQ32 quantizes x (len a multiple of 32) as llama.cpp's reference
// quantizers for Q4_0 (levels 16) and Q5_0 (levels 32) do: the element of
// largest magnitude, max (sign kept), sets d = max/−(levels/2), and
// q = min(levels−1, trunc(x/d + levels/2 + 0.5)).
func quantizeQ32(dst []byte, x []float32, levels int, put func(blk []byte, i int, q uint8), bytes int) []byte {
	if len(x)%32 != 0 {
		panic(fmt.Sprintf("quantize: length %d is not a multiple of 32", len(x)))
	}
	half := float32(levels / 2)
	for b := 0; b < len(x); b += 32 {
		var amax, max float32
		for _, v := range x[b : b+32] {
			if a := float32(math.Abs(float64(v))); a > amax {
				amax, max = a, v
			}
		}
		d := max / -half
		var id float32
		if d != 0 {
			id = 1 / d
		}
		blk := make([]byte, bytes)
		binary.LittleEndian.PutUint16(blk, F32ToFP16(d))
		for i, v := range x[b : b+32] {
			put(blk, i, uint8(min(float32(levels-1), float32(int8(float32(v*id)+(half+0.5)))))) // product rounded: no FMA
		}
		dst = append(dst, blk...)
	}
	return dst
}

// QuantizeQ4_0 quantizes x (len a multiple of 32) into Q4_0 blocks appended
// to dst.
func QuantizeQ4_0(dst []byte, x []float32) []byte {
	return quantizeQ32(dst, x, 16, func(blk []byte, i int, q uint8) {
		if i >= 16 {
			q <<= 4
		}
		blk[2+i%16] |= q
	}, q4_0Bytes)
}

// QuantizeQ5_0 quantizes x (len a multiple of 32) into Q5_0 blocks appended
// to dst.
func QuantizeQ5_0(dst []byte, x []float32) []byte {
	return quantizeQ32(dst, x, 32, func(blk []byte, i int, q uint8) {
		lo := q & 0xF
		if i >= 16 {
			lo <<= 4
		}
		blk[6+i%16] |= lo
		h := binary.LittleEndian.Uint32(blk[2:]) | uint32(q>>4)<<i
		binary.LittleEndian.PutUint32(blk[2:], h)
	}, q5_0Bytes)
}

// q32Format returns the block size and quant reader of Q4_0, Q5_0 or
// IQ4_NL (whose quant is its level: iquant.go).
func q32Format(t Type) (bytes int, quant func([]byte, int) int8) {
	switch t {
	case Q4_0:
		return q4_0Bytes, q4_0Quant
	case Q5_0:
		return q5_0Bytes, q5_0Quant
	case IQ4_NL:
		return iq4NLBytes, iq4NLQuant
	}
	panic(fmt.Sprintf("q32Format: %v", t))
}
