// The ERNIE 4.5 forward pass, top to bottom.

package ernie

import (
	"fmt"

	"github.com/toyml/toy/toy/gguf"
	"github.com/toyml/toy/toy/models"
	"github.com/toyml/toy/toy/nn"
	"github.com/toyml/toy/toy/tensor"
)

// Model is an ERNIE 4.5 transformer: dense (ernie4_5) or a mixture of
// experts (ernie4_5-moe). It is the decoder frame over Llama's pre-norm
// blocks (*nn.Block), their FFN an *nn.SwiGLU or an *nn.MoE (see
// Config.Dense).
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
	if err := nn.Load(f, "", m); err != nil {
		return nil, fmt.Errorf("ernie: %w", err)
	}
	for i := range m.Blocks {
		// llama.cpp's converter keeps the checkpoints' choice bias
		// [1, E], one row per expert group; toy reads it as [E].
		if moe := m.MoE(i); moe != nil && moe.Bias != nil {
			if s := moe.Bias.Shape(); len(s) == 2 && s[0] == 1 {
				moe.Bias = tensor.Reshape(moe.Bias, s[1])
			}
		}
	}
	models.Tie(m)
	if err := nn.CheckShapes(m, c); err != nil {
		return nil, fmt.Errorf("ernie: %w", err)
	}
	return m, m.check()
}

// New returns a model with the shape of c and no weights yet.
func New(c Config) *Model {
	norm := func() *nn.RMSNorm { return &nn.RMSNorm{Eps: c.NormEps} }
	m := &Model{Config: c, Decoder: models.Decoder{OutputNorm: norm(),
		Vocab: c.VocabSize, Context: c.ContextLength, CacheWidth: c.KVHeads * c.HeadDim}}
	for i := range c.Layers {
		// x = x + Attn(RMSNorm(x)); x = x + FFN(RMSNorm(x))
		b := &nn.Block{AttnNorm: norm(), FFNNorm: norm(), FFN: &nn.SwiGLU{}}
		// RoPE turns every feature of each head, in adjacent pairs.
		b.Attn = nn.Attention{Heads: c.Heads, KVHeads: c.KVHeads, HeadDim: c.HeadDim,
			Q: &nn.Linear{}, K: &nn.Linear{}, V: &nn.Linear{}, // set: the file must hold them
			RoPE: &nn.RoPE{Dim: c.HeadDim, Base: c.RopeBase}}
		if !c.Dense(i) {
			// Chosen by softmax(x·W_rᵀ) + exp_probs_b, weighted by the
			// unbiased probabilities over their sum; the shared expert
			// added as it is.
			moe := &nn.MoE{Used: c.ExpertsUsed, Normalize: true, SharedUngated: true}
			if c.SharedFFN > 0 { // then the file must hold the shared expert
				moe.SharedGate, moe.SharedUp, moe.SharedDown = &nn.Linear{}, &nn.Linear{}, &nn.Linear{}
			}
			b.FFN = moe
		}
		m.Blocks = append(m.Blocks, b)
	}
	return m
}

// MoE returns block i's mixture of experts, or nil in a dense layer.
func (m *Model) MoE(i int) *nn.MoE { moe, _ := m.Blocks[i].(*nn.Block).FFN.(*nn.MoE); return moe }

// check refuses what the declared shapes cannot: biases and a choice bias
// in some layers only, an attention output bias (llama.cpp loads it and
// does not add it), a gated or partial shared expert (nn.MoE.Check).
func (m *Model) check() error {
	c := m.Config
	for i := range m.Blocks {
		a := &m.Blocks[i].(*nn.Block).Attn
		switch {
		case c.QKVBias && (a.Q.B == nil || a.K.B == nil || a.V.B == nil):
			return fmt.Errorf("ernie: tensor blk.%d.attn_q.bias: a query, key or value bias is missing, where blk.0 has them", i)
		case !c.QKVBias && (a.Q.B != nil || a.K.B != nil || a.V.B != nil):
			return fmt.Errorf("ernie: tensor blk.%d.attn_q.bias: query, key or value biases, where blk.0 has none", i)
		case a.O.B != nil:
			return fmt.Errorf("ernie: tensor blk.%d.attn_output.bias: llama.cpp does not add it, and toy neither", i)
		}
		if moe := m.MoE(i); moe != nil {
			switch {
			case c.ExpertBias && moe.Bias == nil:
				return fmt.Errorf("ernie: tensor blk.%d.exp_probs_b.bias is missing, where the first mixture has one", i)
			case !c.ExpertBias && moe.Bias != nil:
				return fmt.Errorf("ernie: tensor blk.%d.exp_probs_b.bias: a choice bias, where the first mixture has none", i)
			}
			if err := moe.Check(c.Embed); err != nil {
				return fmt.Errorf("ernie: blk.%d: %w", i, err)
			}
		}
	}
	return nil
}

// SetMetadata writes the model's configuration as GGUF metadata.
func (m *Model) SetMetadata(w *gguf.Writer) { m.Config.SetMetadata(w) }
