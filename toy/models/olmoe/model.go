// The OLMoE forward pass, top to bottom.

package olmoe

import (
	"fmt"

	"github.com/toyml/toy/toy/gguf"
	"github.com/toyml/toy/toy/nn"
	"github.com/toyml/toy/toy/tensor"
)

// Model is an OLMoE transformer. Weights are tagged with their GGUF tensor
// names; blocks are named "blk.N.", each with an *nn.MoE as its
// feed-forward layer.
type Model struct {
	Config Config

	Embed      *nn.Embedding `gguf:"token_embd"` // [V, D]
	Blocks     []nn.Block    // L pre-norm blocks
	OutputNorm *nn.RMSNorm   `gguf:"output_norm"` // [D]
	Output     *nn.Linear    `gguf:"output"`      // [V, D]
}

// Load builds the model from a GGUF file; the weights view the file's memory.
func Load(f *gguf.File) (*Model, error) {
	c, err := ConfigFromGGUF(f)
	if err != nil {
		return nil, err
	}
	m := New(c)
	if err := nn.LoadModel(f, m, m.Blocks); err != nil {
		return nil, err
	}
	return m, m.check()
}

// New returns a model with the shape of c and no weights yet.
func New(c Config) *Model {
	m := &Model{Config: c, OutputNorm: &nn.RMSNorm{Eps: c.NormEps}}
	m.Blocks = make([]nn.Block, c.Layers)
	for i := range m.Blocks {
		m.Blocks[i] = nn.Block{
			AttnNorm: &nn.RMSNorm{Eps: c.NormEps},
			Attn: nn.Attention{
				Heads: c.Heads, KVHeads: c.KVHeads, HeadDim: c.HeadDim,
				// q and k are RMS-normalised whole ([H·Dh], [KV·Dh]
				// weights), then rotated in half-split pairs.
				QNorm: &nn.RMSNorm{Eps: c.NormEps}, KNorm: &nn.RMSNorm{Eps: c.NormEps},
				RoPE: &nn.RoPE{Dim: c.RopeDim, Base: c.RopeBase, NeoX: true},
			},
			FFNNorm: &nn.RMSNorm{Eps: c.NormEps},
			FFN:     &nn.MoE{Used: c.ExpertsUsed},
		}
	}
	return m
}

// Forward runs ids [T] at positions cache.Len() … and returns logits [T, V].
func (m *Model) Forward(ids []int32, cache *nn.Cache) *tensor.Tensor {
	return m.Logits(m.Hidden(ids, cache))
}

// Hidden runs the transformer and returns the final normalised states [T, D].
// A nil cache runs ids as one whole sequence from position 0 (training).
func (m *Model) Hidden(ids []int32, cache *nn.Cache) *tensor.Tensor {
	x := m.Embed.Forward(ids) // [T, D]
	for i := range m.Blocks {
		// x = x + Attn(RMSNorm(x)), with q, k ← RMSNorm(q), RMSNorm(k) before RoPE
		// x = x + MoE(RMSNorm(x)):  Σ over the k chosen experts of p_e · SwiGLU_e
		x = m.Blocks[i].Forward(x, cache.Layer(i))
	}
	return m.OutputNorm.Forward(x)
}

// Logits projects hidden states [T, D] to vocabulary logits [T, V].
func (m *Model) Logits(h *tensor.Tensor) *tensor.Tensor { return m.Output.Forward(h) }

// NewCache returns an empty KV cache for up to capacity positions.
func (m *Model) NewCache(capacity int) *nn.Cache {
	return nn.NewCache(m.Config.Layers, capacity, m.Config.KVHeads*m.Config.HeadDim)
}

// VocabSize returns V.
func (m *Model) VocabSize() int { return m.Config.VocabSize }

// ContextLength returns the trained context length.
func (m *Model) ContextLength() int { return m.Config.ContextLength }

// MoE returns block i's mixture-of-experts layer.
func (m *Model) MoE(i int) *nn.MoE { return m.Blocks[i].FFN.(*nn.MoE) }

// check verifies every weight's shape against the config, so that a file
// whose tensors disagree with its metadata fails at load, not mid-forward.
func (m *Model) check() error {
	c := m.Config
	D, F, E, q, kv := c.Embed, c.FFN, c.Experts, c.Heads*c.HeadDim, c.KVHeads*c.HeadDim
	errs := []error{
		nn.CheckShape("token_embd.weight", m.Embed.W, c.VocabSize, D),
		nn.CheckShape("output_norm.weight", m.OutputNorm.W, D),
		nn.CheckLinear("output", m.Output, c.VocabSize, D),
	}
	for i := range m.Blocks {
		b := &m.Blocks[i]
		a, moe := &b.Attn, m.MoE(i)
		p := fmt.Sprintf("blk.%d.", i)
		errs = append(errs,
			nn.CheckShape(p+"attn_norm.weight", b.AttnNorm.(*nn.RMSNorm).W, D),
			nn.CheckLinear(p+"attn_q", a.Q, q, D),
			nn.CheckLinear(p+"attn_k", a.K, kv, D),
			nn.CheckLinear(p+"attn_v", a.V, kv, D),
			nn.CheckShape(p+"attn_q_norm.weight", a.QNorm.W, q),
			nn.CheckShape(p+"attn_k_norm.weight", a.KNorm.W, kv),
			nn.CheckLinear(p+"attn_output", a.O, D, q),
			nn.CheckShape(p+"ffn_norm.weight", b.FFNNorm.(*nn.RMSNorm).W, D),
			nn.CheckLinear(p+"ffn_gate_inp", moe.Router, E, D),
			nn.CheckShape(p+"ffn_gate_exps.weight", moe.Gate, E, F, D),
			nn.CheckShape(p+"ffn_up_exps.weight", moe.Up, E, F, D),
			nn.CheckShape(p+"ffn_down_exps.weight", moe.Down, E, D, F),
		)
	}
	for _, err := range errs {
		if err != nil {
			return fmt.Errorf("olmoe: %w", err)
		}
	}
	return nil
}

// Weights returns every weight tensor under its GGUF name, each once.
func (m *Model) Weights() []nn.Named { return nn.ModelWeights(m, m.Blocks) }

// SetMetadata writes the model's configuration as GGUF metadata.
func (m *Model) SetMetadata(w *gguf.Writer) { m.Config.SetMetadata(w) }
