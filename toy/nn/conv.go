// A depthwise causal convolution over time (LFM2, Qwen3.5).

package nn

import "github.com/toyml/toy/toy/tensor"

// CausalConv convolves each channel of x [T, C] over time with its own
// taps, row c of taps [C, L]:
//
//	y_t = Σ_{j<L} taps[:, j] ⊙ x_{t−L+1+j}
//
// where the L−1 positions before x come from past, flat [1, (L−1)·C]
// (oldest first; nil for zeros, the start of a sequence). The sum runs over
// the taps in order, as llama.cpp's ggml_ssm_conv adds them. It is built
// from differentiable ops, so it trains and runs on every backend.
func CausalConv(past, x, taps *tensor.Tensor) *tensor.Tensor {
	T, C := x.Rows(), x.Cols()
	L := taps.Dim(1)
	if past == nil {
		past = tensor.New(1, (L-1)*C)
	}
	// Flat, each tap is a column range: x_{t−L+1+j} for t ∈ [T].
	flat := tensor.ConcatColumns(past, tensor.Reshape(x, 1, T*C)) // [1, (L−1+T)·C]
	var y *tensor.Tensor
	for j := range L {
		tap := tensor.Reshape(tensor.Columns(flat, j*C, (j+T)*C), T, C)
		w := tensor.Reshape(tensor.Columns(taps, j, j+1), 1, C) // tap j of every channel
		if p := tensor.Mul(tap, w); y == nil {
			y = p
		} else {
			y = tensor.Add(y, p)
		}
	}
	return y
}
