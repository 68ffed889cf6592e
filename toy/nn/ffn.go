// Feed-forward layers.

package nn

import "github.com/toyml/toy/toy/tensor"

// MLP is GPT-2's feed-forward layer: Down(GELU(Up(x))).
type MLP struct {
	Up   *Linear `gguf:"ffn_up"`   // [F, D]
	Down *Linear `gguf:"ffn_down"` // [D, F]
}

// Forward maps x [T, D] to [T, D].
func (m *MLP) Forward(x *tensor.Tensor) *tensor.Tensor {
	return m.Down.Forward(tensor.GELU(m.Up.Forward(x)))
}

// SwiGLU is Llama's gated feed-forward layer (Shazeer 2020):
// Down(SiLU(Gate(x)) ⊙ Up(x)).
type SwiGLU struct {
	Gate *Linear `gguf:"ffn_gate"` // [F, D]
	Up   *Linear `gguf:"ffn_up"`   // [F, D]
	Down *Linear `gguf:"ffn_down"` // [D, F]
}

// Forward maps x [T, D] to [T, D].
func (m *SwiGLU) Forward(x *tensor.Tensor) *tensor.Tensor {
	return m.Down.Forward(tensor.SwiGLU(m.Gate.Forward(x), m.Up.Forward(x)))
}

// GeGLU is Gemma's gated feed-forward layer (Shazeer 2020):
// Down(GELU(Gate(x)) ⊙ Up(x)), GELU the tanh approximation.
type GeGLU struct {
	Gate *Linear `gguf:"ffn_gate"` // [F, D]
	Up   *Linear `gguf:"ffn_up"`   // [F, D]
	Down *Linear `gguf:"ffn_down"` // [D, F]
}

// Forward maps x [T, D] to [T, D].
func (m *GeGLU) Forward(x *tensor.Tensor) *tensor.Tensor {
	return m.Down.Forward(tensor.Mul(tensor.GELU(m.Gate.Forward(x)), m.Up.Forward(x)))
}
