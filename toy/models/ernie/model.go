// The ERNIE 4.5 forward pass, top to bottom.

package ernie

import (
	"fmt"

	"github.com/toyml/toy/toy/gguf"
	"github.com/toyml/toy/toy/nn"
	"github.com/toyml/toy/toy/tensor"
)

// Model is an ERNIE 4.5 transformer: dense (ernie4_5) or a mixture of
// experts (ernie4_5-moe). Weights are tagged with their GGUF tensor names;
// blocks are named "blk.N.". Each block is Llama's, pre-norm:
//
//	x = x + Attn(RMSNorm(x))     (attn_norm)
//	x = x + FFN(RMSNorm(x))      (ffn_norm)
//
// its FFN an *nn.SwiGLU or an *nn.MoE (see Config.Dense).
type Model struct {
	Config Config

	Embed      *nn.Embedding `gguf:"token_embd"` // [V, D]
	Blocks     []nn.Block    // L pre-norm blocks
	OutputNorm *nn.RMSNorm   `gguf:"output_norm"`     // [D]
	Output     *nn.Linear    `gguf:"output,optional"` // [V, D]; tied to Embed when the file has none
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
	for i := range m.Blocks {
		// llama.cpp's converter keeps the checkpoints' choice bias
		// [1, E], one row per expert group; toy reads it as [E].
		if moe := m.MoE(i); moe != nil && moe.Bias != nil {
			if s := moe.Bias.Shape(); len(s) == 2 && s[0] == 1 {
				moe.Bias = tensor.Reshape(moe.Bias, s[1])
			}
		}
	}
	return m, m.check()
}

// New returns a model with the shape of c and no weights yet.
func New(c Config) *Model {
	norm := func() *nn.RMSNorm { return &nn.RMSNorm{Eps: c.NormEps} }
	m := &Model{Config: c, OutputNorm: norm()}
	m.Blocks = make([]nn.Block, c.Layers)
	for i := range m.Blocks {
		b := &m.Blocks[i]
		b.AttnNorm, b.FFNNorm = norm(), norm()
		// RoPE turns every feature of each head, in adjacent pairs.
		b.Attn = nn.Attention{Heads: c.Heads, KVHeads: c.KVHeads, HeadDim: c.HeadDim,
			RoPE: &nn.RoPE{Dim: c.HeadDim, Base: c.RopeBase}}
		b.FFN = &nn.SwiGLU{}
		if !c.Dense(i) {
			// Chosen by softmax(x·W_rᵀ) + exp_probs_b, weighted by the
			// unbiased probabilities over their sum; the shared expert
			// added as it is.
			b.FFN = &nn.MoE{Used: c.ExpertsUsed, Normalize: true, SharedUngated: true}
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
		// x = x + Attn(RMSNorm(x)); x = x + FFN(RMSNorm(x))
		x = m.Blocks[i].Forward(x, cache.Layer(i))
	}
	return m.OutputNorm.Forward(x)
}

// Logits projects hidden states [T, D] to vocabulary logits [T, V].
func (m *Model) Logits(h *tensor.Tensor) *tensor.Tensor { return m.Output.Forward(h) }

// NewCache returns an empty KV cache for up to capacity positions.
func (m *Model) NewCache(capacity int) *nn.Cache {
	return nn.NewCache(m.Config.Layers, capacity, m.Config.KVHeads*m.Config.HeadDim)
}

// VocabSize returns V.
func (m *Model) VocabSize() int { return m.Config.VocabSize }

// ContextLength returns the trained context length.
func (m *Model) ContextLength() int { return m.Config.ContextLength }

// MoE returns block i's mixture of experts, or nil in a dense layer.
func (m *Model) MoE(i int) *nn.MoE { moe, _ := m.Blocks[i].FFN.(*nn.MoE); return moe }

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
	for i := range m.Blocks {
		b, p := &m.Blocks[i], blockPrefix(i)
		a := &b.Attn
		errs = append(errs,
			nn.CheckShape(p+"attn_norm.weight", b.AttnNorm.(*nn.RMSNorm).W, D),
			nn.CheckLinear(p+"attn_q", a.Q, q, D),
			nn.CheckLinear(p+"attn_k", a.K, kv, D),
			nn.CheckLinear(p+"attn_v", a.V, kv, D),
			nn.CheckShape(p+"attn_output.weight", a.O.W, D, q),
			nn.CheckShape(p+"ffn_norm.weight", b.FFNNorm.(*nn.RMSNorm).W, D))
		switch {
		case a.Q == nil || a.K == nil || a.V == nil: // reported above
		case c.QKVBias:
			errs = append(errs, nn.CheckShape(p+"attn_q.bias", a.Q.B, q), nn.CheckShape(p+"attn_k.bias", a.K.B, kv),
				nn.CheckShape(p+"attn_v.bias", a.V.B, kv))
		case a.Q.B != nil || a.K.B != nil || a.V.B != nil:
			errs = append(errs, fmt.Errorf("tensor %sattn_q.bias: query, key or value biases, where blk.0 has none", p))
		}
		if a.O.B != nil {
			errs = append(errs, fmt.Errorf("tensor %sattn_output.bias: llama.cpp does not add it, and toy neither", p))
		}
		switch ffn := b.FFN.(type) {
		case *nn.SwiGLU:
			errs = append(errs,
				nn.CheckLinear(p+"ffn_gate", ffn.Gate, F, D),
				nn.CheckLinear(p+"ffn_up", ffn.Up, F, D),
				nn.CheckLinear(p+"ffn_down", ffn.Down, D, F))
		case *nn.MoE:
			E := c.Experts
			errs = append(errs,
				nn.CheckLinear(p+"ffn_gate_inp", ffn.Router, E, D),
				nn.CheckShape(p+"ffn_gate_exps.weight", ffn.Gate, E, c.ExpertFFN, D),
				ffn.Check(D))
			switch {
			case c.ExpertBias:
				errs = append(errs, nn.CheckShape(p+"exp_probs_b.bias", ffn.Bias, E))
			case ffn.Bias != nil:
				errs = append(errs, fmt.Errorf("tensor %sexp_probs_b.bias: a choice bias, where the first mixture has none", p))
			}
			switch {
			case c.SharedFFN > 0:
				errs = append(errs, nn.CheckLinear(p+"ffn_gate_shexp", ffn.SharedGate, c.SharedFFN, D))
			case ffn.SharedGate != nil || ffn.SharedUp != nil || ffn.SharedDown != nil:
				errs = append(errs, fmt.Errorf("tensor %sffn_gate_shexp.weight: a shared expert, and expert_shared_feed_forward_length is 0", p))
			}
		}
	}
	for _, err := range errs {
		if err != nil {
			return fmt.Errorf("ernie: %w", err)
		}
	}
	return nil
}

func blockPrefix(i int) string { return fmt.Sprintf("blk.%d.", i) }

// Weights returns every weight tensor under its GGUF name, each once (a tied
// output head is listed as token_embd.weight only).
func (m *Model) Weights() []nn.Named { return nn.ModelWeights(m, m.Blocks) }

// SetMetadata writes the model's configuration as GGUF metadata.
func (m *Model) SetMetadata(w *gguf.Writer) { m.Config.SetMetadata(w) }
