// The gpt-oss forward pass, top to bottom.

package gptoss

import (
	"fmt"

	"github.com/toyml/toy/toy/gguf"
	"github.com/toyml/toy/toy/models"
	"github.com/toyml/toy/toy/nn"
	"github.com/toyml/toy/toy/tensor"
)

// Model is a gpt-oss transformer. Weights are declared with their GGUF
// names and shapes.
type Model struct {
	Config Config

	Embed      *nn.Embedding `gguf:"token_embd" shape:"VocabSize, Embed" card:"W_e, token embedding"`
	Blocks     []Block       `gguf:"blk"` // L pre-norm blocks
	OutputNorm *nn.RMSNorm   `gguf:"output_norm" shape:"Embed" card:"γ, final RMSNorm scale"`
	Output     *nn.Linear    `gguf:"output" shape:"VocabSize, Embed" card:"W_u, unembedding"`
}

// Block is one pre-norm block: attention with sinks, then the experts.
//
//	x = x + Attn(AttnNorm(x))
//	x = x + MoE(MoENorm(x))
type Block struct {
	AttnNorm *nn.RMSNorm    `gguf:"attn_norm" shape:"Embed" card:"γ_a, attention input norm scale"`
	Attn     nn.Attention   // Q, K, V, O with biases; Options.Sinks is Sinks
	Sinks    *tensor.Tensor `gguf:"attn_sinks.weight,optional" shape:"Heads" card:"s, attention sink logit per head"`
	MoENorm  *nn.RMSNorm    `gguf:"post_attention_norm" shape:"Embed" card:"γ_f, feed-forward input norm scale"`
	MoE      *nn.MoE        `dims:"ExpertFFN=FFN"` // router and experts with biases, SwiGLUOAI
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
	if err := models.LoadWeights(f, Arch, m, c); err != nil {
		return nil, err
	}
	for i := range m.Blocks { // what the shape tags cannot say: attn_q, attn_k, attn_v and the sinks are there
		a := &m.Blocks[i].Attn
		if err := a.Check(); err != nil {
			return nil, fmt.Errorf("gptoss: blk.%d: %w", i, err)
		}
		if m.Blocks[i].Sinks == nil {
			return nil, fmt.Errorf("gptoss: tensor blk.%d.attn_sinks.weight is missing", i)
		}
		a.Options.Sinks = m.Blocks[i].Sinks
	}
	return m, nil
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
			b.Attn.Options.Window = c.Window
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

// Weights returns every weight tensor under its GGUF name.
func (m *Model) Weights() []nn.Named { return nn.Unique(nn.Collect("", m)) }

// SetMetadata writes the model's configuration as GGUF metadata.
func (m *Model) SetMetadata(w *gguf.Writer) { m.Config.SetMetadata(w) }
