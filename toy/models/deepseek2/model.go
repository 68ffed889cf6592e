// The DeepSeek-V2 forward pass, top to bottom.

package deepseek2

import (
	"fmt"

	"github.com/toyml/toy/toy/gguf"
	"github.com/toyml/toy/toy/models"
	"github.com/toyml/toy/toy/nn"
	"github.com/toyml/toy/toy/tensor"
)

// Model is a DeepSeek-V2 transformer: the decoder frame over L pre-norm
// *Block, its cache Config.CacheWidth features wide.
type Model struct {
	models.Decoder
	Config Config
}

// Block is one pre-norm block: latent attention, then a dense SwiGLU (the
// first DenseLayers blocks) or a mixture of experts with shared experts.
//
//	x = x + MLA(RMSNorm(x))
//	x = x + FFN(RMSNorm(x))
type Block struct {
	AttnNorm *nn.RMSNorm `gguf:"attn_norm" shape:"Embed" card:"γ_a, attention input norm scale"`
	Attn     Attention
	FFNNorm  *nn.RMSNorm `gguf:"ffn_norm" shape:"Embed" card:"γ_f, feed-forward input norm scale"`
	FFN      nn.Layer    `dims:"SharedFFN=SharedExperts*ExpertFFN"` // *nn.SwiGLU or *nn.MoE
}

// Forward runs the block on x [T, D] with this layer's KV cache.
func (b *Block) Forward(x *tensor.Tensor, cache *nn.KVCache) *tensor.Tensor {
	x = tensor.Add(x, b.Attn.Forward(b.AttnNorm.Forward(x), cache))
	return tensor.Add(x, b.FFN.Forward(b.FFNNorm.Forward(x)))
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
	return m, m.checkLayout()
}

// New returns a model with the shape of c and no weights yet.
func New(c Config) *Model {
	norm := func() *nn.RMSNorm { return &nn.RMSNorm{Eps: c.NormEps} }
	m := &Model{Config: c, Decoder: models.Decoder{OutputNorm: norm(),
		Vocab: c.VocabSize, Context: c.ContextLength, CacheWidth: c.CacheWidth()}}
	for i := range c.Layers {
		// x = x + MLA(RMSNorm(x))
		// x = x + SwiGLU(RMSNorm(x))  or  Σ_{e ∈ top-k} w_e·SwiGLU_e(RMSNorm(x)) + SwiGLU_shared(RMSNorm(x))
		b := &Block{AttnNorm: norm(), FFNNorm: norm(), FFN: &nn.SwiGLU{}, Attn: Attention{
			KVANorm: norm(),
			Heads:   c.Heads, Rank: c.KVLoraRank, KeyDim: c.KeyDim, ValueDim: c.ValueDim,
			RoPE:  &nn.RoPE{Dim: c.RopeDim, Base: c.RopeBase, Scaling: c.RoPEScaling()},
			Scale: c.AttnScale(),
		}}
		if c.QLoraRank > 0 {
			b.Attn.QANorm = norm()
		}
		if i >= c.DenseLayers {
			// Softmax routing weights p_e as they are (V2), or sigmoid
			// scores divided by their sum (V3), times the weights scale;
			// the shared experts' output added ungated.
			b.FFN = &nn.MoE{Used: c.ExpertsUsed, Normalize: c.ExpertWeightsNorm, Sigmoid: c.ExpertGating == "sigmoid",
				Scale: c.ExpertWeightsScale, Groups: c.ExpertGroups, GroupsUsed: c.ExpertGroupsUsed, SharedUngated: true}
		}
		m.Blocks = append(m.Blocks, b)
	}
	return m
}

// MoE returns block i's mixture of experts, or nil for a dense block.
func (m *Model) MoE(i int) *nn.MoE {
	moe, _ := m.Blocks[i].(*Block).FFN.(*nn.MoE)
	return moe
}

// checkLayout refuses what the shape tags cannot: tensors the metadata
// says a layer lacks, or has. The query comes straight from x or through
// the bottleneck (attention.q_lora_rank); the keys' and values'
// up-projections are one attn_kv_b or split (attention.key_length_mla);
// a MoE layer has the choice bias when the first one does, and shared
// experts when expert_shared_count says so.
func (m *Model) checkLayout() error {
	type rule struct {
		name      string
		has, want bool
	}
	c := m.Config
	for i := range m.Blocks {
		a := &m.Blocks[i].(*Block).Attn
		rules := []rule{
			{"attn_q.weight", a.Q != nil, c.QLoraRank == 0},
			{"attn_q_a.weight", a.QA != nil, c.QLoraRank > 0},
			{"attn_q_b.weight", a.QB != nil, c.QLoraRank > 0},
			{"attn_k_b.weight", a.KB != nil, c.SplitKVB},
			{"attn_v_b.weight", a.VB != nil, c.SplitKVB},
			{"attn_kv_b.weight", a.KVB != nil, !c.SplitKVB},
		}
		if moe := m.MoE(i); moe != nil {
			if err := moe.Check(c.Embed); err != nil { // shared experts complete and ungated
				return fmt.Errorf("deepseek2: blk.%d: %w", i, err)
			}
			rules = append(rules, rule{"exp_probs_b.bias", moe.Bias != nil, c.ExpertBias},
				rule{"ffn_down_shexp.weight", moe.SharedDown != nil, c.SharedExperts > 0})
		}
		for _, r := range rules {
			switch {
			case r.want && !r.has:
				return fmt.Errorf("deepseek2: tensor blk.%d.%s is missing", i, r.name)
			case r.has && !r.want:
				return fmt.Errorf("deepseek2: tensor blk.%d.%s is present, but the metadata describes a model without it", i, r.name)
			}
		}
	}
	return nil
}

// SetMetadata writes the model's configuration as GGUF metadata.
func (m *Model) SetMetadata(w *gguf.Writer) { m.Config.SetMetadata(w) }
