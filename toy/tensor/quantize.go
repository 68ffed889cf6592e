// Rows of float32 to and from a storage type, for tensors and files: the
// formats themselves are package quant's.

package tensor

import (
	"errors"
	"fmt"

	"github.com/toyml/toy/toy/tensor/quant"
)

// DecodeRow converts len(dst) elements of type t, stored in src, to float32
// (quant.DecodeRow).
func DecodeRow(dst []float32, src []byte, t DType) { quant.DecodeRow(dst, src, quant.Type(t)) }

// EncodeRow converts float32 values to type t, appending the bytes to dst.
// F16 and BF16 round to nearest even; the block types quantize as
// quant.QuantizeQ8_0, quant.QuantizeQ4K, … do (quant.EncodeRow).
func EncodeRow(dst []byte, x []float32, t DType) []byte {
	return quant.EncodeRow(dst, x, quant.Type(t))
}

// ErrCannotQuantize is returned by QuantizeRows for a type it cannot write
// (I32, or a ggml type toy does not compute with).
var ErrCannotQuantize = errors.New("tensor: cannot quantize to this type")

// QuantizeRows quantizes len(x)/rowLen rows of rowLen values to type t and
// returns their bytes, as llama.cpp's ggml_quantize_chunk does without an
// importance matrix: Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, IQ4_NL and IQ4_XS with
// ggml's scale searches; Q8_0, Q5_1, Q5_0, Q4_1, Q4_0 and MXFP4 with its
// reference rounding; F16 and BF16 rounded to nearest even; F32 copied
// (quant.RowQuantizer). rowLen must be a multiple of t's block (256 for
// the k-quants and IQ4_XS, 32 for the others). Rows are independent, and
// are spread over Threads() goroutines.
func QuantizeRows(t DType, x []float32, rowLen int) ([]byte, error) {
	return QuantizeRowsWeighted(t, x, rowLen, nil)
}

// QuantizeRowsWeighted is QuantizeRows with an importance matrix: weights
// holds one importance per column (rowLen values, llama-imatrix's mean
// squared activation of that input), shared by every row; nil is
// QuantizeRows. Types that take no importance (Q8_0, F16, BF16, MXFP4, …)
// ignore it, as llama.cpp does.
//
// With weights, each type runs llama.cpp's weighted search (ggml's
// quantize_<type>_impl): a weight's error counts imatrix·√(σ² + x²), σ²
// the mean square of its super-block (its row for Q4_0 … Q5_1); Q6_K
// weighs by the imatrix alone. The importances must be finite and ≥ 0, as
// llama.cpp requires.
func QuantizeRowsWeighted(t DType, x []float32, rowLen int, weights []float32) ([]byte, error) {
	quantize := quant.RowQuantizer(quant.Type(t))
	if quantize == nil {
		return nil, fmt.Errorf("quantize rows: %w: %v", ErrCannotQuantize, t)
	}
	if rowLen <= 0 || len(x)%rowLen != 0 {
		return nil, fmt.Errorf("quantize rows to %v: %d values are not whole rows of %d", t, len(x), rowLen)
	}
	rowBytes, ok := t.RowBytes(rowLen)
	if !ok {
		return nil, fmt.Errorf("quantize rows to %v: a row of %d is not a multiple of its block of %d", t, rowLen, t.BlockSize())
	}
	if weights != nil && len(weights) != rowLen {
		return nil, fmt.Errorf("quantize rows to %v: %d importances for rows of %d", t, len(weights), rowLen)
	}
	rows := len(x) / rowLen
	out := make([]byte, rows*rowBytes)
	parallelFor(rows, max(1, 16384/rowLen), func(lo, hi int) {
		for r := lo; r < hi; r++ {
			quantize(out[r*rowBytes:(r+1)*rowBytes:(r+1)*rowBytes], x[r*rowLen:(r+1)*rowLen], weights)
		}
	})
	return out, nil
}
