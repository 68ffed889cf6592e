// Q8_0, row conversions between storage types and float32, and the dot
// products of weight rows with quantized activations (the k-quants are in
// kquant.go and kquant2.go, Q4_0 and Q5_0 in quant4.go, Q4_1 and Q5_1 in
// quant41.go, IQ4_NL and IQ4_XS in iquant.go, MXFP4 in mxfp4.go).

package quant

import (
	"encoding/binary"
	"fmt"
	"math"
)

// Q8_0 layout: blocks of 32 elements, each an fp16 scale d followed by 32 int8
// quants; element i of a block is d * q[i].
const (
	Q8BlockSize = 32
	Q8BlockLen  = 2 + Q8BlockSize // bytes per block
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
func DecodeRow(dst []float32, src []byte, t Type) {
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
func EncodeRow(dst []byte, x []float32, t Type) []byte {
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

// dotQ8 returns the dot product of two Q8_0 rows: per block the exact int32 sum
// of q_x·q_w, scaled by d_x·d_w, accumulated in float32.
func dotQ8(x, w []byte) float32 {
	var sum float32
	for b := 0; b+Q8BlockLen <= len(x); b += Q8BlockLen {
		xb := x[b : b+Q8BlockLen : b+Q8BlockLen]
		wb := w[b : b+Q8BlockLen : b+Q8BlockLen]
		var s0, s1, s2, s3 int32
		for i := 2; i < Q8BlockLen; i += 4 {
			s0 += int32(int8(xb[i])) * int32(int8(wb[i]))
			s1 += int32(int8(xb[i+1])) * int32(int8(wb[i+1]))
			s2 += int32(int8(xb[i+2])) * int32(int8(wb[i+2]))
			s3 += int32(int8(xb[i+3])) * int32(int8(wb[i+3]))
		}
		d := FP16ToF32(binary.LittleEndian.Uint16(xb)) * FP16ToF32(binary.LittleEndian.Uint16(wb))
		sum += float32(s0+s1+s2+s3) * d
	}
	return sum
}

// RowDot quantizes x, rows of k activations (k a whole number of t's
// blocks), to the "dot type" of weight type t, as llama.cpp's CPU backend
// does — Q8_0 blocks for Q8_0, Q4_0, Q5_0, IQ4_NL and MXFP4 weights, Q8_1
// blocks for Q4_1 and Q5_1, Q8_K blocks for the k-quants and IQ4_XS — and
// returns dot, where dot(w, m) is the product of the weight row w (k
// elements of type t) with row m of x: per block an exact integer sum,
// then its float32 scaling, added in block order. It returns nil for the
// plain types (F32, F16, BF16) and the types toy cannot compute with.
func RowDot(t Type, x []float32, k int) (dot func(w []byte, m int) float32) {
	switch t {
	case Q8_0, Q4_0, Q5_0, IQ4_NL, MXFP4:
		var dotQ func(w, x []byte) float32
		switch t {
		case Q8_0:
			dotQ = func(w, x []byte) float32 { return dotQ8(x, w) }
		case MXFP4:
			dotQ = dotMXFP4
		default:
			bytes, quant := q32Format(t)
			dotQ = func(w, x []byte) float32 { return dotQ32(w, bytes, quant, x) }
		}
		xb := k / Q8BlockSize * Q8BlockLen
		xq := QuantizeQ8_0(make([]byte, 0, len(x)/k*xb), x) // rows are whole blocks
		return func(w []byte, m int) float32 { return dotQ(w, xq[m*xb:(m+1)*xb]) }
	case Q4_1, Q5_1:
		bytes, quant := q41Format(t)
		xb := k / 32 * q8_1Bytes
		xq := quantizeQ8_1(make([]byte, 0, len(x)/k*xb), x)
		return func(w []byte, m int) float32 { return dotQ41(w, bytes, quant, xq[m*xb:(m+1)*xb]) }
	case Q4_K, Q6_K, Q5_K, Q3_K, Q2_K, IQ4_XS:
		dotK := kquantDot(t)
		nb := k / QK
		xq := quantizeQ8K(make([]q8K, 0, len(x)/QK), x)
		return func(w []byte, m int) float32 { return dotK(w, xq[m*nb:(m+1)*nb]) }
	}
	return nil
}
