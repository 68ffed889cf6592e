// The Llama 4 forward pass, top to bottom.

package llama4

import (
	"errors"
	"fmt"

	"github.com/toyml/toy/toy/gguf"
	"github.com/toyml/toy/toy/models"
	"github.com/toyml/toy/toy/nn"
	"github.com/toyml/toy/toy/tensor"
)

// Model is a Llama 4 transformer (the text model): the decoder frame over
// pre-norm blocks (*nn.Block) whose shared expert is ExpertFFN wide.
type Model struct {
	models.Decoder `dims:"SharedFFN=ExpertFFN"`
	Config         Config

	// RopeFreqs [Dh/2] divides each RoPE pair's angle (the long-context
	// scaling of Llama 3.1, which Llama 4 keeps); nil for plain RoPE. A
	// constant of the architecture, not a trained weight.
	RopeFreqs *tensor.Tensor `gguf:"rope_freqs.weight,optional" shape:"HeadDim/2" card:"f, RoPE frequency factors (a constant, not trained)"`
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
	m.SetRopeFreqs(m.RopeFreqs)
	for i, b := range m.Blocks { // attn_q, attn_k, attn_v; a mixture's stacks agree, with its shared expert
		b := b.(*nn.Block)
		err := b.Attn.Check()
		if moe, ok := b.FFN.(*nn.MoE); ok && err == nil {
			if err = moe.Check(c.Embed); err == nil && moe.SharedGate == nil {
				err = errors.New("tensor ffn_gate_shexp.weight is missing")
			}
		}
		if err != nil {
			return nil, fmt.Errorf("llama4: blk.%d: %w", i, err)
		}
	}
	return m, nil
}

// New returns a model with the shape of c and no weights yet. Each block is
//
//	x = x + Attn(RMSNorm(x))
//	x = x + FFN(RMSNorm(x))
//
// its attention one of two kinds:
//   - RoPE layers: RoPE on adjacent pairs, then each head of q and k
//     RMS-normalised without weights (Config.L2Norm); chunked when
//     Config.Chunked, seeing only the positions of their own chunk (the
//     cache keeps every position; the masks skip the past chunks).
//   - NoPE layers (every NoRopePeriod-th): no positions but the causal
//     mask's; the queries multiplied by the temperature of their position.
//
// and its feed-forward layer a SwiGLU, or in every MoePeriod-th layer the
// mixture: the k experts of the largest router logits, each run on its
// input weighted by the sigmoid of its logit, plus a shared expert.
func New(c Config) *Model {
	m := &Model{Config: c, Decoder: models.Decoder{OutputNorm: &nn.RMSNorm{Eps: c.NormEps},
		Vocab: c.VocabSize, Context: c.ContextLength, CacheWidth: c.KVHeads * c.HeadDim}}
	for i := range c.Layers {
		attn := nn.Attention{Heads: c.Heads, KVHeads: c.KVHeads, HeadDim: c.HeadDim}
		if c.UsesRoPE(i) {
			attn.RoPE = &nn.RoPE{Dim: c.HeadDim, Base: c.ropeBase(i), Scaling: c.RoPEScaling()}
			if c.L2Norm { // each head of q and k of length √Dh after RoPE
				eps, dh := c.NormEps, c.HeadDim
				attn.Then = func(q, k *tensor.Tensor, _ int) (*tensor.Tensor, *tensor.Tensor) {
					return nn.HeadRMS(q, eps, dh), nn.HeadRMS(k, eps, dh)
				}
			}
		} else { // attention temperature: queries sharpened far into a long context
			tp := nn.Temperature{Scale: c.TempScale, Floor: c.TempFloor, Offset: c.TempOffset}
			attn.Then = func(q, k *tensor.Tensor, past int) (*tensor.Tensor, *tensor.Tensor) { return tp.Apply(q, past), k }
		}
		if c.Chunked(i) {
			attn.Options.Chunk = c.Chunk
		}
		var ffn nn.Layer = &nn.SwiGLU{}
		if c.MoE(i) {
			ffn = &nn.MoE{Used: c.ExpertsUsed, Sigmoid: true, WeightInputs: true, SharedUngated: true}
		}
		// x = x + Attn(RMSNorm(x)); x = x + FFN(RMSNorm(x))
		m.Blocks = append(m.Blocks, &nn.Block{AttnNorm: &nn.RMSNorm{Eps: c.NormEps}, Attn: attn, FFNNorm: &nn.RMSNorm{Eps: c.NormEps}, FFN: ffn})
	}
	return m
}

// SetRopeFreqs sets the RoPE frequency factors [Dh/2] of every RoPE layer
// (nil: plain RoPE).
func (m *Model) SetRopeFreqs(f *tensor.Tensor) {
	m.RopeFreqs = f
	for _, b := range m.Blocks {
		if r := b.(*nn.Block).Attn.RoPE; r != nil {
			r.Factors = f
		}
	}
}

// Weights returns every weight tensor under its GGUF name, each once: the
// frame's, then RopeFreqs.
func (m *Model) Weights() []nn.Named { return nn.Unique(nn.Collect("", m)) }

// SetMetadata writes the model's configuration as GGUF metadata.
func (m *Model) SetMetadata(w *gguf.Writer) { m.Config.SetMetadata(w) }
