// The GLM-4 forward pass, top to bottom.

package glm4

import (
	"errors"
	"fmt"

	"github.com/toyml/toy/toy/gguf"
	"github.com/toyml/toy/toy/models"
	"github.com/toyml/toy/toy/nn"
	"github.com/toyml/toy/toy/tensor"
)

// Model is a GLM-4 (glm4) or GLM-4.5 (glm4moe) transformer: the decoder
// frame over L *Block. The multi-token-prediction layers after them are not
// loaded.
type Model struct {
	models.Decoder
	Config Config
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
	AttnNorm     *nn.RMSNorm `gguf:"attn_norm" shape:"Embed" card:"γ_a, attention input norm scale"`
	Attn         nn.Attention
	AttnPostNorm *nn.RMSNorm `gguf:"post_attention_norm,ifset" shape:"Embed" card:"γ̂_a, attention output norm scale"`  // glm4
	PreFFNNorm   *nn.RMSNorm `gguf:"post_attention_norm,ifset" shape:"Embed" card:"γ_f, feed-forward input norm scale"` // glm4moe: its FFN's input norm
	FFNNorm      *nn.RMSNorm `gguf:"ffn_norm,ifset" shape:"Embed" card:"γ_f, feed-forward input norm scale"`            // glm4
	FFN          nn.Layer    `dims:"SharedFFN=SharedExperts*ExpertFFN"`                                                 // *MLP (glm4); *nn.SwiGLU or *nn.MoE (glm4moe)
	FFNPostNorm  *nn.RMSNorm `gguf:"post_ffw_norm,ifset" shape:"Embed" card:"γ̂_f, feed-forward output norm scale"`     // glm4
}

// Forward runs the block on x [T, D] with this layer's KV cache.
func (b *Block) Forward(x *tensor.Tensor, cache *nn.KVCache) *tensor.Tensor {
	a := b.Attn.Forward(b.AttnNorm.Forward(x), cache) // [T, D]
	if b.FFNNorm == nil {
		// glm4moe: pre-norm, the FFN's norm stored as post_attention_norm
		x = tensor.Add(x, a)
		return tensor.Add(x, b.FFN.Forward(b.PreFFNNorm.Forward(x)))
	}
	x = tensor.Add(x, b.AttnPostNorm.Forward(a))
	return tensor.Add(x, b.FFNPostNorm.Forward(b.FFN.Forward(b.FFNNorm.Forward(x))))
}

// MLP is glm4's SwiGLU, its gate and up projections fused in one matrix:
// [g; u] = x·W_upᵀ, y = (SiLU(g) ⊙ u)·W_downᵀ.
type MLP struct {
	GateUp *nn.Linear `gguf:"ffn_up" shape:"2*FFN, Embed" card:"W_up, feed-forward gate and up projections, stacked"` // the gate's F rows, then the up projection's
	Down   *nn.Linear `gguf:"ffn_down" shape:"Embed, FFN" init:"resid" card:"W_down, feed-forward down projection"`
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
	if err := models.LoadWeights(f, c.Arch, m, c); err != nil {
		return nil, err
	}
	return m, m.checkLayout()
}

