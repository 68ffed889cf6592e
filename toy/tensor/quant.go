// Q8_0 quantization and row conversions between storage types and float32
// (the k-quants are in kquant.go and kquant2.go, Q4_1 and Q5_1 in quant41.go,
// IQ4_NL and IQ4_XS in iquant.go, MXFP4 in mxfp4.go).

package tensor

import (
	"encoding/binary"
	"fmt"
	"math"
)

// QuantizeQ8_0 quantizes x (len a multiple of 32) into Q8_0 blocks appended to
// dst. Per block: amax = max|x|, d = amax/127 stored as fp16, and
// q[i] = round(x[i]·127/amax), rounding half to even — the arithmetic of
// llama.cpp's AVX path, which toy matches so that activations quantize to the
// same int8 values.
func QuantizeQ8_0(dst []byte, x []float32) []byte {
	if len(x)%Q8BlockSize != 0 {
		panic(fmt.Sprintf("QuantizeQ8_0: length %d is not a multiple of %d", len(x), Q8BlockSize))
	}
	for b := 0; b < len(x); b += Q8BlockSize {
		blk := x[b : b+Q8BlockSize]
		var amax float32
		for _, v := range blk {
			if a := float32(math.Abs(float64(v))); a > amax {
				amax = a
			}
		}
		d := amax / 127
		var id float32
		if amax != 0 {
			id = 127 / amax
		}
		dst = binary.LittleEndian.AppendUint16(dst, F32ToFP16(d))
		for _, v := range blk {
			dst = append(dst, byte(int8(math.RoundToEven(float64(v*id)))))
		}
	}
	return dst
}

// DequantizeQ8_0 expands Q8_0 blocks into dst (len = 32 × blocks).
func DequantizeQ8_0(dst []float32, src []byte) {
	for b := 0; b < len(dst)/Q8BlockSize; b++ {
		blk := src[b*Q8BlockLen:]
		d := FP16ToF32(binary.LittleEndian.Uint16(blk))
		for i := 0; i < Q8BlockSize; i++ {
			dst[b*Q8BlockSize+i] = d * float32(int8(blk[2+i]))
		}
	}
}

// DecodeRow converts len(dst) elements of type t, stored in src, to float32.
func DecodeRow(dst []float32, src []byte, t DType) {
	switch t {
	case F32:
		for i := range dst {
			dst[i] = math.Float32frombits(binary.LittleEndian.Uint32(src[4*i:]))
		}
	case F16:
		for i := range dst {
			dst[i] = FP16ToF32(binary.LittleEndian.Uint16(src[2*i:]))
		}
	case BF16:
		for i := range dst {
			dst[i] = BF16ToF32(binary.LittleEndian.Uint16(src[2*i:]))
		}
	case Q8_0:
		DequantizeQ8_0(dst, src)
	case Q4_0, Q5_0, IQ4_NL:
		bytes, quant := q32Format(t)
		decodeQ32(dst, src, bytes, quant)
	case Q4_1, Q5_1:
		decodeQ41(dst, src, t)
	case Q4_K:
		DequantizeQ4K(dst, src)
	case Q6_K:
		DequantizeQ6K(dst, src)
	case Q5_K:
		DequantizeQ5K(dst, src)
	case Q3_K:
		DequantizeQ3K(dst, src)
	case Q2_K:
		DequantizeQ2K(dst, src)
	case IQ4_XS:
		DequantizeIQ4XS(dst, src)
	case MXFP4:
		DequantizeMXFP4(dst, src)
	default:
		panic(fmt.Sprintf("DecodeRow: cannot decode %v", t))
	}
}

// EncodeRow converts float32 values to type t, appending the bytes to dst.
// F16 and BF16 round to nearest even; the block types quantize as
// QuantizeQ8_0, QuantizeQ4_0, QuantizeQ5_0, QuantizeQ4_1, QuantizeQ5_1,
// QuantizeQ4K, QuantizeQ6K, QuantizeQ5K, QuantizeQ3K, QuantizeQ2K,
// QuantizeIQ4NL, QuantizeIQ4XS and QuantizeMXFP4.
func EncodeRow(dst []byte, x []float32, t DType) []byte {
	switch t {
	case F32:
		for _, v := range x {
			dst = binary.LittleEndian.AppendUint32(dst, math.Float32bits(v))
		}
	case F16:
		for _, v := range x {
			dst = binary.LittleEndian.AppendUint16(dst, F32ToFP16(v))
		}
	case BF16:
		for _, v := range x {
			dst = binary.LittleEndian.AppendUint16(dst, F32ToBF16(v))
		}
	case Q8_0:
		dst = QuantizeQ8_0(dst, x)
	case Q4_0:
		dst = QuantizeQ4_0(dst, x)
	case Q5_0:
		dst = QuantizeQ5_0(dst, x)
	case Q4_K:
		dst = QuantizeQ4K(dst, x)
	case Q4_1:
		dst = QuantizeQ4_1(dst, x)
	case Q5_1:
		dst = QuantizeQ5_1(dst, x)
	case Q6_K:
		dst = QuantizeQ6K(dst, x)
	case Q5_K:
		dst = QuantizeQ5K(dst, x)
	case Q3_K:
		dst = QuantizeQ3K(dst, x)
	case Q2_K:
		dst = QuantizeQ2K(dst, x)
	case IQ4_NL:
		dst = QuantizeIQ4NL(dst, x)
	case IQ4_XS:
		dst = QuantizeIQ4XS(dst, x)
	case MXFP4:
		dst = QuantizeMXFP4(dst, x)
	default:
		panic(fmt.Sprintf("EncodeRow: cannot encode %v", t))
	}
	return dst
}
