// The Gemma forward pass, top to bottom.

package gemma

import (
	"fmt"
	"math"

	"github.com/toyml/toy/toy/gguf"
	"github.com/toyml/toy/toy/nn"
	"github.com/toyml/toy/toy/tensor"
)

// Model is a Gemma transformer. Weights are tagged with their GGUF tensor
// names; blocks are named "blk.N.".
type Model struct {
	Config Config

	Embed      *nn.Embedding `gguf:"token_embd"` // [V, D]
	Blocks     []nn.Block    // L pre-norm blocks (with post-norms: sandwich norms)
	OutputNorm *nn.RMSNorm   `gguf:"output_norm"`     // [D]
	Output     *nn.Linear    `gguf:"output,optional"` // [V, D]; nil when tied to Embed
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
	return m, m.check()
}

// New returns a model with the shape of c and no weights yet.
func New(c Config) *Model {
	m := &Model{Config: c, OutputNorm: &nn.RMSNorm{Eps: c.NormEps}}
	m.Blocks = make([]nn.Block, c.Layers)
	for i := range m.Blocks {
		base, scaling := c.RoPE(i)
		attn := nn.Attention{
			Heads: c.Heads, KVHeads: c.KVHeads, HeadDim: c.HeadDim,
			RoPE:  &nn.RoPE{Dim: c.HeadDim, Base: base, NeoX: true, Scaling: scaling},
			Scale: c.QueryScale, SoftCap: c.AttnSoftCap,
		}
		if c.Sliding(i) {
			attn.Window = c.Window
		}
		if c.QKNorm() {
			attn.QNorm, attn.KNorm = &nn.RMSNorm{Eps: c.NormEps}, &nn.RMSNorm{Eps: c.NormEps}
		}
		b := nn.Block{AttnNorm: &nn.RMSNorm{Eps: c.NormEps}, Attn: attn, FFNNorm: &nn.RMSNorm{Eps: c.NormEps}, FFN: &nn.GeGLU{}}
		if c.PostNorms() {
			b.AttnPostNorm, b.FFNPostNorm = &nn.RMSNorm{Eps: c.NormEps}, &nn.RMSNorm{Eps: c.NormEps}
		}
		m.Blocks[i] = b
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
	x := m.Embed.Forward(ids)                                        // [T, D]
	x = tensor.Scale(x, float32(math.Sqrt(float64(m.Config.Embed)))) // x·√D
	for i := range m.Blocks {
		// x = x + RMSNorm(Attn(RMSNorm(x))); x = x + RMSNorm(GeGLU(RMSNorm(x)))
		// (the outer RMSNorms from Gemma 2 on)
		x = m.Blocks[i].Forward(x, cache.Layer(i))
	}
	return m.OutputNorm.Forward(x)
}

// Logits projects hidden states [T, D] to soft-capped vocabulary logits
// [T, V]: z ← c·tanh(z/c), computed as llama.cpp does, z·(1/c) first.
func (m *Model) Logits(h *tensor.Tensor) *tensor.Tensor {
	z := m.Output.Forward(h) // [T, V]
	if c := m.Config.FinalSoftCap; c > 0 {
		z = tensor.Scale(tensor.Tanh(tensor.Scale(z, 1/c)), c)
	}
	return z
}

// NewCache returns an empty KV cache for up to capacity positions. The local
// layers keep every position too: the window is a mask, not an eviction.
func (m *Model) NewCache(capacity int) *nn.Cache {
	return nn.NewCache(m.Config.Layers, capacity, m.Config.KVHeads*m.Config.HeadDim)
}

// VocabSize returns V.
func (m *Model) VocabSize() int { return m.Config.VocabSize }

// ContextLength returns the trained context length.
func (m *Model) ContextLength() int { return m.Config.ContextLength }

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
	norm := func(l nn.Layer) *tensor.Tensor { return l.(*nn.RMSNorm).W }
	for i := range m.Blocks {
		b := &m.Blocks[i]
		a, ffn := &b.Attn, b.FFN.(*nn.GeGLU)
		p := fmt.Sprintf("blk.%d.", i)
		if c.PostNorms() {
			errs = append(errs, nn.CheckShape(p+"post_attention_norm.weight", norm(b.AttnPostNorm), D),
				nn.CheckShape(p+"post_ffw_norm.weight", norm(b.FFNPostNorm), D))
		}
		if c.QKNorm() {
			errs = append(errs, nn.CheckShape(p+"attn_q_norm.weight", a.QNorm.W, c.HeadDim),
				nn.CheckShape(p+"attn_k_norm.weight", a.KNorm.W, c.HeadDim))
		}
		errs = append(errs,
			nn.CheckShape(p+"attn_norm.weight", norm(b.AttnNorm), D),
			nn.CheckShape(p+"ffn_norm.weight", norm(b.FFNNorm), D),
			nn.CheckLinear(p+"attn_q", a.Q, q, D),
			nn.CheckLinear(p+"attn_k", a.K, kv, D),
			nn.CheckLinear(p+"attn_v", a.V, kv, D),
			nn.CheckLinear(p+"attn_output", a.O, D, q),
			nn.CheckLinear(p+"ffn_gate", ffn.Gate, F, D),
			nn.CheckLinear(p+"ffn_up", ffn.Up, F, D),
			nn.CheckLinear(p+"ffn_down", ffn.Down, D, F),
		)
	}
	for _, err := range errs {
		if err != nil {
			return fmt.Errorf("gemma2: %w", err)
		}
	}
	return nil
}

// Weights returns every weight tensor under its GGUF name, each once (a tied
// output head is listed as token_embd.weight only).
func (m *Model) Weights() []nn.Named { return nn.ModelWeights(m, m.Blocks) }

// SetMetadata writes the model's configuration as GGUF metadata.
func (m *Model) SetMetadata(w *gguf.Writer) { m.Config.SetMetadata(w) }
