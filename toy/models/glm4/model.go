// The GLM-4 forward pass, top to bottom.

package glm4

import (
	"fmt"

	"github.com/toyml/toy/toy/gguf"
	"github.com/toyml/toy/toy/nn"
	"github.com/toyml/toy/toy/tensor"
)

// Model is a GLM-4 (glm4) or GLM-4.5 (glm4moe) transformer. Weights are
// tagged with their GGUF tensor names; blocks are named "blk.N.". The
// multi-token-prediction layers after the L blocks are not loaded.
type Model struct {
	Config Config

	Embed      *nn.Embedding `gguf:"token_embd"` // [V, D]
	Blocks     []Block       // L blocks
	OutputNorm *nn.RMSNorm   `gguf:"output_norm"`     // [D]
	Output     *nn.Linear    `gguf:"output,optional"` // [V, D]; tied to Embed when the file has none
}

// Block is one GLM-4 block. glm4's has four norms, around each sublayer:
//
//	x = x + RMSNorm(Attn(RMSNorm(x)))   (attn_norm, post_attention_norm)
//	x = x + RMSNorm(MLP(RMSNorm(x)))    (ffn_norm, post_ffw_norm)
//
// glm4moe's two, before each sublayer; llama.cpp names the second
// post_attention_norm (it follows the attention's residual sum):
//
//	x = x + Attn(RMSNorm(x))            (attn_norm)
//	x = x + FFN(RMSNorm(x))             (post_attention_norm)
type Block struct {
	AttnNorm *nn.RMSNorm `gguf:"attn_norm"` // [D]
	Attn     nn.Attention
	// PostAttnNorm normalises the attention's output in glm4, the FFN's
	// input in glm4moe.
	PostAttnNorm *nn.RMSNorm `gguf:"post_attention_norm"` // [D]
	FFNNorm      *nn.RMSNorm `gguf:"ffn_norm,ifset"`      // [D]; glm4 only
	FFN          nn.Layer    // *MLP (glm4); *nn.SwiGLU or *nn.MoE (glm4moe)
	PostFFNNorm  *nn.RMSNorm `gguf:"post_ffw_norm,ifset"` // [D]; glm4 only
}

// Forward runs the block on x [T, D] with this layer's KV cache.
func (b *Block) Forward(x *tensor.Tensor, cache *nn.KVCache) *tensor.Tensor {
	a := b.Attn.Forward(b.AttnNorm.Forward(x), cache) // [T, D]
	if b.FFNNorm == nil {
		// glm4moe: pre-norm, the FFN's norm stored as post_attention_norm
		x = tensor.Add(x, a)
		return tensor.Add(x, b.FFN.Forward(b.PostAttnNorm.Forward(x)))
	}
	x = tensor.Add(x, b.PostAttnNorm.Forward(a))
	return tensor.Add(x, b.PostFFNNorm.Forward(b.FFN.Forward(b.FFNNorm.Forward(x))))
}

// MLP is glm4's SwiGLU, its gate and up projections fused in one matrix:
// [g; u] = x·W_upᵀ, y = (SiLU(g) ⊙ u)·W_downᵀ.
type MLP struct {
	GateUp *nn.Linear `gguf:"ffn_up"`   // [2F, D]: the gate's F rows, then the up projection's
	Down   *nn.Linear `gguf:"ffn_down"` // [D, F]
}

// Forward maps x [T, D] to [T, D].
func (m *MLP) Forward(x *tensor.Tensor) *tensor.Tensor {
	gu := m.GateUp.Forward(x) // [T, 2F]
	F := gu.Cols() / 2
	return m.Down.Forward(tensor.SwiGLU(tensor.Columns(gu, 0, F), tensor.Columns(gu, F, 2*F)))
}

// Load builds the model from a GGUF file; the weights view the file's memory.
func Load(f *gguf.File) (*Model, error) {
	c, err := ConfigFromGGUF(f)
	if err != nil {
		return nil, err
	}
	m := New(c)
	if err := nn.Load(f, "", m); err != nil {
		return nil, err
	}
	for i := range m.Blocks {
		if err := nn.Load(f, blockPrefix(i), &m.Blocks[i]); err != nil {
			return nil, err
		}
	}
	if m.Output == nil {
		m.Output = &nn.Linear{W: m.Embed.W}
	}
	return m, m.check()
}

