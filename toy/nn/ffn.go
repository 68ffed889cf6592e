// Feed-forward layers.

package nn

import "github.com/toyml/toy/toy/tensor"

// MLP is GPT-2's feed-forward layer: Down(GELU(Up(x))).
type MLP struct {
	Up   *Linear `gguf:"ffn_up" shape:"FFN, Embed" card:"W_up, feed-forward up projection"`                    // [F, D]
	Down *Linear `gguf:"ffn_down" shape:"Embed, FFN" init:"resid" card:"W_down, feed-forward down projection"` // [D, F]
}

// Forward maps x [T, D] to [T, D].
func (m *MLP) Forward(x *tensor.Tensor) *tensor.Tensor {
	return m.Down.Forward(tensor.GELU(m.Up.Forward(x)))
}

// SwiGLU is Llama's gated feed-forward layer (Shazeer 2020):
// Down(SiLU(Gate(x)) ⊙ Up(x)).
type SwiGLU struct {
	Gate *Linear `gguf:"ffn_gate" shape:"FFN, Embed" card:"W_gate, feed-forward gate"`                         // [F, D]
	Up   *Linear `gguf:"ffn_up" shape:"FFN, Embed" card:"W_up, feed-forward up projection"`                    // [F, D]
	Down *Linear `gguf:"ffn_down" shape:"Embed, FFN" init:"resid" card:"W_down, feed-forward down projection"` // [D, F]
	// Limit > 0 replaces SiLU(g)⊙u with gpt-oss's clamped form,
	// tensor.SwiGLUOAI(g, u, Alpha, Limit).
	Alpha, Limit float32
}

// Forward maps x [T, D] to [T, D].
func (m *SwiGLU) Forward(x *tensor.Tensor) *tensor.Tensor {
	return m.Down.Forward(glu(m.Gate.Forward(x), m.Up.Forward(x), m.Alpha, m.Limit))
}

// glu is SiLU(g)⊙u, or with limit > 0 gpt-oss's clamped form.
func glu(g, u *tensor.Tensor, alpha, limit float32) *tensor.Tensor {
	if limit > 0 {
		return tensor.SwiGLUOAI(g, u, alpha, limit)
	}
	return tensor.SwiGLU(g, u)
}

// GeGLU is Gemma's gated feed-forward layer (Shazeer 2020):
// Down(GELU(Gate(x)) ⊙ Up(x)), GELU the tanh approximation.
type GeGLU struct {
	Gate *Linear `gguf:"ffn_gate" shape:"FFN, Embed" card:"W_gate, feed-forward gate"`                         // [F, D]
	Up   *Linear `gguf:"ffn_up" shape:"FFN, Embed" card:"W_up, feed-forward up projection"`                    // [F, D]
	Down *Linear `gguf:"ffn_down" shape:"Embed, FFN" init:"resid" card:"W_down, feed-forward down projection"` // [D, F]
}

// Forward maps x [T, D] to [T, D].
func (m *GeGLU) Forward(x *tensor.Tensor) *tensor.Tensor {
	return m.Down.Forward(tensor.Mul(tensor.GELU(m.Gate.Forward(x)), m.Up.Forward(x)))
}
