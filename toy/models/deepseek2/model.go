// The DeepSeek-V2 forward pass, top to bottom.

package deepseek2

import (
	"fmt"

	"github.com/toyml/toy/toy/gguf"
	"github.com/toyml/toy/toy/nn"
	"github.com/toyml/toy/toy/tensor"
)

// Model is a DeepSeek-V2 transformer. Weights are tagged with their GGUF
// tensor names; blocks are named "blk.N.".
type Model struct {
	Config Config

	Embed      *nn.Embedding `gguf:"token_embd"` // [V, D]
	Blocks     []Block       // L pre-norm blocks
	OutputNorm *nn.RMSNorm   `gguf:"output_norm"`     // [D]
	Output     *nn.Linear    `gguf:"output,optional"` // [V, D]; nil: tied to Embed
}

// Block is one pre-norm block: latent attention, then a dense SwiGLU (the
// first DenseLayers blocks) or a mixture of experts with shared experts.
//
//	x = x + MLA(RMSNorm(x))
//	x = x + FFN(RMSNorm(x))
type Block struct {
	AttnNorm *nn.RMSNorm `gguf:"attn_norm"` // [D]
	Attn     Attention
	FFNNorm  *nn.RMSNorm `gguf:"ffn_norm"` // [D]
	FFN      nn.Layer    // *nn.SwiGLU or *nn.MoE
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
	if err := nn.Load(f, "", m); err != nil {
		return nil, err
	}
	for i := range m.Blocks {
		if err := nn.Load(f, fmt.Sprintf("blk.%d.", i), &m.Blocks[i]); err != nil {
			return nil, err
		}
	}
	return m, m.check()
}

// New returns a model with the shape of c and no weights yet.
func New(c Config) *Model {
	m := &Model{Config: c, OutputNorm: &nn.RMSNorm{Eps: c.NormEps}}
	m.Blocks = make([]Block, c.Layers)
	for i := range m.Blocks {
		b := &m.Blocks[i]
		b.AttnNorm, b.FFNNorm = &nn.RMSNorm{Eps: c.NormEps}, &nn.RMSNorm{Eps: c.NormEps}
		b.Attn = Attention{
			KVANorm: &nn.RMSNorm{Eps: c.NormEps},
			Heads:   c.Heads, Rank: c.KVLoRARank, KeyDim: c.KeyDim, ValueDim: c.ValueDim,
			RoPE:  &nn.RoPE{Dim: c.RopeDim, Base: c.RopeBase, Scaling: c.RoPEScaling()},
			Scale: c.AttnScale(),
		}
		if c.QLoRARank > 0 {
			b.Attn.QANorm = &nn.RMSNorm{Eps: c.NormEps}
		}
		if i < c.DenseLayers {
			b.FFN = &nn.SwiGLU{}
			continue
		}
		// Softmax routing weights p_e as they are (V2), or sigmoid scores
		// divided by their sum (V3), times the weights scale; the
		// shared experts' output added ungated.
		b.FFN = &nn.MoE{Used: c.ExpertsUsed, Normalize: c.ExpertWeightsNorm, Sigmoid: c.ExpertGating == "sigmoid",
			Scale: c.ExpertWeightsScale, Groups: c.ExpertGroups, GroupsUsed: c.ExpertGroupsUsed, SharedUngated: true}
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
		// x = x + MLA(RMSNorm(x))
		// x = x + SwiGLU(RMSNorm(x))  or  Σ_{e ∈ top-k} w_e·SwiGLU_e(RMSNorm(x)) + SwiGLU_shared(RMSNorm(x))
		x = m.Blocks[i].Forward(x, cache.Layer(i))
	}
	return m.OutputNorm.Forward(x)
}

// Logits projects hidden states [T, D] to vocabulary logits [T, V].
func (m *Model) Logits(h *tensor.Tensor) *tensor.Tensor {
	if m.Output == nil {
		return tensor.MatMul(h, m.Embed.W)
	}
	return m.Output.Forward(h)
}

// NewCache returns an empty KV cache for up to capacity positions, of
// Config.CacheWidth features per layer.
func (m *Model) NewCache(capacity int) *nn.Cache {
	return nn.NewCache(m.Config.Layers, capacity, m.Config.CacheWidth())
}

// VocabSize returns V.
func (m *Model) VocabSize() int { return m.Config.VocabSize }

// ContextLength returns the trained context length.
func (m *Model) ContextLength() int { return m.Config.ContextLength }

// MoE returns block i's mixture of experts, or nil for a dense block.
func (m *Model) MoE(i int) *nn.MoE {
	moe, _ := m.Blocks[i].FFN.(*nn.MoE)
	return moe
}

