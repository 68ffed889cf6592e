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

// Model is a Llama 4 transformer (the text model). Weights are declared
// with their GGUF names and shapes; the shared expert is ExpertFFN wide.
type Model struct {
	Config Config

	Embed      *nn.Embedding `gguf:"token_embd" shape:"VocabSize, Embed" card:"W_e, token embedding"`
	Blocks     []nn.Block    `gguf:"blk" dims:"SharedFFN=ExpertFFN"` // L pre-norm blocks
	OutputNorm *nn.RMSNorm   `gguf:"output_norm" shape:"Embed" card:"γ, final RMSNorm scale"`
	Output     *nn.Linear    `gguf:"output,optional" shape:"VocabSize, Embed" card:"W_u, unembedding"` // tied: a Linear over Embed.W

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
	for i := range m.Blocks { // attn_q, attn_k, attn_v; a mixture's stacks agree, with its shared expert
		b := &m.Blocks[i]
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
//     Config.Chunked, seeing only the positions of their own chunk.
//   - NoPE layers (every NoRopePeriod-th): no positions but the causal
//     mask's; the queries multiplied by the temperature of their position.
//
// and its feed-forward layer a SwiGLU, or in every MoePeriod-th layer the
// mixture: the k experts of the largest router logits, each run on its
// input weighted by the sigmoid of its logit, plus a shared expert.
func New(c Config) *Model {
	m := &Model{Config: c, OutputNorm: &nn.RMSNorm{Eps: c.NormEps}}
	m.Blocks = make([]nn.Block, c.Layers)
	for i := range m.Blocks {
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
		m.Blocks[i] = nn.Block{AttnNorm: &nn.RMSNorm{Eps: c.NormEps}, Attn: attn, FFNNorm: &nn.RMSNorm{Eps: c.NormEps}, FFN: ffn}
	}
	return m
}

// SetRopeFreqs sets the RoPE frequency factors [Dh/2] of every RoPE layer
// (nil: plain RoPE).
func (m *Model) SetRopeFreqs(f *tensor.Tensor) {
	m.RopeFreqs = f
	for i := range m.Blocks {
		if r := m.Blocks[i].Attn.RoPE; r != nil {
			r.Factors = f
		}
	}
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
		// x = x + Attn(RMSNorm(x)); x = x + FFN(RMSNorm(x))
		x = m.Blocks[i].Forward(x, cache.Layer(i))
	}
	return m.OutputNorm.Forward(x)
}

// Logits projects hidden states [T, D] to vocabulary logits [T, V].
func (m *Model) Logits(h *tensor.Tensor) *tensor.Tensor { return m.Output.Forward(h) }

// NewCache returns an empty KV cache for up to capacity positions. The
// chunked layers keep every position too (their masks skip the past
// chunks).
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
