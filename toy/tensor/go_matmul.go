// The pure-Go matrix multiply, with the dot products of each weight type.

package tensor

import (
	"encoding/binary"
	"fmt"
)

// fp16Table maps every fp16 bit pattern to its float32 value.
var fp16Table = func() *[1 << 16]float32 {
	var t [1 << 16]float32
	for i := range t {
		t[i] = FP16ToF32(uint16(i))
	}
	return &t
}()

// MatMul computes out[M, N] = x[M, K]·w[N, K]ᵀ. Work is split over the rows of
// w, so each weight row is read (and decoded) once for all M activation rows.
// Activations are first converted to the weight's dot type, as llama.cpp does:
// fp16- or bf16-rounded for F16/BF16 weights, Q8_0 blocks for Q8_0, Q4_0,
// Q5_0, IQ4_NL and MXFP4 weights, Q8_1 blocks for Q4_1 and Q5_1, Q8_K
// blocks for the k-quants and IQ4_XS.
func (Go) MatMul(out, x, w *Tensor) {
	M, K, N := x.Rows(), x.Cols(), w.shape[0]
	o := out.f32
	switch w.dtype {
	case F32:
		parallelFor(N, 16, func(lo, hi int) {
			for n := lo; n < hi; n++ {
				wr := w.f32[n*K : (n+1)*K]
				for m := 0; m < M; m++ {
					o[m*N+n] = dotF32(x.f32[m*K:(m+1)*K], wr)
				}
			}
		})
	case F16, BF16:
		xr := make([]float32, len(x.f32))
		for i, v := range x.f32 {
			if w.dtype == F16 {
				xr[i] = RoundFP16(v)
			} else {
				xr[i] = BF16ToF32(F32ToBF16(v))
			}
		}
		parallelFor(N, 16, func(lo, hi int) {
			wr := make([]float32, K)
			for n := lo; n < hi; n++ {
				decodeHalfRow(wr, w.raw[n*K*2:(n+1)*K*2], w.dtype)
				for m := 0; m < M; m++ {
					o[m*N+n] = dotF32(xr[m*K:(m+1)*K], wr)
				}
			}
		})
	case Q8_0:
		rowBytes := K / Q8BlockSize * Q8BlockLen
		xq := QuantizeQ8_0(make([]byte, 0, M*rowBytes), x.f32[:M*K])
		parallelFor(N, 16, func(lo, hi int) {
			for n := lo; n < hi; n++ {
				wr := w.raw[n*rowBytes : (n+1)*rowBytes]
				for m := 0; m < M; m++ {
					o[m*N+n] = dotQ8(xq[m*rowBytes:(m+1)*rowBytes], wr)
				}
			}
		})
	case Q4_0, Q5_0, IQ4_NL, MXFP4:
		// 32-weight blocks against Q8_0-quantized activations.
		var rowBytes int
		var dot func(w, x []byte) float32
		if w.dtype == MXFP4 {
			rowBytes, dot = K/32*mxfp4Bytes, dotMXFP4
		} else {
			bytes, quant := q32Format(w.dtype)
			rowBytes, dot = K/32*bytes, func(w, x []byte) float32 { return dotQ32(w, bytes, quant, x) }
		}
		xb := K / Q8BlockSize * Q8BlockLen
		xq := QuantizeQ8_0(make([]byte, 0, M*xb), x.f32[:M*K]) // rows are whole blocks
		parallelFor(N, 16, func(lo, hi int) {
			for n := lo; n < hi; n++ {
				wr := w.raw[n*rowBytes : (n+1)*rowBytes]
				for m := 0; m < M; m++ {
					o[m*N+n] = dot(wr, xq[m*xb:(m+1)*xb])
				}
			}
		})
	case Q4_1, Q5_1:
		bytes, quant := q41Format(w.dtype)
		rowBytes := K / 32 * bytes
		xb := K / 32 * q8_1Bytes
		xq := quantizeQ8_1(make([]byte, 0, M*xb), x.f32[:M*K]) // rows are whole blocks
		parallelFor(N, 16, func(lo, hi int) {
			for n := lo; n < hi; n++ {
				wr := w.raw[n*rowBytes : (n+1)*rowBytes]
				for m := 0; m < M; m++ {
					o[m*N+n] = dotQ41(wr, bytes, quant, xq[m*xb:(m+1)*xb])
				}
			}
		})
	case Q4_K, Q6_K, Q5_K, Q3_K, Q2_K, IQ4_XS:
		dot := kquantDot(w.dtype)
		rowBytes, _ := w.dtype.RowBytes(K)
		xq := quantizeQ8K(make([]q8K, 0, M*K/QK), x.f32[:M*K]) // rows are whole blocks
		nb := K / QK
		parallelFor(N, 16, func(lo, hi int) {
			for n := lo; n < hi; n++ {
				wr := w.raw[n*rowBytes : (n+1)*rowBytes]
				for m := 0; m < M; m++ {
					o[m*N+n] = dot(wr, xq[m*nb:(m+1)*nb])
				}
			}
		})
	default:
		panic(fmt.Sprintf("MatMul: weight type %v is not supported", w.dtype))
	}
}

func decodeHalfRow(dst []float32, src []byte, t DType) {
	if t == F16 {
		for i := range dst {
			dst[i] = fp16Table[binary.LittleEndian.Uint16(src[2*i:])]
		}
		return
	}
	for i := range dst {
		dst[i] = BF16ToF32(binary.LittleEndian.Uint16(src[2*i:]))
	}
}

// dotF32 returns Σ a[i]·b[i], with four partial sums for speed.
func dotF32(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(a); i += 4 {
		s0 += a[i] * b[i]
		s1 += a[i+1] * b[i+1]
		s2 += a[i+2] * b[i+2]
		s3 += a[i+3] * b[i+3]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return (s0 + s1) + (s2 + s3)
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
		d := fp16Table[binary.LittleEndian.Uint16(xb)] * fp16Table[binary.LittleEndian.Uint16(wb)]
		sum += float32(s0+s1+s2+s3) * d
	}
	return sum
}
