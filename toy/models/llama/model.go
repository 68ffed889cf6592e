// The Llama forward pass, top to bottom.

package llama

import (
	"errors"
	"fmt"

	"github.com/toyml/toy/toy/gguf"
	"github.com/toyml/toy/toy/nn"
	"github.com/toyml/toy/toy/tensor"
)

// Model is a Llama-family transformer. Weights are tagged with their GGUF
// tensor names; blocks are named "blk.N.".
type Model struct {
	Config Config

	Embed      *nn.Embedding `gguf:"token_embd"` // [V, D]
	Blocks     []nn.Block    // L pre-norm blocks
	OutputNorm *nn.RMSNorm   `gguf:"output_norm"`     // [D]
	Output     *nn.Linear    `gguf:"output,optional"` // [V, D]; nil when tied to Embed

	// RopeFreqs [RopeDim/2] divides each RoPE pair's angle (Llama 3.1 and
	// later: long wavelengths stretched for a longer context); nil for
	// plain RoPE. A constant of the architecture, not a trained weight.
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

// New returns a model with the shape of c and no weights yet.
func New(c Config) *Model {
	m := &Model{Config: c, OutputNorm: &nn.RMSNorm{Eps: c.NormEps}}
	m.Blocks = make([]nn.Block, c.Layers)
	for i := range m.Blocks {
		m.Blocks[i] = nn.Block{
			AttnNorm: &nn.RMSNorm{Eps: c.NormEps},
			Attn: nn.Attention{
				Heads: c.Heads, KVHeads: c.KVHeads, HeadDim: c.HeadDim,
				RoPE: &nn.RoPE{Dim: c.RopeDim, Base: c.RopeBase, NeoX: c.RopeNeoX, Scaling: c.RoPEScaling()},
			},
			FFNNorm:       &nn.RMSNorm{Eps: c.NormEps},
			FFN:           &nn.SwiGLU{},
			ResidualScale: c.ResidualScale,
		}
		m.Blocks[i].Attn.Scale = c.AttnScale
		if c.AttnTemperature != 0 {
			m.Blocks[i].Attn.Temperature = nn.Temperature{Scale: c.AttnTemperature, Floor: c.RopeOrigContext}
		}
		if c.NoRoPE(i) {
			m.Blocks[i].Attn.RoPE = nil
		}
		if c.Experts > 0 {
			m.Blocks[i].FFN = &nn.MoE{Used: c.ExpertsUsed, Normalize: c.NormalizeExperts()}
		}
		if c.QKNorm() {
			m.Blocks[i].Attn.QNorm, m.Blocks[i].Attn.KNorm = &nn.RMSNorm{Eps: c.NormEps}, &nn.RMSNorm{Eps: c.NormEps}
		}
	}
	return m
}

// SetRopeFreqs sets the RoPE frequency factors [RopeDim/2] of every block
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
	if s := m.Config.EmbedScale; s != 0 {
		x = tensor.Scale(x, s) // Granite
	}
	for i := range m.Blocks {
		// x = x + Attn(RMSNorm(x)); x = x + SwiGLU(RMSNorm(x))
		x = m.Blocks[i].Forward(x, cache.Layer(i))
	}
	return m.OutputNorm.Forward(x)
}

// Logits projects hidden states [T, D] to vocabulary logits [T, V].
func (m *Model) Logits(h *tensor.Tensor) *tensor.Tensor {
	logits := m.Output.Forward(h)
	if s := m.Config.LogitScale; s != 0 {
		logits = tensor.Scale(logits, 1/s) // Granite
	}
	return logits
}

// NewCache returns an empty KV cache for up to capacity positions.
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
	D, F, q, kv := c.Embed, c.FFN, c.Heads*c.HeadDim, c.KVHeads*c.HeadDim
	errs := []error{
		nn.CheckShape("token_embd.weight", m.Embed.W, c.VocabSize, D),
		nn.CheckShape("output_norm.weight", m.OutputNorm.W, D),
		nn.CheckShape("output.weight", m.Output.W, c.VocabSize, D),
	}
	switch f := m.RopeFreqs; {
	case f != nil:
		errs = append(errs, nn.CheckShape("rope_freqs.weight", f, c.RopeDim/2))
		if f.DType() != tensor.F32 {
			errs = append(errs, fmt.Errorf("tensor rope_freqs.weight is %v, want F32", f.DType()))
		}
	case c.RopeFreqs:
		errs = append(errs, errors.New("the configuration asks for RoPE frequency factors, and there is no rope_freqs.weight"))
	}
	for i := range m.Blocks {
		b := &m.Blocks[i]
		a := &b.Attn
		p := fmt.Sprintf("blk.%d.", i)
		errs = append(errs,
			nn.CheckShape(p+"attn_norm.weight", b.AttnNorm.(*nn.RMSNorm).W, D),
			nn.CheckShape(p+"ffn_norm.weight", b.FFNNorm.(*nn.RMSNorm).W, D),
			nn.CheckLinear(p+"attn_q", a.Q, q, D),
			nn.CheckLinear(p+"attn_k", a.K, kv, D),
			nn.CheckLinear(p+"attn_v", a.V, kv, D),
			nn.CheckLinear(p+"attn_output", a.O, D, q),
		)
		switch ffn := b.FFN.(type) {
		case *nn.SwiGLU:
			errs = append(errs, nn.CheckLinear(p+"ffn_gate", ffn.Gate, F, D), nn.CheckLinear(p+"ffn_up", ffn.Up, F, D),
				nn.CheckLinear(p+"ffn_down", ffn.Down, D, F))
		case *nn.MoE:
			errs = append(errs, ffn.Check(D), nn.CheckLinear(p+"ffn_gate_inp", ffn.Router, c.Experts, D),
				nn.CheckShape(p+"ffn_gate_exps.weight", ffn.Gate, c.Experts, c.ExpertFFN, D))
			if (ffn.SharedDown != nil) != (c.SharedFFN > 0) {
				errs = append(errs, fmt.Errorf("%sffn_down_shexp: present %v, the metadata's shared expert width %d", p, ffn.SharedDown != nil, c.SharedFFN))
			} else if c.SharedFFN > 0 {
				errs = append(errs, nn.CheckLinear(p+"ffn_gate_shexp", ffn.SharedGate, c.SharedFFN, D))
			}
		}
		if c.QKNorm() {
			errs = append(errs, nn.CheckShape(p+"attn_q_norm.weight", a.QNorm.W, c.HeadDim), nn.CheckShape(p+"attn_k_norm.weight", a.KNorm.W, c.HeadDim))
		}
	}
	for _, err := range errs {
		if err != nil {
			return fmt.Errorf("llama: %w", err)
		}
	}
	return nil
}

// Weights returns every weight tensor under its GGUF name, each once (a tied
// output head is listed as token_embd.weight only).
func (m *Model) Weights() []nn.Named { return nn.ModelWeights(m, m.Blocks) }

// SetMetadata writes the model's configuration as GGUF metadata.
func (m *Model) SetMetadata(w *gguf.Writer) { m.Config.SetMetadata(w) }
