// The Qwen3.5 forward pass, top to bottom.

package qwen35

import (
	"errors"
	"fmt"

	"github.com/toyml/toy/toy/gguf"
	"github.com/toyml/toy/toy/models"
	"github.com/toyml/toy/toy/nn"
	"github.com/toyml/toy/toy/tensor"
)

// Model is a Qwen3.5 hybrid: the decoder frame over pre-norm blocks (*Block)
// with the gated delta rule in most layers, gated attention in every
// Interval-th; in qwen35moe, mixtures of experts in place of the SwiGLUs.
// Its cache is its own (NewCache): the delta-rule layers keep a state.
type Model struct {
	models.Decoder
	Config Config
}

// Block is a layer: the pre-norm block (nn.MixerBlock) whose mixer is a
// DeltaNet or, every Interval-th layer, GatedAttention; its FFN a SwiGLU or,
// in qwen35moe, an nn.MoE. The feed-forward norm is post_attention_norm in
// the files.
type Block struct {
	nn.MixerBlock `gguf-names:"ffn_norm=post_attention_norm"`
}

// Attn returns the block's attention, or nil in a delta-rule layer.
func (b *Block) Attn() *nn.Attention {
	if a, ok := b.Mixer.(*GatedAttention); ok {
		return &a.Attention
	}
	return nil
}

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
	if err := models.LoadWeights(f, "qwen35", m, c); err != nil {
		return nil, err
	}
	return m, m.check()
}

// New returns a model with the shape of c and no weights yet.
func New(c Config) *Model {
	m := &Model{Config: c, Decoder: models.Decoder{OutputNorm: &nn.RMSNorm{Eps: c.NormEps},
		Vocab: c.VocabSize, Context: c.ContextLength}}
	for i := range c.Layers {
		// x = x + Mixer(RMSNorm(x)); x = x + SwiGLU(RMSNorm(x))
		b := &Block{nn.MixerBlock{Norm: &nn.RMSNorm{Eps: c.NormEps}, FFNNorm: &nn.RMSNorm{Eps: c.NormEps}, FFN: &nn.SwiGLU{}}}
		if c.MoE() {
			b.FFN = &nn.MoE{Used: c.ExpertsUsed, Normalize: true}
		}
		if c.Recurrent(i) {
			b.Mixer = &DeltaNet{KHeads: c.KHeads, VHeads: c.VHeads, StateDim: c.StateDim, Eps: c.NormEps, Grouped: c.Grouped(),
				Norm: &nn.RMSNorm{Eps: c.NormEps}}
		} else {
			b.Mixer = &GatedAttention{nn.Attention{Heads: c.Heads, KVHeads: c.KVHeads, HeadDim: c.HeadDim,
				RoPE:  &nn.RoPE{Dim: c.RopeDim, Base: c.RopeBase, NeoX: true},
				Norms: nn.HeadNorms{Q: &nn.RMSNorm{Eps: c.NormEps}, K: &nn.RMSNorm{Eps: c.NormEps}}}}
		}
		m.Blocks = append(m.Blocks, b)
	}
	return m
}

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

// check verifies what the shape tags cannot say: which of the alternative
// projections each layer holds, the shared expert the metadata announces,
// and the F32 convolution taps.
func (m *Model) check() error {
	next := m.Config.Arch == ArchNext
	for i, b := range m.Blocks {
		b := b.(*Block)
		a, d := b.Attn(), b.Delta()
		fused := next && d != nil && d.In != nil // Qwen3-Next's older files: ssm_in
		var err error
		switch {
		case a != nil:
			err = a.Check()
		case fused && (d.QKV != nil || d.Z != nil):
			err = errors.New("tensor ssm_in.weight: beside attn_qkv and attn_gate (a file gives one or the other)")
		case !fused && (d.QKV == nil || d.Z == nil):
			err = errors.New("tensor attn_qkv.weight or attn_gate.weight is missing")
		case next && d.BA == nil:
			err = errors.New("tensor ssm_ba.weight is missing")
		case !next && (d.Beta == nil || d.Alpha == nil):
			err = errors.New("tensor ssm_beta.weight or ssm_alpha.weight is missing")
		case d.Conv.DType() != tensor.F32:
			err = fmt.Errorf("tensor ssm_conv1d.weight is %v; toy reads it as F32", d.Conv.DType())
		}
		if e, ok := b.FFN.(*nn.MoE); ok && err == nil && m.Config.SharedFFN > 0 && e.SharedGate == nil {
			err = fmt.Errorf("tensor ffn_gate_shexp.weight is missing (the file gives a shared expert of width %d)", m.Config.SharedFFN)
		}
		if err != nil {
			return fmt.Errorf("qwen35: blk.%d: %w", i, err)
		}
	}
	return nil
}

// SetMetadata writes the model's configuration as GGUF metadata.
func (m *Model) SetMetadata(w *gguf.Writer) { m.Config.SetMetadata(w) }

// GatedAttention is Qwen3.5's (and Qwen3-Next's) attention: its query
// projection [2·H·Dh, D] gives each head a query and then a gate, and each
// head's output is multiplied by σ(gate) before Wo.
type GatedAttention struct{ nn.Attention }

// Forward attends x [T, D] over the cache, as nn.Attention does, gated.
func (a *GatedAttention) Forward(x *tensor.Tensor, cache *nn.KVCache) *tensor.Tensor {
	T, dh := x.Rows(), a.HeadDim
	heads := tensor.Reshape(a.Q.Forward(x), T*a.Heads, 2*dh) // one row per (token, head): query, gate
	q := tensor.Reshape(tensor.Columns(heads, 0, dh), T, a.Heads*dh)
	gate := tensor.Reshape(tensor.Columns(heads, dh, 2*dh), T, a.Heads*dh)
	o := a.Attend(q, a.K.Forward(x), a.V.Forward(x), cache)
	return a.O.Forward(tensor.Mul(o, tensor.Sigmoid(gate)))
}
