// The pure-Go matrix multiply (the dot products of the block types are
// package quant's).

package tensor

import (
	"encoding/binary"
	"fmt"

	"github.com/toyml/toy/toy/tensor/quant"
)

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
				xr[i] = quant.RoundFP16(v)
			} else {
				xr[i] = quant.BF16ToF32(quant.F32ToBF16(v))
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
	default:
		// The block types: activations quantized once to the weight's dot
		// type, then integer dot products per block.
		dot := quant.RowDot(quant.Type(w.dtype), x.f32[:M*K], K)
		if dot == nil {
			panic(fmt.Sprintf("MatMul: weight type %v is not supported", w.dtype))
		}
		rowBytes, _ := w.dtype.RowBytes(K)
		parallelFor(N, 16, func(lo, hi int) {
			for n := lo; n < hi; n++ {
				wr := w.raw[n*rowBytes : (n+1)*rowBytes]
				for m := 0; m < M; m++ {
					o[m*N+n] = dot(wr, m)
				}
			}
		})
	}
}

// decodeHalfRow converts a row of F16 or BF16 weights to float32.
func decodeHalfRow(dst []float32, src []byte, t DType) {
	if t == F16 {
		for i := range dst {
			dst[i] = quant.FP16ToF32(binary.LittleEndian.Uint16(src[2*i:]))
		}
		return
	}
	for i := range dst {
		dst[i] = quant.BF16ToF32(binary.LittleEndian.Uint16(src[2*i:]))
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