// New returns a model with the shape of c and no weights yet.
func New(c Config) *Model {
	norm := func() *nn.RMSNorm { return &nn.RMSNorm{Eps: c.NormEps} }
	m := &Model{Config: c, OutputNorm: norm()}
	m.Blocks = make([]Block, c.Layers)
	for i := range m.Blocks {
		b := &m.Blocks[i]
		b.AttnNorm, b.PostAttnNorm = norm(), norm()
		// The first RopeDim features of each head turn: in adjacent pairs
		// in glm4, in NeoX pairs (i, i + RopeDim/2) in glm4moe.
		b.Attn = nn.Attention{Heads: c.Heads, KVHeads: c.KVHeads, HeadDim: c.HeadDim,
			RoPE: &nn.RoPE{Dim: c.RopeDim, Base: c.RopeBase, NeoX: c.MoE()}}
		if c.QKNorm {
			b.Attn.QNorm, b.Attn.KNorm = norm(), norm()
		}
		switch {
		case !c.MoE():
			b.FFNNorm, b.FFN, b.PostFFNNorm = norm(), &MLP{}, norm()
		case c.Dense(i):
			b.FFN = &nn.SwiGLU{}
		default:
			// Chosen by σ(x·W_rᵀ) + exp_probs_b, weighted by σ alone
			// (divided by their sum, scaled); shared experts ungated.
			b.FFN = &nn.MoE{Used: c.ExpertsUsed, Sigmoid: true, Normalize: c.ExpertWeightsNorm,
				Scale: c.ExpertWeightsScale, SharedUngated: true}
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
		// glm4:    x = x + RMSNorm(Attn(RMSNorm(x))); x = x + RMSNorm(MLP(RMSNorm(x)))
		// glm4moe: x = x + Attn(RMSNorm(x));          x = x + FFN(RMSNorm(x))
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
			nn.CheckShape(p+"attn_norm.weight", b.AttnNorm.W, D),
			nn.CheckLinear(p+"attn_q", a.Q, q, D),
			nn.CheckLinear(p+"attn_k", a.K, kv, D),
			nn.CheckLinear(p+"attn_v", a.V, kv, D),
			nn.CheckShape(p+"attn_output.weight", a.O.W, D, q),
			nn.CheckShape(p+"post_attention_norm.weight", b.PostAttnNorm.W, D))
		switch {
		case a.Q == nil || a.K == nil || a.V == nil: // reported above
		case c.QKVBias:
			errs = append(errs, nn.CheckShape(p+"attn_q.bias", a.Q.B, q), nn.CheckShape(p+"attn_k.bias", a.K.B, kv),
				nn.CheckShape(p+"attn_v.bias", a.V.B, kv))
		case a.Q.B != nil || a.K.B != nil || a.V.B != nil:
			errs = append(errs, fmt.Errorf("tensor %sattn_q.bias: query, key or value biases, where blk.0 has none", p))
		}
		if a.O.B != nil {
			errs = append(errs, fmt.Errorf("tensor %sattn_output.bias: GLM-4's output projection has no bias", p))
		}
		if c.QKNorm {
			errs = append(errs, nn.CheckShape(p+"attn_q_norm.weight", a.QNorm.W, c.HeadDim),
				nn.CheckShape(p+"attn_k_norm.weight", a.KNorm.W, c.HeadDim))
		}
		switch ffn := b.FFN.(type) {
		case *MLP:
			errs = append(errs,
				nn.CheckShape(p+"ffn_norm.weight", b.FFNNorm.W, D),
				nn.CheckLinear(p+"ffn_up", ffn.GateUp, 2*F, D),
				nn.CheckLinear(p+"ffn_down", ffn.Down, D, F),
				nn.CheckShape(p+"post_ffw_norm.weight", b.PostFFNNorm.W, D))
		case *nn.SwiGLU:
			errs = append(errs,
				nn.CheckLinear(p+"ffn_gate", ffn.Gate, F, D),
				nn.CheckLinear(p+"ffn_up", ffn.Up, F, D),
				nn.CheckLinear(p+"ffn_down", ffn.Down, D, F))
		case *nn.MoE:
			E, Fe, Fs := c.Experts, c.ExpertFFN, c.SharedExperts*c.ExpertFFN
			errs = append(errs,
				nn.CheckLinear(p+"ffn_gate_inp", ffn.Router, E, D),
				nn.CheckShape(p+"exp_probs_b.bias", ffn.Bias, E),
				nn.CheckShape(p+"ffn_gate_exps.weight", ffn.Gate, E, Fe, D),
				ffn.Check(D))
			if Fs > 0 {
				errs = append(errs, nn.CheckLinear(p+"ffn_gate_shexp", ffn.SharedGate, Fs, D))
			} else if ffn.SharedGate != nil {
				errs = append(errs, fmt.Errorf("tensor %sffn_gate_shexp.weight: a shared expert, and expert_shared_count is 0", p))
			}
		}
	}
	for _, err := range errs {
		if err != nil {
			return fmt.Errorf("glm4: %w", err)
		}
	}
	return nil
}

func blockPrefix(i int) string { return fmt.Sprintf("blk.%d.", i) }

// Weights returns every weight tensor under its GGUF name, each once (a tied
// output head is listed as token_embd.weight only).
func (m *Model) Weights() []nn.Named {
	all := nn.Collect("", m)
	for i := range m.Blocks {
		all = append(all, nn.Collect(blockPrefix(i), &m.Blocks[i])...)
	}
	return nn.Unique(all)
}

// SetMetadata writes the model's configuration as GGUF metadata.
func (m *Model) SetMetadata(w *gguf.Writer) { m.Config.SetMetadata(w) }
