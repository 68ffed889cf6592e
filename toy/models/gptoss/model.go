// The gpt-oss forward pass, top to bottom.

package gptoss

import (
	"fmt"

	"github.com/toyml/toy/toy/gguf"
	"github.com/toyml/toy/toy/models"
	"github.com/toyml/toy/toy/nn"
	"github.com/toyml/toy/toy/tensor"
)

// Model is a gpt-oss transformer: the decoder frame over pre-norm blocks
// with attention sinks and a mixture of experts (*Block).
type Model struct {
	models.Decoder
	Config Config
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
	for i, b := range m.Blocks { // what the shape tags cannot say: attn_q, attn_k, attn_v and the sinks are there
		b := b.(*Block)
		if err := b.Attn.Check(); err != nil {
			return nil, fmt.Errorf("gptoss: blk.%d: %w", i, err)
		}
		if b.Sinks == nil {
			return nil, fmt.Errorf("gptoss: tensor blk.%d.attn_sinks.weight is missing", i)
		}
		b.Attn.Options.Sinks = b.Sinks
	}
	return m, nil
}

// New returns a model with the shape of c and no weights yet.
func New(c Config) *Model {
	m := &Model{Config: c, Decoder: models.Decoder{OutputNorm: &nn.RMSNorm{Eps: c.NormEps},
		Vocab: c.VocabSize, Context: c.ContextLength, CacheWidth: c.KVHeads * c.HeadDim}}
	for i := range c.Layers {
		// x = x + Attn(RMSNorm(x)), with a sink logit per head; x = x + MoE(RMSNorm(x))
		b := &Block{AttnNorm: &nn.RMSNorm{Eps: c.NormEps}, MoENorm: &nn.RMSNorm{Eps: c.NormEps}}
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
		m.Blocks = append(m.Blocks, b)
	}
	return m
}

// SetMetadata writes the model's configuration as GGUF metadata.
func (m *Model) SetMetadata(w *gguf.Writer) { m.Config.SetMetadata(w) }
