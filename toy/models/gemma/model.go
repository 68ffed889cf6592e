// The Gemma forward pass, top to bottom.

package gemma

import (
	"fmt"
	"math"

	"github.com/toyml/toy/toy/gguf"
	"github.com/toyml/toy/toy/models"
	"github.com/toyml/toy/toy/nn"
	"github.com/toyml/toy/toy/tensor"
)

// Model is a Gemma transformer. Weights are declared with their GGUF names
// and shapes.
type Model struct {
	Config Config

	Embed      *nn.Embedding `gguf:"token_embd" shape:"VocabSize, Embed" card:"W_e, token embedding"`
	Blocks     []nn.Block    `gguf:"blk"` // L pre-norm blocks (with post-norms: sandwich norms)
	OutputNorm *nn.RMSNorm   `gguf:"output_norm" shape:"Embed" card:"γ, final RMSNorm scale"`
	Output     *nn.Linear    `gguf:"output,optional" shape:"VocabSize, Embed" card:"W_u, unembedding"` // tied: a Linear over Embed.W
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
	for i := range m.Blocks { // attn_q, attn_k and attn_v present
		if err := m.Blocks[i].Attn.Check(); err != nil {
			return nil, fmt.Errorf("gemma: blk.%d: %w", i, err)
		}
	}
	return m, nil
}

// New returns a model with the shape of c and no weights yet.
func New(c Config) *Model {
	m := &Model{Config: c, OutputNorm: &nn.RMSNorm{Eps: c.NormEps}}
	m.Blocks = make([]nn.Block, c.Layers)
	for i := range m.Blocks {
		base, scaling := c.RoPE(i)
		attn := nn.Attention{
			Heads: c.Heads, KVHeads: c.KVHeads, HeadDim: c.HeadDim,
			RoPE:    &nn.RoPE{Dim: c.HeadDim, Base: base, NeoX: true, Scaling: scaling},
			Options: tensor.AttentionOptions{Scale: c.QueryScale, SoftCap: c.AttnSoftcap},
		}
		if c.Sliding(i) {
			attn.Options.Window = c.Window
		}
		if c.QKNorm() {
			attn.Norms = nn.HeadNorms{Q: &nn.RMSNorm{Eps: c.NormEps}, K: &nn.RMSNorm{Eps: c.NormEps}}
		}
		b := nn.Block{AttnNorm: &nn.RMSNorm{Eps: c.NormEps}, Attn: attn, FFNNorm: &nn.RMSNorm{Eps: c.NormEps}, FFN: &nn.GeGLU{}}
		if c.PostNorms() {
			b.AttnPostNorm, b.FFNPostNorm = &nn.RMSNorm{Eps: c.NormEps}, &nn.RMSNorm{Eps: c.NormEps}
		}
		m.Blocks[i] = b
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
	x := m.Embed.Forward(ids)                                        // [T, D]
	x = tensor.Scale(x, float32(math.Sqrt(float64(m.Config.Embed)))) // x·√D
	for i := range m.Blocks {
		// x = x + RMSNorm(Attn(RMSNorm(x))); x = x + RMSNorm(GeGLU(RMSNorm(x)))
		// (the outer RMSNorms from Gemma 2 on)
		x = m.Blocks[i].Forward(x, cache.Layer(i))
	}
	return m.OutputNorm.Forward(x)
}

// Logits projects hidden states [T, D] to soft-capped vocabulary logits
// [T, V]: z ← c·tanh(z/c), computed as llama.cpp does, z·(1/c) first.
func (m *Model) Logits(h *tensor.Tensor) *tensor.Tensor {
	z := m.Output.Forward(h) // [T, V]
	if c := m.Config.FinalSoftcap; c > 0 {
		z = tensor.Scale(tensor.Tanh(tensor.Scale(z, 1/c)), c)
	}
	return z
}

// NewCache returns an empty KV cache for up to capacity positions. The local
// layers keep every position too: the window is a mask, not an eviction.
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
