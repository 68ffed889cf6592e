// The Llama forward pass, top to bottom.

package llama

import (
	"fmt"
	"slices"

	"github.com/toyml/toy/toy/gguf"
	"github.com/toyml/toy/toy/models"
	"github.com/toyml/toy/toy/nn"
	"github.com/toyml/toy/toy/tensor"
)

// Model is a Llama-family transformer: the decoder frame over pre-norm
// blocks (*nn.Block), its embeddings scaled by Granite's EmbeddingScale.
type Model struct {
	// RopeFreqs [RopeDim/2] divides each RoPE pair's angle (Llama 3.1 and
	// later: long wavelengths stretched for a longer context), read by Load.
	RopeFreqs *tensor.Tensor `gguf:"rope_freqs.weight,optional" shape:"RopeDim/2" card:"f, RoPE frequency factors (a constant, not trained)"`
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
	for i, b := range m.Blocks {
		b := b.(*nn.Block)
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
	m := &Model{Config: c, Decoder: models.Decoder{OutputNorm: &nn.RMSNorm{Eps: c.NormEps}, EmbedScale: c.EmbeddingScale,
		LogitScale: inverse(c.LogitScale), Vocab: c.VocabSize, Context: c.ContextLength, CacheWidth: c.KVHeads * c.HeadDim}}
	for i := range c.Layers {
		// x = x + Attn(RMSNorm(x)); x = x + SwiGLU(RMSNorm(x))
		// (each sublayer's output × Granite's ResidualScale; a mixture of SwiGLU experts in the MoE models)
		b := &nn.Block{
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
		m.Blocks = append(m.Blocks, b)
	}
	return m
}

// Weights returns every weight tensor under its GGUF name, each once (a tied
// output head is listed as token_embd.weight only), rope_freqs.weight
// second, after token_embd.weight, as llama.cpp's files hold them.
func (m *Model) Weights() []nn.Named {
	w := m.Decoder.Weights()
	if m.RopeFreqs != nil {
		w = slices.Insert(w, min(1, len(w)), nn.Named{Name: "rope_freqs.weight", T: m.RopeFreqs})
	}
	return w
}

// SetMetadata writes the model's configuration as GGUF metadata.
func (m *Model) SetMetadata(w *gguf.Writer) { m.Config.SetMetadata(w) }

// inverse is 1/s, or 0 (none) for 0: Granite divides its logits by s.
func inverse(s float32) float32 {
	if s == 0 {
		return 0
	}
	return 1 / s
}
