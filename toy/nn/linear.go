// Linear projections and embedding tables.

package nn

import "github.com/toyml/toy/toy/tensor"

// Linear is y = x·Wᵀ + b, optionally with a low-rank adapter (LoRA, Hu et
// al. 2021) beside the frozen W:
//
//	y = x·Wᵀ + b + (α/r)·(x·Aᵀ)·Bᵀ
type Linear struct {
	W *tensor.Tensor // [out, in], any weight type
	B *tensor.Tensor // [out] or nil

	LoRA *LoRA // nil: no adapter
}

// LoRA is a rank-r update of a Linear, stored as llama.cpp stores adapters.
type LoRA struct {
	A       *tensor.Tensor // [r, in]
	B       *tensor.Tensor // [out, r]
	Scale   float32        // α / r
	Dropout float32        // probability of zeroing an input feature of the adapter path, in training
	Seed    uint64         // dropout masks derive from Seed and the call count
	calls   uint64
}

// Forward maps x [T, in] to [T, out].
func (l *Linear) Forward(x *tensor.Tensor) *tensor.Tensor {
	y := tensor.MatMul(x, l.W)
	if l.B != nil {
		y = tensor.Add(y, l.B)
	}
	if a := l.LoRA; a != nil {
		h := x
		if a.Dropout > 0 && tensor.Recording() {
			a.calls++
			h = tensor.Dropout(x, a.Dropout, a.Seed^a.calls*0x9e3779b97f4a7c15)
		}
		y = tensor.Add(y, tensor.Scale(tensor.MatMul(tensor.MatMul(h, a.A), a.B), a.Scale))
	}
	return y
}

// Embedding maps token ids to rows of a table.
type Embedding struct {
	W *tensor.Tensor // [V, D]
}

// Forward returns the embeddings of ids as [T, D].
func (e *Embedding) Forward(ids []int32) *tensor.Tensor { return tensor.Embedding(e.W, ids) }
