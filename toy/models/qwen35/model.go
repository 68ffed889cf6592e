// The Qwen3.5 forward pass, top to bottom.

package qwen35

import (
	"fmt"

	"github.com/toyml/toy/toy/gguf"
	"github.com/toyml/toy/toy/nn"
	"github.com/toyml/toy/toy/tensor"
)

// Model is a Qwen3.5 hybrid: the gated delta rule in most layers, gated
// attention in every Interval-th; in qwen35moe, mixtures of experts in
// place of the SwiGLUs. Weights are tagged with their GGUF
// tensor names; blocks are named "blk.N.".
type Model struct {
	Config Config

	Embed      *nn.Embedding `gguf:"token_embd"` // [V, D]
	Blocks     []Block       // L pre-norm blocks
	OutputNorm *nn.RMSNorm   `gguf:"output_norm"`     // [D]
	Output     *nn.Linear    `gguf:"output,optional"` // [V, D]; nil when tied to Embed
}

// Mixer is a block's sequence mixer: *nn.Attention or *DeltaNet.
type Mixer interface {
	Forward(x *tensor.Tensor, cache *nn.KVCache) *tensor.Tensor
}

// Block is the pre-norm block
//
//	x = x + Mixer(RMSNorm(x))
//	x = x + SwiGLU(RMSNorm(x))
type Block struct {
	Norm    *nn.RMSNorm `gguf:"attn_norm"` // [D]
	Mixer   Mixer       // attn_q (query and gate), attn_k, attn_v, attn_q_norm, attn_k_norm, attn_output; or attn_qkv, attn_gate, ssm_*
	FFNNorm *nn.RMSNorm `gguf:"post_attention_norm"` // [D]
	FFN     nn.Layer    // *nn.SwiGLU (ffn_gate, ffn_up [F, D], ffn_down [D, F]) or, in qwen35moe, *nn.MoE
}

// Forward runs the block on x [T, D] with this layer's cache.
func (b *Block) Forward(x *tensor.Tensor, cache *nn.KVCache) *tensor.Tensor {
	x = tensor.Add(x, b.Mixer.Forward(b.Norm.Forward(x), cache))
	return tensor.Add(x, b.FFN.Forward(b.FFNNorm.Forward(x)))
}

// Attn returns the block's attention, or nil in a delta-rule layer.
func (b *Block) Attn() *nn.Attention { a, _ := b.Mixer.(*nn.Attention); return a }

// Delta returns the block's delta rule, or nil in an attention layer.
func (b *Block) Delta() *DeltaNet { d, _ := b.Mixer.(*DeltaNet); return d }

// Load builds the model from a GGUF file; the weights view the file's
// memory. The multi-token-prediction layers are not loaded.
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
	m := &Model{Config: c, OutputNorm: &nn.RMSNorm{Eps: c.NormEps}}
	m.Blocks = make([]Block, c.Layers)
	for i := range m.Blocks {
		b := &m.Blocks[i]
		b.Norm, b.FFNNorm, b.FFN = &nn.RMSNorm{Eps: c.NormEps}, &nn.RMSNorm{Eps: c.NormEps}, &nn.SwiGLU{}
		if c.MoE() {
			b.FFN = &nn.MoE{Used: c.ExpertsUsed, Normalize: true}
		}
		if c.Recurrent(i) {
			b.Mixer = &DeltaNet{KHeads: c.KHeads, VHeads: c.VHeads, StateDim: c.StateDim, Eps: c.NormEps, Grouped: c.Grouped(),
				Norm: &nn.RMSNorm{Eps: c.NormEps}}
			continue
		}
		b.Mixer = &nn.Attention{Heads: c.Heads, KVHeads: c.KVHeads, HeadDim: c.HeadDim, Gated: true,
			RoPE:  &nn.RoPE{Dim: c.RopeDim, Base: c.RopeBase, NeoX: true},
			QNorm: &nn.RMSNorm{Eps: c.NormEps}, KNorm: &nn.RMSNorm{Eps: c.NormEps}}
	}
	return m
}

// Forward runs ids [T] at positions cache.Len() … and returns logits [T, V].
func (m *Model) Forward(ids []int32, cache *nn.Cache) *tensor.Tensor {
	return m.Logits(m.Hidden(ids, cache))
}

// Hidden runs the model and returns the final normalised states [T, D].
// A nil cache runs ids as one whole sequence from position 0 (training).
func (m *Model) Hidden(ids []int32, cache *nn.Cache) *tensor.Tensor {
	x := m.Embed.Forward(ids) // [T, D]
	for i := range m.Blocks {
		// x = x + Mixer(RMSNorm(x)); x = x + SwiGLU(RMSNorm(x))
		x = m.Blocks[i].Forward(x, cache.Layer(i))
	}
	return m.OutputNorm.Forward(x)
}

// Logits projects hidden states [T, D] to vocabulary logits [T, V].
func (m *Model) Logits(h *tensor.Tensor) *tensor.Tensor { return m.Output.Forward(h) }

