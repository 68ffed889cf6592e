// The Llama forward pass, top to bottom.

package llama

import (
	"fmt"

	"github.com/toyml/toy/toy/gguf"
	"github.com/toyml/toy/toy/models"
	"github.com/toyml/toy/toy/nn"
	"github.com/toyml/toy/toy/tensor"
)

// Model is a Llama-family transformer. Weights are declared with their GGUF
// names and shapes.
type Model struct {
	Config Config

	Embed *nn.Embedding `gguf:"token_embd" shape:"VocabSize, Embed" card:"W_e, token embedding"`
	// RopeFreqs [RopeDim/2] divides each RoPE pair's angle (Llama 3.1 and
	// later: long wavelengths stretched for a longer context), read by Load.
	RopeFreqs  *tensor.Tensor `gguf:"rope_freqs.weight,optional" shape:"RopeDim/2" card:"f, RoPE frequency factors (a constant, not trained)"`
	Blocks     []nn.Block     `gguf:"blk"` // L pre-norm blocks
	OutputNorm *nn.RMSNorm    `gguf:"output_norm" shape:"Embed" card:"γ, final RMSNorm scale"`
	Output     *nn.Linear     `gguf:"output,optional" shape:"VocabSize, Embed" card:"W_u, unembedding"` // tied: a Linear over Embed.W
}

// Load builds the model from a GGUF file; the weights view the file's memory.
func Load(f *gguf.File) (*Model, error) {
	c, err := ConfigFromGGUF(f)
	if err != nil {
		return nil, err
	}
	m := New(c)
	if err := models.LoadWeights(f, c.Arch, m, c); err != nil {
		return nil, err
	}
	for i := range m.Blocks {
		b := &m.Blocks[i]
		if b.Attn.RoPE != nil {
			b.Attn.RoPE.Factors = m.RopeFreqs
		}
		if moe, ok := b.FFN.(*nn.MoE); ok {
			if err := moe.Check(c.Embed); err != nil { // a shared expert's gate, say
				return nil, fmt.Errorf("llama: blk.%d: %w", i, err)
			}
		}
	}
	return m, nil
}

// New returns a model with the shape of c and no weights yet.
func New(c Config) *Model {
	m := &Model{Config: c, OutputNorm: &nn.RMSNorm{Eps: c.NormEps}}
	m.Blocks = make([]nn.Block, c.Layers)
	for i := range m.Blocks {
		b := &m.Blocks[i]
		*b = nn.Block{
			AttnNorm: &nn.RMSNorm{Eps: c.NormEps},
			Attn: nn.Attention{
				Q: &nn.Linear{}, K: &nn.Linear{}, V: &nn.Linear{}, // set: the file must hold them
				Heads: c.Heads, KVHeads: c.KVHeads, HeadDim: c.HeadDim, Options: tensor.AttentionOptions{Scale: c.AttentionScale},
				RoPE: &nn.RoPE{Dim: c.RopeDim, Base: c.RopeBase, NeoX: c.RopeNeoX, Scaling: c.RoPEScaling()},
			},
			FFNNorm:       &nn.RMSNorm{Eps: c.NormEps},
			FFN:           &nn.SwiGLU{},
			ResidualScale: c.ResidualScale,
		}
		if c.AttnTemperature != 0 { // Ministral 3: queries sharpened far into a long context
			tp := nn.Temperature{Scale: c.AttnTemperature, Floor: c.RopeOrigContext}
			b.Attn.Then = func(q, k *tensor.Tensor, past int) (*tensor.Tensor, *tensor.Tensor) { return tp.Apply(q, past), k }
		}
		if c.NoRoPE(i) {
			b.Attn.RoPE = nil
		}
		if c.QKNorm() {
			b.Attn.Norms = nn.HeadNorms{Q: &nn.RMSNorm{Eps: c.NormEps}, K: &nn.RMSNorm{Eps: c.NormEps}}
		}
		if c.Experts > 0 {
			moe := &nn.MoE{Used: c.ExpertsUsed, Normalize: c.NormalizeExperts()}
			if c.SharedFFN > 0 { // then the file must hold the shared expert
				moe.SharedGate, moe.SharedUp, moe.SharedDown = &nn.Linear{}, &nn.Linear{}, &nn.Linear{}
			}
			b.FFN = moe
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
	if s := m.Config.EmbeddingScale; s != 0 {
		x = tensor.Scale(x, s) // Granite
	}
	for i := range m.Blocks {
		// x = x + Attn(RMSNorm(x)); x = x + SwiGLU(RMSNorm(x))
		x = m.Blocks[i].Forward(x, cache.Layer(i))
	}
	return m.OutputNorm.Forward(x)
}

// Logits projects hidden states [T, D] to vocabulary logits [T, V].
func (m *Model) Logits(h *tensor.Tensor) *tensor.Tensor {
	logits := m.Output.Forward(h)
	if s := m.Config.LogitScale; s != 0 {
		logits = tensor.Scale(logits, 1/s) // Granite
	}
	return logits
}

// NewCache returns an empty KV cache for up to capacity positions.
func (m *Model) NewCache(capacity int) *nn.Cache {
	return nn.NewCache(m.Config.Layers, capacity, m.Config.KVHeads*m.Config.HeadDim)
}

// VocabSize returns V.
func (m *Model) VocabSize() int { return m.Config.VocabSize }

// ContextLength returns the trained context length.
func (m *Model) ContextLength() int { return m.Config.ContextLength }

// Weights returns every weight tensor under its GGUF name, each once (a tied
// output head is listed as token_embd.weight only).
func (m *Model) Weights() []nn.Named { return nn.Unique(nn.Collect("", m)) }

// SetMetadata writes the model's configuration as GGUF metadata.
func (m *Model) SetMetadata(w *gguf.Writer) { m.Config.SetMetadata(w) }
