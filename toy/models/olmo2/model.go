// The OLMo 2 forward pass, top to bottom.

package olmo2

import (
	"github.com/toyml/toy/toy/gguf"
	"github.com/toyml/toy/toy/models"
	"github.com/toyml/toy/toy/nn"
)

// Model is an OLMo 2 or Olmo 3 transformer: the decoder frame over blocks
// that normalise their sublayers' outputs (*nn.Block with AttnPostNorm and
// FFNPostNorm only).
type Model struct {
	models.Decoder
	Config Config
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
	m := &Model{Config: c, Decoder: models.Decoder{OutputNorm: &nn.RMSNorm{Eps: c.NormEps},
		Vocab: c.VocabSize, Context: c.ContextLength, CacheWidth: c.KVHeads * c.HeadDim()}}
	for i := range c.Layers {
		// x = x + RMSNorm(Attn(x)), with q, k ← RMSNorm(q), RMSNorm(k) before RoPE
		// x = x + RMSNorm(SwiGLU(x))
		b := &nn.Block{
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
			b.Attn.Options.Window = c.Window
		}
		m.Blocks = append(m.Blocks, b)
	}
	return m
}

// SetMetadata writes the model's configuration as GGUF metadata.
func (m *Model) SetMetadata(w *gguf.Writer) { m.Config.SetMetadata(w) }
