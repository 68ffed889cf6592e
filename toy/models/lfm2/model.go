// The LFM2 forward pass, top to bottom.

package lfm2

import (
	"fmt"

	"github.com/toyml/toy/toy/gguf"
	"github.com/toyml/toy/toy/nn"
	"github.com/toyml/toy/toy/tensor"
)

// Model is an LFM2 hybrid: short convolutions in most layers, grouped-query
// attention in the rest. Weights are tagged with their GGUF tensor names;
// blocks are named "blk.N.".
type Model struct {
	Config Config

	Embed      *nn.Embedding `gguf:"token_embd"` // [V, D]
	Blocks     []Block       // L pre-norm blocks
	OutputNorm *nn.RMSNorm   `gguf:"token_embd_norm"` // [D] (llama.cpp's name for the final norm)
	Output     *nn.Linear    `gguf:"output,optional"` // [V, D]; nil when tied to Embed
}

// Mixer is a block's sequence mixer: *nn.Attention or *ShortConv.
type Mixer interface {
	Forward(x *tensor.Tensor, cache *nn.KVCache) *tensor.Tensor
}

// Block is the pre-norm block
//
//	x = x + Mixer(RMSNorm(x))
//	x = x + SwiGLU(RMSNorm(x))
//
// its mixer a ShortConv or, in the attention layers, attention whose query
// and key heads are RMS-normalised (one weight [Dh] shared by the heads)
// before RoPE on the two halves of each head.
type Block struct {
	Norm    *nn.RMSNorm `gguf:"attn_norm"` // [D]
	Mixer   Mixer       // attn_q, attn_k, attn_v, attn_q_norm, attn_k_norm, attn_output, or shortconv.*
	FFNNorm *nn.RMSNorm `gguf:"ffn_norm"` // [D]
	FFN     nn.Layer    // *nn.SwiGLU (ffn_gate, ffn_up [F, D], ffn_down [D, F]) or, in lfm2moe, *nn.MoE
}

// Forward runs the block on x [T, D] with this layer's cache (keys and
// values, or the convolution's inputs).
func (b *Block) Forward(x *tensor.Tensor, cache *nn.KVCache) *tensor.Tensor {
	x = tensor.Add(x, b.Mixer.Forward(b.Norm.Forward(x), cache))
	return tensor.Add(x, b.FFN.Forward(b.FFNNorm.Forward(x)))
}

// Attn returns the block's attention, or nil in a convolution layer.
func (b *Block) Attn() *nn.Attention { a, _ := b.Mixer.(*nn.Attention); return a }

// Conv returns the block's short convolution, or nil in an attention layer.
func (b *Block) Conv() *ShortConv { s, _ := b.Mixer.(*ShortConv); return s }

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
	m := &Model{Config: c, OutputNorm: &nn.RMSNorm{Eps: c.NormEps}}
	m.Blocks = make([]Block, c.Layers)
	for i := range m.Blocks {
		b := &m.Blocks[i]
		b.Norm, b.FFNNorm = &nn.RMSNorm{Eps: c.NormEps}, &nn.RMSNorm{Eps: c.NormEps}
		b.FFN = &nn.SwiGLU{}
		if c.MoE(i) {
			b.FFN = &nn.MoE{Used: c.ExpertsUsed, Normalize: true, Sigmoid: c.Sigmoid}
		}
		if c.Conv(i) {
			b.Mixer = &ShortConv{}
			continue
		}
		b.Mixer = &nn.Attention{Heads: c.Heads, KVHeads: c.KVHeads[i], HeadDim: c.HeadDim(), Window: c.Window,
			RoPE:  &nn.RoPE{Dim: c.HeadDim(), Base: c.RopeBase, NeoX: true},
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
// values in the attention layers, the convolution's inputs u [capacity, D]
// in the others (in K; their V is unused).
func (m *Model) NewCache(capacity int) *nn.Cache {
	c := m.Config
	cache := &nn.Cache{Layers: make([]*nn.KVCache, c.Layers)}
	for i := range cache.Layers {
		if c.Conv(i) {
			cache.Layers[i] = &nn.KVCache{K: tensor.New(capacity, c.Embed), V: tensor.New(1, c.Embed)}
		} else {
			cache.Layers[i] = nn.NewKVCache(capacity, c.KVHeads[i]*c.HeadDim())
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
	D, F, dh := c.Embed, c.FFN, c.HeadDim()
	errs := []error{
		nn.CheckShape("token_embd.weight", m.Embed.W, c.VocabSize, D),
		nn.CheckShape("token_embd_norm.weight", m.OutputNorm.W, D),
		nn.CheckShape("output.weight", m.Output.W, c.VocabSize, D),
	}
	for i := range m.Blocks {
		b := &m.Blocks[i]
		p := blockPrefix(i)
		errs = append(errs,
			nn.CheckShape(p+"attn_norm.weight", b.Norm.W, D),
			nn.CheckShape(p+"ffn_norm.weight", b.FFNNorm.W, D))
		switch ffn := b.FFN.(type) {
		case *nn.SwiGLU:
			errs = append(errs, nn.CheckLinear(p+"ffn_gate", ffn.Gate, F, D), nn.CheckLinear(p+"ffn_up", ffn.Up, F, D),
				nn.CheckLinear(p+"ffn_down", ffn.Down, D, F))
		case *nn.MoE:
			errs = append(errs, nn.CheckLinear(p+"ffn_gate_inp", ffn.Router, c.Experts, D),
				nn.CheckShape(p+"ffn_gate_exps.weight", ffn.Gate, c.Experts, c.ExpertFFN, D), ffn.Check(D))
			if ffn.Bias == nil {
				errs = append(errs, fmt.Errorf("tensor %sexp_probs_b.bias: missing (LFM2's router needs its expert bias)", p))
			} else {
				errs = append(errs, nn.CheckShape(p+"exp_probs_b.bias", ffn.Bias, c.Experts))
			}
		}
		if s := b.Conv(); s != nil {
			errs = append(errs,
				nn.CheckShape(p+"shortconv.conv.weight", s.Conv, D, c.ConvL),
				nn.CheckLinear(p+"shortconv.in_proj", s.In, 3*D, D),
				nn.CheckLinear(p+"shortconv.out_proj", s.Out, D, D))
			if s.Conv != nil && s.Conv.DType() != tensor.F32 {
				errs = append(errs, fmt.Errorf("tensor %sshortconv.conv.weight is %v; toy reads the taps as F32", p, s.Conv.DType()))
			}
			continue
		}
		a, kv := b.Attn(), c.KVHeads[i]*dh
		if a.QKV != nil {
			errs = append(errs, fmt.Errorf("%w: a fused attn_qkv in layer %d", ErrUnsupported, i))
			continue
		}
		errs = append(errs,
			nn.CheckLinear(p+"attn_q", a.Q, D, D),
			nn.CheckLinear(p+"attn_k", a.K, kv, D),
			nn.CheckLinear(p+"attn_v", a.V, kv, D),
			nn.CheckLinear(p+"attn_output", a.O, D, D),
			nn.CheckShape(p+"attn_q_norm.weight", a.QNorm.W, dh),
			nn.CheckShape(p+"attn_k_norm.weight", a.KNorm.W, dh),
			a.Check())
	}
	for _, err := range errs {
		if err != nil {
			return fmt.Errorf("lfm2: %w", err)
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
