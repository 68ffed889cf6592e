// Normalisation layers.

package nn

import "github.com/toyml/toy/toy/tensor"

// RMSNorm is y = x / sqrt(mean(x²) + ε) ⊙ w (Zhang & Sennrich 2019).
type RMSNorm struct {
	W   *tensor.Tensor // [D]
	Eps float32
}

// Forward normalises each row of x [T, D].
func (n *RMSNorm) Forward(x *tensor.Tensor) *tensor.Tensor { return tensor.RMSNorm(x, n.W, n.Eps) }

// LayerNorm is y = (x − mean) / sqrt(var + ε) ⊙ w + b (Ba et al. 2016).
type LayerNorm struct {
	W   *tensor.Tensor // [D]
	B   *tensor.Tensor // [D]
	Eps float32
}

// Forward normalises each row of x [T, D].
func (n *LayerNorm) Forward(x *tensor.Tensor) *tensor.Tensor {
	return tensor.LayerNorm(x, n.W, n.B, n.Eps)
}
