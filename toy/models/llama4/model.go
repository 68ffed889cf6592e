// The Llama 4 forward pass, top to bottom.

package llama4

import (
	"errors"
	"fmt"

	"github.com/toyml/toy/toy/gguf"
	"github.com/toyml/toy/toy/nn"
	"github.com/toyml/toy/toy/tensor"
)

// Model is a Llama 4 transformer (the text model). Weights are tagged with
// their GGUF tensor names; blocks are named "blk.N.".
type Model struct {
	Config Config

	Embed      *nn.Embedding `gguf:"token_embd"` // [V, D]
	Blocks     []nn.Block    // L pre-norm blocks
	OutputNorm *nn.RMSNorm   `gguf:"output_norm"`     // [D]
	Output     *nn.Linear    `gguf:"output,optional"` // [V, D]; nil when tied to Embed

	// RopeFreqs [Dh/2] divides each RoPE pair's angle (the long-context
	// scaling of Llama 3.1, which Llama 4 keeps); nil for plain RoPE. A
	// constant of the architecture, not a trained weight.
	RopeFreqs *tensor.Tensor `gguf:"rope_freqs.weight,optional"`
}

// Load builds the model from a GGUF file; the weights view the file's memory.
func Load(f *gguf.File) (*Model, error) {
	c, err := ConfigFromGGUF(f)
	if err != nil {
		return nil, err
	}
	m := New(c)
	if err := nn.LoadModel(f, m, m.Blocks); err != nil {
		return nil, err
	}
	if m.Output == nil {
		m.Output = &nn.Linear{W: m.Embed.W}
	}
	m.SetRopeFreqs(m.RopeFreqs)
	return m, m.check()
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
//   - NoPE layers (every NoRoPEPeriod-th): no positions but the causal
//     mask's; the queries multiplied by the temperature of their position.
//
// and its feed-forward layer a SwiGLU, or in every MoEPeriod-th layer the
// mixture: the k experts of the largest router logits, each run on its
// input weighted by the sigmoid of its logit, plus a shared expert.
func New(c Config) *Model {
	m := &Model{Config: c, OutputNorm: &nn.RMSNorm{Eps: c.NormEps}}
	m.Blocks = make([]nn.Block, c.Layers)
	for i := range m.Blocks {
		attn := nn.Attention{Heads: c.Heads, KVHeads: c.KVHeads, HeadDim: c.HeadDim}
		if c.UsesRoPE(i) {
			attn.RoPE = &nn.RoPE{Dim: c.HeadDim, Base: c.ropeBase(i), Scaling: c.RoPEScaling()}
			if c.L2Norm {
				attn.L2NormEps = c.NormEps
			}
		} else {
			attn.Temperature = nn.Temperature{Scale: c.TempScale, Floor: c.TempFloor, Offset: c.TempOffset}
		}
		if c.Chunked(i) {
			attn.Chunk = c.Chunk
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

// check verifies every weight's shape against the config, so that a file
// whose tensors disagree with its metadata fails at load, not mid-forward.
func (m *Model) check() error {
	c := m.Config
	D, F, FE, E, q, kv := c.Embed, c.FFN, c.ExpertFFN, c.Experts, c.Heads*c.HeadDim, c.KVHeads*c.HeadDim
	errs := []error{
		nn.CheckShape("token_embd.weight", m.Embed.W, c.VocabSize, D),
		nn.CheckShape("output_norm.weight", m.OutputNorm.W, D),
		nn.CheckShape("output.weight", m.Output.W, c.VocabSize, D),
	}
	switch f := m.RopeFreqs; {
	case f != nil:
		errs = append(errs, nn.CheckShape("rope_freqs.weight", f, c.HeadDim/2))
	case c.RopeFreqs:
		errs = append(errs, errors.New("the configuration asks for RoPE frequency factors, and there is no rope_freqs.weight"))
	}
	for i := range m.Blocks {
		b := &m.Blocks[i]
		a := &b.Attn
		p := fmt.Sprintf("blk.%d.", i)
		errs = append(errs,
			nn.CheckShape(p+"attn_norm.weight", b.AttnNorm.(*nn.RMSNorm).W, D),
			nn.CheckLinear(p+"attn_q", a.Q, q, D),
			nn.CheckLinear(p+"attn_k", a.K, kv, D),
			nn.CheckLinear(p+"attn_v", a.V, kv, D),
			nn.CheckLinear(p+"attn_output", a.O, D, q),
			a.Check(),
			nn.CheckShape(p+"ffn_norm.weight", b.FFNNorm.(*nn.RMSNorm).W, D),
		)
		switch ffn := b.FFN.(type) {
		case *nn.SwiGLU:
			errs = append(errs, nn.CheckLinear(p+"ffn_gate", ffn.Gate, F, D), nn.CheckLinear(p+"ffn_up", ffn.Up, F, D),
				nn.CheckLinear(p+"ffn_down", ffn.Down, D, F))
		case *nn.MoE:
			errs = append(errs, nn.CheckLinear(p+"ffn_gate_inp", ffn.Router, E, D),
				nn.CheckShape(p+"ffn_gate_exps.weight", ffn.Gate, E, FE, D),
				nn.CheckLinear(p+"ffn_gate_shexp", ffn.SharedGate, FE, D), ffn.Check(D))
		}
	}
	for _, err := range errs {
		if err != nil {
			return fmt.Errorf("llama4: %w", err)
		}
	}
	return nil
}

// Weights returns every weight tensor under its GGUF name, each once (a tied
// output head is listed as token_embd.weight only).
func (m *Model) Weights() []nn.Named { return nn.ModelWeights(m, m.Blocks) }

// SetMetadata writes the model's configuration as GGUF metadata.
func (m *Model) SetMetadata(w *gguf.Writer) { m.Config.SetMetadata(w) }