// New returns a model with the shape of c and no weights yet.
func New(c Config) *Model {
	norm := func() *nn.RMSNorm { return &nn.RMSNorm{Eps: c.NormEps} }
	m := &Model{Config: c, Decoder: models.Decoder{OutputNorm: norm(),
		Vocab: c.VocabSize, Context: c.ContextLength, CacheWidth: c.KVHeads * c.HeadDim}}
	for i := range c.Layers {
		// glm4:    x = x + RMSNorm(Attn(RMSNorm(x))); x = x + RMSNorm(MLP(RMSNorm(x)))
		// glm4moe: x = x + Attn(RMSNorm(x));          x = x + FFN(RMSNorm(x))
		b := &Block{AttnNorm: norm()}
		// The first RopeDim features of each head turn: in adjacent pairs
		// in glm4, in NeoX pairs (i, i + RopeDim/2) in glm4moe.
		b.Attn = nn.Attention{Heads: c.Heads, KVHeads: c.KVHeads, HeadDim: c.HeadDim,
			RoPE: &nn.RoPE{Dim: c.RopeDim, Base: c.RopeBase, NeoX: c.MoE()}}
		if c.QKNorm {
			b.Attn.Norms = nn.HeadNorms{Q: norm(), K: norm()}
		}
		switch {
		case !c.MoE():
			b.AttnPostNorm, b.FFNNorm, b.FFN, b.FFNPostNorm = norm(), norm(), &MLP{}, norm()
		case c.Dense(i):
			b.PreFFNNorm, b.FFN = norm(), &nn.SwiGLU{}
		default:
			b.PreFFNNorm = norm()
			// Chosen by σ(x·W_rᵀ) + exp_probs_b, weighted by σ alone
			// (divided by their sum, scaled); shared experts ungated.
			b.FFN = &nn.MoE{Used: c.ExpertsUsed, Sigmoid: true, Normalize: c.ExpertWeightsNorm,
				Scale: c.ExpertWeightsScale, SharedUngated: true}
		}
		m.Blocks = append(m.Blocks, b)
	}
	return m
}

// MoE returns block i's mixture of experts, or nil in a dense layer.
func (m *Model) MoE(i int) *nn.MoE { moe, _ := m.Blocks[i].(*Block).FFN.(*nn.MoE); return moe }

// checkLayout refuses what the shape tags cannot: query, key and value
// biases in every layer or none (as blk.0), no output bias, per-head query
// and key norms, and in the MoE layers the choice bias and the shared
// experts expert_shared_count gives.
func (m *Model) checkLayout() error {
	type rule struct {
		name      string
		has, want bool
	}
	c := m.Config
	for i := range m.Blocks {
		a := &m.Blocks[i].(*Block).Attn
		if err := a.Check(); err != nil { // attn_q, attn_k and attn_v present
			return fmt.Errorf("glm4: blk.%d: %w", i, err)
		}
		rules := []rule{
			{"attn_q.bias", a.Q.B != nil, c.QKVBias}, {"attn_k.bias", a.K.B != nil, c.QKVBias},
			{"attn_v.bias", a.V.B != nil, c.QKVBias}, {"attn_output.bias", a.O.B != nil, false},
		}
		if moe := m.MoE(i); moe != nil {
			if err := moe.Check(c.Embed); err != nil { // shared experts complete and ungated
				return fmt.Errorf("glm4: blk.%d: %w", i, err)
			}
			rules = append(rules, rule{"exp_probs_b.bias", moe.Bias != nil, true},
				rule{"ffn_gate_shexp.weight", moe.SharedGate != nil, c.SharedExperts > 0})
		}
		for _, r := range rules {
			switch {
			case r.want && !r.has:
				return fmt.Errorf("glm4: tensor blk.%d.%s is missing", i, r.name)
			case r.has && !r.want:
				return fmt.Errorf("glm4: tensor blk.%d.%s is present, but the metadata and blk.0 describe a model without it", i, r.name)
			}
		}
		if c.QKNorm { // the shared shape also allows whole-projection norms
			if err := errors.Join(nn.CheckShape(fmt.Sprintf("blk.%d.attn_q_norm.weight", i), a.Norms.Q.(*nn.RMSNorm).W, c.HeadDim),
				nn.CheckShape(fmt.Sprintf("blk.%d.attn_k_norm.weight", i), a.Norms.K.(*nn.RMSNorm).W, c.HeadDim)); err != nil {
				return fmt.Errorf("glm4: %w", err)
			}
		}
	}
	return nil
}

// SetMetadata writes the model's configuration as GGUF metadata.
func (m *Model) SetMetadata(w *gguf.Writer) { m.Config.SetMetadata(w) }
