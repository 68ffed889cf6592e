// MXFP4, the OCP microscaling 4-bit float that gpt-oss stores its expert
// weights in (llama.cpp's GGML_TYPE_MXFP4): blocks of 32 FP4 (E2M1) values
// under one power-of-two scale (E8M0). As IQ4_NL, each 4-bit index selects a
// level from a table, and products take Q8_0 activations (llama.cpp's
// vec_dot_type); the scale is an exponent byte instead of an fp16.

package quant

import (
	"fmt"
	"math"
)

// MXFP4 block (17 bytes): the exponent byte e, then 16 bytes of indices laid
// out as Q4_0's nibbles (weights 0–15 low, 16–31 high). Weight i is
// kvaluesMXFP4[q_i]·e8m0Half(e): the table holds the E2M1 values doubled (so
// that they are integers), and the scale is halved to match.
const mxfp4Bytes = 17

// kvaluesMXFP4 are the 16 E2M1 values, doubled: indices 0–7 are
// 0, 0.5, 1, 1.5, 2, 3, 4, 6 and 8–15 their negatives (index 8 is −0,
// stored as the integer 0), as llama.cpp's kvalues_mxfp4 (ggml-common.h).
var kvaluesMXFP4 = [16]int8{0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12}

// e8m0Half returns half the E8M0 scale e stands for, 2^(e−127)/2 = 2^(e−128),
// as llama.cpp's ggml_e8m0_to_fp32_half: e = 0 and 1 give the subnormals
// 2⁻¹²⁸ and 2⁻¹²⁷, and e = 255 (NaN in the OCP format) is read as 2¹²⁷.
func e8m0Half(e uint8) float32 {
	if e < 2 {
		return math.Float32frombits(0x00200000 << e)
	}
	return math.Float32frombits(uint32(e-1) << 23)
}

// mxfp4Level returns weight i's doubled level, kvaluesMXFP4[q_i] (−12 … 12).
func mxfp4Level(blk []byte, i int) int8 {
	b := blk[1+i%16]
	if i >= 16 {
		b >>= 4
	}
	return kvaluesMXFP4[b&0xF]
}

// DequantizeMXFP4 expands MXFP4 blocks into dst (len = 32 × blocks): weight
// i of a block is kvalues[q_i]·2^(e−128), as llama.cpp's
// dequantize_row_mxfp4 (±12·2¹²⁷ overflows to ±Inf there too).
func DequantizeMXFP4(dst []float32, src []byte) {
	for b := 0; b < len(dst)/32; b++ {
		blk := src[b*mxfp4Bytes : (b+1)*mxfp4Bytes]
		d := e8m0Half(blk[0])
		for i := 0; i < 32; i++ {
			dst[32*b+i] = float32(mxfp4Level(blk, i)) * d
		}
	}
}

// dotMXFP4 returns the dot product of an MXFP4 weight row with Q8_0
// activations, as llama.cpp's ggml_vec_dot_mxfp4_q8_0 (its generic form):
// per block the exact integer sum of kvalues[q_w]·q_x (at most
// 32·12·127 in magnitude), times d = d_x·2^(e−128), added in block order.
func dotMXFP4(w, x []byte) float32 {
	var sum float32
	for b := 0; b < len(x)/Q8BlockLen; b++ {
		blk := w[b*mxfp4Bytes : (b+1)*mxfp4Bytes : (b+1)*mxfp4Bytes]
		xb := x[b*Q8BlockLen : (b+1)*Q8BlockLen : (b+1)*Q8BlockLen]
		var s int32
		for j, q := range blk[1:] {
			s += int32(kvaluesMXFP4[q&0xF])*int32(int8(xb[2+j])) + int32(kvaluesMXFP4[q>>4])*int32(int8(xb[2+16+j]))
		}
		d := FP16ToF32(uint16(xb[0])|uint16(xb[1])<<8) * e8m0Half(blk[0])
		sum += float32(d * float32(s)) // rounded, then added: no fused multiply-add
	}
	return sum
}

// mxfp4Exponent returns the exponent byte llama.cpp's quantize_row_mxfp4_ref
// chooses for a block whose largest magnitude is amax:
// e = floor(log₂ amax) − 2 + 127, with log₂ rounded to float32 first (as
// log2f: an amax a few ulps below a power of two counts as that power), so
// that amax/2^(e−127) lies in [4, 8) (just below 4 in that case) and the
// largest E2M1 value, 6, falls near amax; 0 for an all-zero block.
//
// For amax below 2⁻¹²⁵, where e would be negative, it wraps to the low byte
// (C's float to uint8_t conversion is undefined there; this is what the
// x86-64 builds of llama.cpp do, and the huge scale it gives rounds every
// weight of the block to 0). An infinite amax gives 0, as x86-64 converts
// +Inf.
func mxfp4Exponent(amax float32) uint8 {
	if !(amax > 0) {
		return 0
	}
	if math.IsInf(float64(amax), 1) { // +Inf to int32 on x86-64: 0x80000000, low byte 0
		return 0
	}
	l := math.Floor(float64(float32(math.Log2(float64(amax)))))
	return uint8(int32(l) - 2 + 127)
}

// mxfp4Nearest returns the index of the doubled level nearest to x in steps
// of d, |kvalues[i]·d − x| computed in float32; on a tie the lower index
// (the smaller magnitude, and +0 over −0), as llama.cpp's best_index_mxfp4.
func mxfp4Nearest(x, d float32) uint8 {
	best, bestErr := 0, absf(float32(float32(kvaluesMXFP4[0])*d)-x)
	for i := 1; i < 16; i++ {
		if err := absf(float32(float32(kvaluesMXFP4[i])*d) - x); err < bestErr {
			best, bestErr = i, err
		}
	}
	return uint8(best)
}

// QuantizeMXFP4 quantizes x (len a multiple of 32) into MXFP4 blocks
// appended to dst, bit for bit as llama.cpp's quantize_row_mxfp4_ref (what
// llama-quantize writes for MXFP4_MOE's expert tensors; it takes no
// importance matrix): amax = max|x| (NaNs skipped) sets the exponent byte e
// (mxfp4Exponent), and each weight takes the level nearest to x/2^(e−128)
// (mxfp4Nearest).
func QuantizeMXFP4(dst []byte, x []float32) []byte {
	if len(x)%32 != 0 {
		panic(fmt.Sprintf("QuantizeMXFP4: length %d is not a multiple of 32", len(x)))
	}
	for b := 0; b < len(x); b += 32 {
		xb := x[b : b+32]
		var amax float32
		for _, v := range xb {
			if a := absf(v); amax < a {
				amax = a
			}
		}
		e := mxfp4Exponent(amax)
		d := e8m0Half(e)
		var blk [mxfp4Bytes]byte
		blk[0] = e
		for j := 0; j < 16; j++ {
			blk[1+j] = mxfp4Nearest(xb[j], d) | mxfp4Nearest(xb[16+j], d)<<4
		}
		dst = append(dst, blk[:]...)
	}
	return dst
}