// check verifies every weight's shape against the config, so that a file
// whose tensors disagree with its metadata fails at load, not mid-forward.
func (m *Model) check() error {
	c := m.Config
	D, H, Dk, Dv, Dr, R, Rq := c.Embed, c.Heads, c.KeyDim, c.ValueDim, c.RopeDim, c.KVLoRARank, c.QLoRARank
	errs := []error{
		nn.CheckShape("token_embd.weight", m.Embed.W, c.VocabSize, D),
		nn.CheckShape("output_norm.weight", m.OutputNorm.W, D),
	}
	if !c.TiedOutput {
		errs = append(errs, nn.CheckLinear("output", m.Output, c.VocabSize, D))
	}
	present := func(name string, ok bool) error {
		if !ok {
			return fmt.Errorf("tensor %s is missing", name)
		}
		return nil
	}
	absent := func(name string, ok bool, why string) error {
		if ok {
			return fmt.Errorf("tensor %s is present, but %s", name, why)
		}
		return nil
	}
	for i := range m.Blocks {
		b := &m.Blocks[i]
		a := &b.Attn
		p := fmt.Sprintf("blk.%d.", i)
		errs = append(errs,
			nn.CheckShape(p+"attn_norm.weight", b.AttnNorm.W, D),
			nn.CheckShape(p+"ffn_norm.weight", b.FFNNorm.W, D),
			nn.CheckLinear(p+"attn_kv_a_mqa", a.KVA, R+Dr, D),
			nn.CheckShape(p+"attn_kv_a_norm.weight", a.KVANorm.W, R),
			nn.CheckLinear(p+"attn_output", a.O, D, H*Dv))
		if Rq > 0 {
			errs = append(errs, nn.CheckLinear(p+"attn_q_a", a.QA, Rq, D), nn.CheckShape(p+"attn_q_a_norm.weight", a.QANorm.W, Rq),
				nn.CheckLinear(p+"attn_q_b", a.QB, H*Dk, Rq), absent(p+"attn_q.weight", a.Q != nil, "the metadata gives a query rank"))
		} else {
			errs = append(errs, nn.CheckLinear(p+"attn_q", a.Q, H*Dk, D),
				absent(p+"attn_q_a.weight", a.QA != nil, "the metadata gives no query rank (attention.q_lora_rank)"))
		}
		if c.SplitKVB {
			errs = append(errs, present(p+"attn_k_b.weight", a.KB != nil), present(p+"attn_v_b.weight", a.VB != nil),
				absent(p+"attn_kv_b.weight", a.KVB != nil, "the metadata describes split attn_k_b and attn_v_b (attention.key_length_mla)"))
			if a.KB != nil && a.VB != nil {
				errs = append(errs, nn.CheckShape(p+"attn_k_b.weight", a.KB, H, R, Dk-Dr), nn.CheckShape(p+"attn_v_b.weight", a.VB, H, Dv, R))
			}
		} else {
			errs = append(errs, nn.CheckLinear(p+"attn_kv_b", a.KVB, H*(Dk-Dr+Dv), R),
				absent(p+"attn_k_b.weight", a.KB != nil, "the metadata has no attention.key_length_mla"))
		}
		switch ffn := b.FFN.(type) {
		case *nn.SwiGLU:
			errs = append(errs, nn.CheckLinear(p+"ffn_gate", ffn.Gate, c.FFN, D), nn.CheckLinear(p+"ffn_up", ffn.Up, c.FFN, D),
				nn.CheckLinear(p+"ffn_down", ffn.Down, D, c.FFN))
		case *nn.MoE:
			E, Fe, Fs := c.Experts, c.ExpertFFN, c.SharedExperts*c.ExpertFFN
			errs = append(errs, nn.CheckLinear(p+"ffn_gate_inp", ffn.Router, E, D),
				nn.CheckShape(p+"ffn_gate_exps.weight", ffn.Gate, E, Fe, D),
				nn.CheckShape(p+"ffn_up_exps.weight", ffn.Up, E, Fe, D),
				nn.CheckShape(p+"ffn_down_exps.weight", ffn.Down, E, D, Fe),
				absent(p+"ffn_gate_inp_shexp.weight", ffn.SharedWeight != nil, "DeepSeek's shared experts have no gate"))
			if c.ExpertBias {
				errs = append(errs, nn.CheckShape(p+"exp_probs_b.bias", ffn.Bias, E))
			} else {
				errs = append(errs, absent(p+"exp_probs_b.bias", ffn.Bias != nil, fmt.Sprintf("blk.%d has none", c.DenseLayers)))
			}
			if Fs > 0 {
				errs = append(errs, nn.CheckLinear(p+"ffn_gate_shexp", ffn.SharedGate, Fs, D), nn.CheckLinear(p+"ffn_up_shexp", ffn.SharedUp, Fs, D),
					nn.CheckLinear(p+"ffn_down_shexp", ffn.SharedDown, D, Fs))
			} else {
				errs = append(errs, absent(p+"ffn_down_shexp.weight", ffn.SharedDown != nil, "the metadata has no shared experts (expert_shared_count)"))
			}
			errs = append(errs, ffn.Check(D))
		}
	}
	for _, err := range errs {
		if err != nil {
			return fmt.Errorf("deepseek2: %w", err)
		}
	}
	return nil
}

// Weights returns every weight tensor under its GGUF name, each once.
func (m *Model) Weights() []nn.Named {
	all := nn.Collect("", m)
	for i := range m.Blocks {
		all = append(all, nn.Collect(fmt.Sprintf("blk.%d.", i), &m.Blocks[i])...)
	}
	return nn.Unique(all)
}

// SetMetadata writes the model's configuration as GGUF metadata.
func (m *Model) SetMetadata(w *gguf.Writer) { m.Config.SetMetadata(w) }