// NewCache returns an empty cache for up to capacity positions: keys and
// values in the attention layers; in the delta-rule layers their state,
// whose size does not depend on capacity (K [capacity, 1] only sizes it).
func (m *Model) NewCache(capacity int) *nn.Cache {
	c := m.Config
	cache := &nn.Cache{Layers: make([]*nn.KVCache, c.Layers)}
	for i := range cache.Layers {
		if c.Recurrent(i) {
			cache.Layers[i] = &nn.KVCache{K: tensor.New(capacity, 1), State: newState(c)}
		} else {
			cache.Layers[i] = nn.NewKVCache(capacity, c.KVHeads*c.HeadDim)
		}
	}
	return cache
}

// VocabSize returns V.
func (m *Model) VocabSize() int { return m.Config.VocabSize }

// ContextLength returns the trained context length.
func (m *Model) ContextLength() int { return m.Config.ContextLength }

// check verifies every weight's shape against the config, so that a file
// whose tensors disagree with its metadata fails at load, not mid-forward.
func (m *Model) check() error {
	c := m.Config
	D, F, dh := c.Embed, c.FFN, c.HeadDim
	errs := []error{
		nn.CheckShape("token_embd.weight", m.Embed.W, c.VocabSize, D),
		nn.CheckShape("output_norm.weight", m.OutputNorm.W, D),
		nn.CheckShape("output.weight", m.Output.W, c.VocabSize, D),
	}
	for i := range m.Blocks {
		b := &m.Blocks[i]
		p := blockPrefix(i)
		errs = append(errs,
			nn.CheckShape(p+"attn_norm.weight", b.Norm.W, D),
			nn.CheckShape(p+"post_attention_norm.weight", b.FFNNorm.W, D))
		switch ffn := b.FFN.(type) {
		case *nn.SwiGLU:
			errs = append(errs, nn.CheckLinear(p+"ffn_gate", ffn.Gate, F, D), nn.CheckLinear(p+"ffn_up", ffn.Up, F, D),
				nn.CheckLinear(p+"ffn_down", ffn.Down, D, F))
		case *nn.MoE:
			errs = append(errs, nn.CheckLinear(p+"ffn_gate_inp", ffn.Router, c.Experts, D),
				nn.CheckShape(p+"ffn_gate_exps.weight", ffn.Gate, c.Experts, c.ExpertFFN, D), ffn.Check(D))
			if c.SharedFFN > 0 && ffn.SharedGate == nil {
				errs = append(errs, fmt.Errorf("tensor %sffn_gate_shexp.weight: missing (the file gives a shared expert of width %d)", p, c.SharedFFN))
			}
			if ffn.SharedGate != nil {
				errs = append(errs, nn.CheckLinear(p+"ffn_gate_shexp", ffn.SharedGate, c.SharedFFN, D))
			}
		}
		if d := b.Delta(); d != nil {
			C, Hv, v := c.ConvChannels(), c.VHeads, c.VHeads*c.StateDim
			if d.In != nil && c.Arch == ArchNext { // Qwen3-Next's older files: one projection
				errs = append(errs, nn.CheckLinear(p+"ssm_in", d.In, C+v, D))
				if d.QKV != nil || d.Z != nil {
					errs = append(errs, fmt.Errorf("tensor %sssm_in.weight: beside attn_qkv and attn_gate (a file gives one or the other)", p))
				}
			} else {
				errs = append(errs, nn.CheckLinear(p+"attn_qkv", d.QKV, C, D), nn.CheckLinear(p+"attn_gate", d.Z, v, D))
			}
			if c.Arch == ArchNext {
				errs = append(errs, nn.CheckLinear(p+"ssm_ba", d.BA, 2*Hv, D))
			} else {
				errs = append(errs, nn.CheckLinear(p+"ssm_beta", d.Beta, Hv, D), nn.CheckLinear(p+"ssm_alpha", d.Alpha, Hv, D))
			}
			errs = append(errs,
				nn.CheckShape(p+"ssm_conv1d.weight", d.Conv, C, c.ConvL),
				nn.CheckShape(p+"ssm_dt.bias", d.DT, Hv),
				nn.CheckShape(p+"ssm_a", d.A, Hv),
				nn.CheckShape(p+"ssm_norm.weight", d.Norm.W, c.StateDim),
				nn.CheckLinear(p+"ssm_out", d.Out, D, v))
			for _, w := range []nn.Named{{Name: "ssm_conv1d.weight", T: d.Conv}, {Name: "ssm_dt.bias", T: d.DT}, {Name: "ssm_a", T: d.A}} {
				if w.T != nil && w.T.DType() != tensor.F32 {
					errs = append(errs, fmt.Errorf("tensor %s%s is %v; toy reads it as F32", p, w.Name, w.T.DType()))
				}
			}
			continue
		}
		a, q, kv := b.Attn(), c.Heads*dh, c.KVHeads*dh
		errs = append(errs,
			nn.CheckLinear(p+"attn_q", a.Q, 2*q, D),
			nn.CheckLinear(p+"attn_k", a.K, kv, D),
			nn.CheckLinear(p+"attn_v", a.V, kv, D),
			nn.CheckLinear(p+"attn_output", a.O, D, q),
			nn.CheckShape(p+"attn_q_norm.weight", a.QNorm.W, dh),
			nn.CheckShape(p+"attn_k_norm.weight", a.KNorm.W, dh),
			a.Check())
	}
	for _, err := range errs {
		if err != nil {
			return fmt.Errorf("qwen35: %w", err)
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
