// The gpt-oss forward pass, top to bottom.

package gptoss

import (
	"fmt"

	"github.com/toyml/toy/toy/gguf"
	"github.com/toyml/toy/toy/nn"
	"github.com/toyml/toy/toy/tensor"
)

// Model is a gpt-oss transformer. Weights are tagged with their GGUF tensor
// names; blocks are named "blk.N.".
type Model struct {
	Config Config

	Embed      *nn.Embedding `gguf:"token_embd"` // [V, D]
	Blocks     []Block       // L pre-norm blocks
	OutputNorm *nn.RMSNorm   `gguf:"output_norm"` // [D]
	Output     *nn.Linear    `gguf:"output"`      // [V, D]
}

// Block is one pre-norm block: attention with sinks, then the experts.
//
//	x = x + Attn(AttnNorm(x))
//	x = x + MoE(MoENorm(x))
type Block struct {
	AttnNorm *nn.RMSNorm  `gguf:"attn_norm"` // [D]
	Attn     nn.Attention // Q, K, V, O with biases; Sinks [H]
	MoENorm  *nn.RMSNorm  `gguf:"post_attention_norm"` // [D]
	MoE      *nn.MoE      // router and experts with biases, SwiGLUOAI
}

// Forward runs the block on x [T, D] with this layer's KV cache.
func (b *Block) Forward(x *tensor.Tensor, cache *nn.KVCache) *tensor.Tensor {
	x = tensor.Add(x, b.Attn.Forward(b.AttnNorm.Forward(x), cache))
	return tensor.Add(x, b.MoE.Forward(b.MoENorm.Forward(x)))
}

// Load builds the model from a GGUF file; the weights view the file's memory.
func Load(f *gguf.File) (*Model, error) {
	c, err := ConfigFromGGUF(f)
	if err != nil {
		return nil, err
	}
	m := New(c)
	if err := nn.Load(f, "", m); err != nil {
		return nil, err
	}
	for i := range m.Blocks {
		if err := nn.Load(f, fmt.Sprintf("blk.%d.", i), &m.Blocks[i]); err != nil {
			return nil, err
		}
	}
	return m, m.check()
}

// New returns a model with the shape of c and no weights yet.
func New(c Config) *Model {
	m := &Model{Config: c, OutputNorm: &nn.RMSNorm{Eps: c.NormEps}}
	m.Blocks = make([]Block, c.Layers)
	for i := range m.Blocks {
		b := &m.Blocks[i]
		b.AttnNorm, b.MoENorm = &nn.RMSNorm{Eps: c.NormEps}, &nn.RMSNorm{Eps: c.NormEps}
		b.Attn = nn.Attention{
			Heads: c.Heads, KVHeads: c.KVHeads, HeadDim: c.HeadDim,
			RoPE: &nn.RoPE{Dim: c.RopeDim, Base: c.RopeBase, NeoX: true, Scaling: c.RoPEScaling()},
		}
		if c.Windowed(i) {
			b.Attn.Window = c.Window
		}
		// The k chosen experts weighted by the softmax of their router
		// logits (llama.cpp's softmax_weight gating: the same choice and
		// weights as renormalising the softmax over all E).
		b.MoE = &nn.MoE{Used: c.ExpertsUsed, Normalize: true, Alpha: Alpha, Limit: Limit}
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

// check verifies every weight's shape against the config, so that a file
// whose tensors disagree with its metadata fails at load, not mid-forward.
func (m *Model) check() error {
	c := m.Config
	D, E, q, kv := c.Embed, c.Experts, c.Heads*c.HeadDim, c.KVHeads*c.HeadDim
	errs := []error{
		nn.CheckShape("token_embd.weight", m.Embed.W, c.VocabSize, D),
		nn.CheckShape("output_norm.weight", m.OutputNorm.W, D),
		nn.CheckLinear("output", m.Output, c.VocabSize, D),
	}
	for i := range m.Blocks {
		b := &m.Blocks[i]
		a := &b.Attn
		p := fmt.Sprintf("blk.%d.", i)
		errs = append(errs,
			nn.CheckShape(p+"attn_norm.weight", b.AttnNorm.W, D),
			nn.CheckLinear(p+"attn_q", a.Q, q, D),
			nn.CheckLinear(p+"attn_k", a.K, kv, D),
			nn.CheckLinear(p+"attn_v", a.V, kv, D),
			nn.CheckLinear(p+"attn_output", a.O, D, q),
			a.Check(),
			nn.CheckShape(p+"post_attention_norm.weight", b.MoENorm.W, D),
			nn.CheckLinear(p+"ffn_gate_inp", b.MoE.Router, E, D),
			nn.CheckShape(p+"ffn_gate_exps.weight", b.MoE.Gate, E, c.FFN, D),
			b.MoE.Check(D),
		)
		if a.Sinks == nil {
			errs = append(errs, fmt.Errorf("tensor %sattn_sinks.weight is missing", p))
		}
	}
	for _, err := range errs {
		if err != nil {
			return fmt.Errorf("gptoss: %w", err)
		}
	}
	return nil
}

// Weights returns every weight tensor under its GGUF name, each once.
func (m *Model) Weights() []nn.Named {
	all := nn.Collect("", m)
	for i := range m.Blocks {
		all = append(all, nn.Collect(fmt.Sprintf("blk.%d.", i), &m.Blocks[i])...)
	}
	return all
}

// SetMetadata writes the model's configuration as GGUF metadata.
func (m *Model) SetMetadata(w *gguf.Writer) { m.Config.SetMetadata(w) }
