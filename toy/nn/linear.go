// Linear projections and embedding tables.

package nn

import "github.com/toyml/toy/toy/tensor"

// Linear is y = x·Wᵀ + b.
type Linear struct {
	W *tensor.Tensor // [out, in], any weight type
	B *tensor.Tensor // [out] or nil
}

// Forward maps x [T, in] to [T, out].
func (l *Linear) Forward(x *tensor.Tensor) *tensor.Tensor {
	y := tensor.MatMul(x, l.W)
	if l.B != nil {
		y = tensor.Add(y, l.B)
	}
	return y
}

// Embedding maps token ids to rows of a table.
type Embedding struct {
	W *tensor.Tensor // [V, D]
}

// Forward returns the embeddings of ids as [T, D].
func (e *Embedding) Forward(ids []int32) *tensor.Tensor { return tensor.Embedding(e.W, ids) }
