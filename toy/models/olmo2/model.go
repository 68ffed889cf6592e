// The OLMo 2 forward pass, top to bottom.

package olmo2

import (
	"github.com/toyml/toy/toy/gguf"
	"github.com/toyml/toy/toy/models"
	"github.com/toyml/toy/toy/nn"
	"github.com/toyml/toy/toy/tensor"
)

// Model is an OLMo 2 or Olmo 3 transformer. Weights are declared with their
// GGUF names and shapes; each block normalises its sublayers' outputs
// (nn.Block with AttnPostNorm and FFNPostNorm only).
type Model struct {
	Config Config

	Embed      *nn.Embedding `gguf:"token_embd" shape:"VocabSize, Embed" card:"W_e, token embedding"`
	Blocks     []nn.Block    `gguf:"blk"` // L post-norm blocks
	OutputNorm *nn.RMSNorm   `gguf:"output_norm" shape:"Embed" card:"γ, final RMSNorm scale"`
	Output     *nn.Linear    `gguf:"output" shape:"VocabSize, Embed" card:"W_u, unembedding"`
}

// Load builds the model from a GGUF file; the weights view the file's memory.
func Load(f *gguf.File) (*Model, error) {
	c, err := ConfigFromGGUF(f)
	if err != nil {
		return nil, err
	}
	m := New(c)
	return m, models.LoadWeights(f, Arch, m, c)
}

// New returns a model with the shape of c and no weights yet.
func New(c Config) *Model {
	m := &Model{Config: c, OutputNorm: &nn.RMSNorm{Eps: c.NormEps}}
	m.Blocks = make([]nn.Block, c.Layers)
	for i := range m.Blocks {
		m.Blocks[i] = nn.Block{
			Attn: nn.Attention{
				Q: &nn.Linear{}, K: &nn.Linear{}, V: &nn.Linear{}, // set: the file must hold them
				Heads: c.Heads, KVHeads: c.KVHeads, HeadDim: c.HeadDim(),
				// q and k are RMS-normalised whole ([D], [KV·Dh] weights),
				// then rotated in half-split pairs.
				Norms: nn.HeadNorms{Q: &nn.RMSNorm{Eps: c.NormEps}, K: &nn.RMSNorm{Eps: c.NormEps}},
				RoPE:  &nn.RoPE{Dim: c.HeadDim(), Base: c.RopeBase, NeoX: true, Scaling: c.RoPE(i)},
			},
			AttnPostNorm: &nn.RMSNorm{Eps: c.NormEps},
			FFN:          &nn.SwiGLU{},
			FFNPostNorm:  &nn.RMSNorm{Eps: c.NormEps},
		}
		if c.Sliding(i) {
			m.Blocks[i].Attn.Options.Window = c.Window
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
		// x = x + RMSNorm(Attn(x)), with q, k ← RMSNorm(q), RMSNorm(k) before RoPE
		// x = x + RMSNorm(SwiGLU(x))
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

// Weights returns every weight tensor under its GGUF name, each once.
func (m *Model) Weights() []nn.Named { return nn.Unique(nn.Collect("", m)) }

// SetMetadata writes the model's configuration as GGUF metadata.
func (m *Model) SetMetadata(w *gguf.Writer) { m.Config.SetMetadata(w) }
