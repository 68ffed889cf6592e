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

// Model is a Gemma transformer: the decoder frame, its embeddings scaled by
// √D, over pre-norm blocks (*nn.Block, with post-norms from Gemma 2 on:
// sandwich norms), its logits soft-capped in Gemma 2.
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
	if err := models.LoadWeights(f, c.Arch, m, c); err != nil {
		return nil, err
	}
	for i, b := range m.Blocks { // attn_q, attn_k and attn_v present
		if err := b.(*nn.Block).Attn.Check(); err != nil {
			return nil, fmt.Errorf("gemma: blk.%d: %w", i, err)
		}
	}
	return m, nil
}

// New returns a model with the shape of c and no weights yet.
func New(c Config) *Model {
	m := &Model{Config: c, Decoder: models.Decoder{OutputNorm: &nn.RMSNorm{Eps: c.NormEps}, EmbedScale: float32(math.Sqrt(float64(c.Embed))), // x·√D
		LogitSoftCap: c.FinalSoftcap, Vocab: c.VocabSize, Context: c.ContextLength, CacheWidth: c.KVHeads * c.HeadDim}}
	for i := range c.Layers {
		// x = x + RMSNorm(Attn(RMSNorm(x))); x = x + RMSNorm(GeGLU(RMSNorm(x)))
		// (the outer RMSNorms from Gemma 2 on)
		base, scaling := c.RoPE(i)
		attn := nn.Attention{
			Heads: c.Heads, KVHeads: c.KVHeads, HeadDim: c.HeadDim,
			RoPE:    &nn.RoPE{Dim: c.HeadDim, Base: base, NeoX: true, Scaling: scaling},
			Options: tensor.AttentionOptions{Scale: c.QueryScale, SoftCap: c.AttnSoftcap},
		}
		if c.Sliding(i) { // a mask: the cache keeps every position of the local layers too
			attn.Options.Window = c.Window
		}
		if c.QKNorm() {
			attn.Norms = nn.HeadNorms{Q: &nn.RMSNorm{Eps: c.NormEps}, K: &nn.RMSNorm{Eps: c.NormEps}}
		}
		b := &nn.Block{AttnNorm: &nn.RMSNorm{Eps: c.NormEps}, Attn: attn, FFNNorm: &nn.RMSNorm{Eps: c.NormEps}, FFN: &nn.GeGLU{}}
		if c.PostNorms() {
			b.AttnPostNorm, b.FFNPostNorm = &nn.RMSNorm{Eps: c.NormEps}, &nn.RMSNorm{Eps: c.NormEps}
		}
		m.Blocks = append(m.Blocks, b)
	}
	return m
}

// SetMetadata writes the model's configuration as GGUF metadata.
func (m *Model) SetMetadata(w *gguf.Writer) { m.Config.SetMetadata(w) }
