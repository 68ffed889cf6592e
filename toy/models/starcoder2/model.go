// The StarCoder2 forward pass, top to bottom.

package starcoder2

import (
	"fmt"

	"github.com/toyml/toy/toy/gguf"
	"github.com/toyml/toy/toy/nn"
	"github.com/toyml/toy/toy/tensor"
)

// Model is a StarCoder2 transformer. Weights are tagged with their GGUF
// tensor names; blocks are named "blk.N.".
type Model struct {
	Config Config

	Embed      *nn.Embedding `gguf:"token_embd"` // [V, D]
	Blocks     []nn.Block    // L pre-LayerNorm blocks with GELU MLPs
	OutputNorm *nn.LayerNorm `gguf:"output_norm"`     // [D], with a bias
	Output     *nn.Linear    `gguf:"output,optional"` // [V, D]; nil when tied to Embed
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
	if m.Output == nil {
		m.Output = &nn.Linear{W: m.Embed.W}
	}
	return m, m.check()
}

// New returns a model with the shape of c and no weights yet.
func New(c Config) *Model {
	m := &Model{Config: c, OutputNorm: &nn.LayerNorm{Eps: c.NormEps}}
	m.Blocks = make([]nn.Block, c.Layers)
	for i := range m.Blocks {
		m.Blocks[i] = nn.Block{
			AttnNorm: &nn.LayerNorm{Eps: c.NormEps},
			Attn: nn.Attention{
				Heads: c.Heads, KVHeads: c.KVHeads, HeadDim: c.HeadDim(),
				RoPE: &nn.RoPE{Dim: c.HeadDim(), Base: c.RopeBase, NeoX: true},
			},
			FFNNorm: &nn.LayerNorm{Eps: c.NormEps},
			FFN:     &nn.MLP{},
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
		// x = x + Attn(LayerNorm(x)); x = x + MLP(LayerNorm(x))
		x = m.Blocks[i].Forward(x, cache.Layer(i))
	}
	return m.OutputNorm.Forward(x)
}

// Logits projects hidden states [T, D] to vocabulary logits [T, V].
func (m *Model) Logits(h *tensor.Tensor) *tensor.Tensor { return m.Output.Forward(h) }

// NewCache returns an empty KV cache for up to capacity positions.
func (m *Model) NewCache(capacity int) *nn.Cache {
	return nn.NewCache(m.Config.Layers, capacity, m.Config.KVHeads*m.Config.HeadDim())
}

// VocabSize returns V.
func (m *Model) VocabSize() int { return m.Config.VocabSize }

// ContextLength returns the trained context length.
func (m *Model) ContextLength() int { return m.Config.ContextLength }

// check verifies every weight's shape against the config, so that a file
// whose tensors disagree with its metadata fails at load, not mid-forward.
// Every projection and norm has a bias.
func (m *Model) check() error {
	c := m.Config
	D, F, kv := c.Embed, c.FFN, c.KVHeads*c.HeadDim()
	norm := func(name string, n *nn.LayerNorm) error {
		if n.B == nil {
			return fmt.Errorf("%s.bias is missing", name)
		}
		return nn.CheckShape(name+".weight", n.W, D)
	}
	linear := func(name string, l *nn.Linear, out, in int) error {
		if l != nil && l.B == nil {
			return fmt.Errorf("%s.bias is missing", name)
		}
		return nn.CheckLinear(name, l, out, in)
	}
	errs := []error{
		nn.CheckShape("token_embd.weight", m.Embed.W, c.VocabSize, D),
		norm("output_norm", m.OutputNorm),
		nn.CheckShape("output.weight", m.Output.W, c.VocabSize, D),
	}
	for i := range m.Blocks {
		b := &m.Blocks[i]
		a := &b.Attn
		mlp := b.FFN.(*nn.MLP)
		p := fmt.Sprintf("blk.%d.", i)
		errs = append(errs,
			norm(p+"attn_norm", b.AttnNorm.(*nn.LayerNorm)),
			norm(p+"ffn_norm", b.FFNNorm.(*nn.LayerNorm)),
			linear(p+"attn_q", a.Q, D, D),
			linear(p+"attn_k", a.K, kv, D),
			linear(p+"attn_v", a.V, kv, D),
			linear(p+"attn_output", a.O, D, D),
			linear(p+"ffn_up", mlp.Up, F, D),
			linear(p+"ffn_down", mlp.Down, D, F),
		)
	}
	for _, err := range errs {
		if err != nil {
			return fmt.Errorf("starcoder2: %w", err)
		}
	}
	return nil
}

// Weights returns every weight tensor under its GGUF name, each once (a tied
// output head is listed as token_embd.weight only).
func (m *Model) Weights() []nn.Named { return nn.ModelWeights(m, m.Blocks) }

// SetMetadata writes the model's configuration as GGUF metadata.
func (m *Model) SetMetadata(w *gguf.Writer) { m.Config.SetMetadata(w) }
