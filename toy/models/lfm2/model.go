// The LFM2 forward pass, top to bottom.

package lfm2

import (
	"fmt"

	"github.com/toyml/toy/toy/gguf"
	"github.com/toyml/toy/toy/models"
	"github.com/toyml/toy/toy/nn"
	"github.com/toyml/toy/toy/tensor"
)

// Model is an LFM2 hybrid: short convolutions in most layers, grouped-query
// attention in the rest. Its final norm is stored as token_embd_norm.
type Model struct {
	models.Decoder `gguf-names:"output_norm=token_embd_norm"`
	Config         Config
}

// Block is a layer: the pre-norm block (nn.MixerBlock) whose mixer is a
// ShortConv or, in the attention layers, attention whose query and key heads
// are RMS-normalised (one weight [Dh] shared by the heads) before RoPE on the
// two halves of each head; its FFN a SwiGLU or, in lfm2moe, an nn.MoE.
type Block struct{ nn.MixerBlock }

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
	if err := models.LoadWeights(f, "lfm2", m, c); err != nil {
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
		b := &Block{nn.MixerBlock{Norm: &nn.RMSNorm{Eps: c.NormEps}, Mixer: &ShortConv{}, FFNNorm: &nn.RMSNorm{Eps: c.NormEps}, FFN: &nn.SwiGLU{}}}
		if c.MoE(i) {
			b.FFN = &nn.MoE{Used: c.ExpertsUsed, Normalize: true, Sigmoid: c.Sigmoid}
		}
		if !c.Conv(i) {
			b.Mixer = &nn.Attention{Heads: c.Heads, KVHeads: c.KVHeads[i], HeadDim: c.HeadDim(),
				Options: tensor.AttentionOptions{Window: c.Window},
				RoPE:    &nn.RoPE{Dim: c.HeadDim(), Base: c.RopeBase, NeoX: true},
				Norms:   nn.HeadNorms{Q: &nn.RMSNorm{Eps: c.NormEps}, K: &nn.RMSNorm{Eps: c.NormEps}}}
		}
		m.Blocks = append(m.Blocks, b)
	}
	return m
}

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

// check verifies what the shape tags cannot say: the attention layers have
// their own attn_q, attn_k and attn_v, the mixtures their expert bias, and
// the convolution taps are F32.
func (m *Model) check() error {
	for i, b := range m.Blocks {
		b := b.(*Block)
		var err error
		switch a, s := b.Attn(), b.Conv(); {
		case a != nil && a.QKV != nil:
			err = fmt.Errorf("%w: a fused attn_qkv", ErrUnsupported)
		case a != nil:
			err = a.Check()
		case s.Conv.DType() != tensor.F32:
			err = fmt.Errorf("tensor shortconv.conv.weight is %v; toy reads the taps as F32", s.Conv.DType())
		}
		if e, ok := b.FFN.(*nn.MoE); ok && e.Bias == nil && err == nil {
			err = fmt.Errorf("tensor exp_probs_b.bias is missing (LFM2's router needs its expert bias)")
		}
		if err != nil {
			return fmt.Errorf("lfm2: blk.%d: %w", i, err)
		}
	}
	return nil
}

// Weights returns every weight tensor under its GGUF name, each once (a tied
// output head is listed as token_embd.weight only); the Decoder's own would
// miss the rename of the final norm.
func (m *Model) Weights() []nn.Named { return nn.Unique(nn.Collect("", m)) }

// SetMetadata writes the model's configuration as GGUF metadata.
func (m *Model) SetMetadata(w *gguf.Writer) { m.Config.SetMetadata(w) }
