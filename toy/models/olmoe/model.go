// The OLMoE forward pass, top to bottom.

package olmoe

import (
	"github.com/toyml/toy/toy/gguf"
	"github.com/toyml/toy/toy/models"
	"github.com/toyml/toy/toy/nn"
)

// Model is an OLMoE transformer: the decoder frame over pre-norm blocks
// (*nn.Block) whose feed-forward layer is an *nn.MoE.
type Model struct {
	models.Decoder `dims:"ExpertFFN=FFN"` // the experts are Config.FFN wide
	Config         Config
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
		Vocab: c.VocabSize, Context: c.ContextLength, CacheWidth: c.KVHeads * c.HeadDim}}
	for range c.Layers {
		// x = x + Attn(RMSNorm(x)), with q, k ← RMSNorm(q), RMSNorm(k) before RoPE
		// x = x + MoE(RMSNorm(x)):  Σ over the k chosen experts of p_e · SwiGLU_e
		m.Blocks = append(m.Blocks, &nn.Block{
			AttnNorm: &nn.RMSNorm{Eps: c.NormEps},
			Attn: nn.Attention{
				Q: &nn.Linear{}, K: &nn.Linear{}, V: &nn.Linear{}, // set: the file must hold them
				Heads: c.Heads, KVHeads: c.KVHeads, HeadDim: c.HeadDim,
				// q and k are RMS-normalised whole ([H·Dh], [KV·Dh]
				// weights), then rotated in half-split pairs.
				Norms: nn.HeadNorms{Q: &nn.RMSNorm{Eps: c.NormEps}, K: &nn.RMSNorm{Eps: c.NormEps}},
				RoPE:  &nn.RoPE{Dim: c.RopeDim, Base: c.RopeBase, NeoX: true},
			},
			FFNNorm: &nn.RMSNorm{Eps: c.NormEps},
			FFN:     &nn.MoE{Used: c.ExpertsUsed},
		})
	}
	return m
}

// MoE returns block i's mixture-of-experts layer.
func (m *Model) MoE(i int) *nn.MoE { return m.Blocks[i].(*nn.Block).FFN.(*nn.MoE) }

// SetMetadata writes the model's configuration as GGUF metadata.
func (m *Model) SetMetadata(w *gguf.Writer) { m.Config.SetMetadata(w) }
