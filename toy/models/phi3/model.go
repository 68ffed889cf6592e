// The Phi-3 forward pass, top to bottom.

package phi3

import (
	"errors"
	"fmt"

	"github.com/toyml/toy/toy/gguf"
	"github.com/toyml/toy/toy/models"
	"github.com/toyml/toy/toy/nn"
	"github.com/toyml/toy/toy/tensor"
)

// Model is a Phi-3-family transformer: the decoder frame over pre-norm
// blocks (*nn.Block) whose feed-forward layer is an *MLP, with LongRoPE's
// factors beside it. Each block's Attn.RoPE is the rotation without the
// factors: Hidden rotates with the factors of its call's context.
type Model struct {
	models.Decoder
	Config Config

	// LongRoPE's frequency divisors [R/2], both nil without LongRoPE:
	// constants of the architecture, not trained weights.
	RopeShort *tensor.Tensor `gguf:"rope_factors_short.weight,optional" shape:"RopeDim/2" card:"f_s, LongRoPE's short factors (a constant, not trained)"`
	RopeLong  *tensor.Tensor `gguf:"rope_factors_long.weight,optional" shape:"RopeDim/2" card:"f_l, LongRoPE's long factors (a constant, not trained)"`
}

// MLP is Phi-3's SwiGLU with the gate and up projections fused in one
// matrix: [g; u] = x·W_upᵀ, y = (SiLU(g) ⊙ u)·W_downᵀ.
type MLP struct {
	GateUp *nn.Linear `gguf:"ffn_up" shape:"2*FFN, Embed" card:"W_up, fused gate (first d_mlp rows) and up projections"`
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
	if err := models.LoadWeights(f, Arch, m, c); err != nil {
		return nil, err
	}
	if (m.RopeShort == nil) != (m.RopeLong == nil) || c.RopeFactors && m.RopeLong == nil {
		return nil, errors.New("phi3: LongRoPE needs both rope_factors_short.weight and rope_factors_long.weight")
	}
	for i, b := range m.Blocks { // the fused projection or all three separate ones
		if err := b.(*nn.Block).Attn.Check(); err != nil {
			return nil, fmt.Errorf("phi3: blk.%d: %w", i, err)
		}
	}
	return m, nil
}

// New returns a model with the shape of c and no weights yet.
func New(c Config) *Model {
	m := &Model{Config: c, Decoder: models.Decoder{OutputNorm: &nn.RMSNorm{Eps: c.NormEps},
		Vocab: c.VocabSize, Context: c.ContextLength, CacheWidth: c.KVHeads * c.HeadDim}}
	for range c.Layers {
		// x = x + Attn(RMSNorm(x)), [q; k; v] fused, q and k rotated by the context's RoPE
		// x = x + Down(SiLU(g) ⊙ u), [g; u] = Up(RMSNorm(x))
		m.Blocks = append(m.Blocks, &nn.Block{
			AttnNorm: &nn.RMSNorm{Eps: c.NormEps},
			Attn: nn.Attention{
				Heads: c.Heads, KVHeads: c.KVHeads, HeadDim: c.HeadDim,
				RoPE: &nn.RoPE{Dim: c.RopeDim, Base: c.RopeBase, NeoX: true, Scaling: c.RoPEScaling()},
			},
			FFNNorm: &nn.RMSNorm{Eps: c.NormEps},
			FFN:     &MLP{},
		})
	}
	return m
}

// RoPE returns the rotation for a context of n positions: with LongRoPE,
// the long factors when c.LongFactors(n), else the short ones.
func (m *Model) RoPE(n int) *nn.RoPE {
	c := m.Config
	r := &nn.RoPE{Dim: c.RopeDim, Base: c.RopeBase, NeoX: true, Scaling: c.RoPEScaling(), Factors: m.RopeShort}
	if c.LongFactors(n) {
		r.Factors = m.RopeLong
	}
	return r
}

// Forward runs ids [T] at positions cache.Len() … and returns logits [T, V].
func (m *Model) Forward(ids []int32, cache *nn.Cache) *tensor.Tensor {
	return m.Logits(m.Hidden(ids, cache))
}

// Hidden runs the transformer and returns the final normalised states [T, D].
// A nil cache runs ids as one whole sequence from position 0 (training). The
// context that picks LongRoPE's factors is the cache's capacity (NewCache's
// argument), or without a cache the sequence's length.
func (m *Model) Hidden(ids []int32, cache *nn.Cache) *tensor.Tensor {
	n := len(ids)
	if cache != nil {
		n = cache.Capacity()
	}
	rope := m.RoPE(n)
	x := m.Embed.Forward(ids) // [T, D]
	for i, b := range m.Blocks {
		b := *b.(*nn.Block) // a copy: the context's RoPE belongs to this call, not to the model
		b.Attn.RoPE = rope
		x = b.Forward(x, cache.Layer(i))
	}
	return m.OutputNorm.Forward(x)
}

// Weights returns every weight tensor under its GGUF name, each once (a tied
// output head is listed as token_embd.weight only; LongRoPE's factors, when
// present, last).
func (m *Model) Weights() []nn.Named { return nn.Unique(nn.Collect("", m)) }

// SetMetadata writes the model's configuration as GGUF metadata.
func (m *Model) SetMetadata(w *gguf.Writer) { m.Config.SetMetadata(w) }
