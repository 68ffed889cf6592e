// The Command R forward pass, top to bottom.

package cohere

import (
	"fmt"

	"github.com/toyml/toy/toy/gguf"
	"github.com/toyml/toy/toy/nn"
	"github.com/toyml/toy/toy/tensor"
)

// Model is a Command R, Command R+ or Command R7B transformer. Weights are
// tagged with their GGUF tensor names; blocks are named "blk.N.". The output
// head is the token embedding.
type Model struct {
	Config Config

	Embed      *nn.Embedding `gguf:"token_embd"` // [V, D]
	Blocks     []Block       // L parallel blocks
	OutputNorm *nn.LayerNorm `gguf:"output_norm"` // [D], no bias
}

// Block is the parallel block: attention and the SwiGLU both read one
// LayerNorm (without a bias) of x. The sum is taken as llama.cpp takes it,
// (SwiGLU(h) + x) + Attn(h). In Command R+ the attention LayerNorms each
// query and key head before RoPE (Attn.QLayerNorm, Attn.KLayerNorm).
type Block struct {
	Norm *nn.LayerNorm `gguf:"attn_norm"` // [D], no bias
	Attn nn.Attention  // attn_q, attn_k, attn_v, attn_output; in Command R+ attn_q_norm [H, Dh], attn_k_norm [KV, Dh]
	FFN  nn.SwiGLU     // ffn_gate, ffn_up [F, D], ffn_down [D, F]
}

// Forward runs the block on x [T, D] with this layer's KV cache.
func (b *Block) Forward(x *tensor.Tensor, cache *nn.KVCache) *tensor.Tensor {
	h := b.Norm.Forward(x) // [T, D]
	return tensor.Add(tensor.Add(b.FFN.Forward(h), x), b.Attn.Forward(h, cache))
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
	return m, m.check()
}

// New returns a model with the shape of c and no weights yet.
func New(c Config) *Model {
	m := &Model{Config: c, OutputNorm: &nn.LayerNorm{Eps: c.NormEps}}
	m.Blocks = make([]Block, c.Layers)
	for i := range m.Blocks {
		b := &m.Blocks[i]
		b.Norm = &nn.LayerNorm{Eps: c.NormEps}
		b.Attn = nn.Attention{Heads: c.Heads, KVHeads: c.KVHeads, HeadDim: c.HeadDim()}
		if c.RoPE(i) {
			b.Attn.RoPE = &nn.RoPE{Dim: c.HeadDim(), Base: c.RopeBase}
		}
		if c.Sliding(i) {
			b.Attn.Window = c.Window
		}
		if c.QKNorm {
			b.Attn.QLayerNorm, b.Attn.KLayerNorm = &nn.LayerNorm{Eps: c.NormEps}, &nn.LayerNorm{Eps: c.NormEps}
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
		// h = LayerNorm(x); x = x + SwiGLU(h) + Attn(h)
		x = m.Blocks[i].Forward(x, cache.Layer(i))
	}
	return m.OutputNorm.Forward(x)
}

// Logits projects hidden states [T, D] to vocabulary logits [T, V] with the
// token embedding, times the logit scale.
func (m *Model) Logits(h *tensor.Tensor) *tensor.Tensor {
	logits := tensor.MatMul(h, m.Embed.W)
	if s := m.Config.LogitScale; s != 0 {
		logits = tensor.Scale(logits, s)
	}
	return logits
}

// NewCache returns an empty KV cache for up to capacity positions.
func (m *Model) NewCache(capacity int) *nn.Cache {
	return nn.NewCache(m.Config.Layers, capacity, m.Config.KVHeads*m.Config.HeadDim())
}

// VocabSize returns V.
func (m *Model) VocabSize() int { return m.Config.VocabSize }

// ContextLength returns the trained context length.
func (m *Model) ContextLength() int { return m.Config.ContextLength }

// check verifies every weight's shape against the config, so that a file
// whose tensors disagree with its metadata fails at load, not mid-forward.
func (m *Model) check() error {
	c := m.Config
	D, F, kv := c.Embed, c.FFN, c.KVHeads*c.HeadDim()
	errs := []error{
		nn.CheckShape("token_embd.weight", m.Embed.W, c.VocabSize, D),
		nn.CheckShape("output_norm.weight", m.OutputNorm.W, D),
	}
	for i := range m.Blocks {
		b := &m.Blocks[i]
		a := &b.Attn
		p := blockPrefix(i)
		errs = append(errs,
			nn.CheckShape(p+"attn_norm.weight", b.Norm.W, D),
			nn.CheckLinear(p+"attn_q", a.Q, D, D),
			nn.CheckLinear(p+"attn_k", a.K, kv, D),
			nn.CheckLinear(p+"attn_v", a.V, kv, D),
			nn.CheckLinear(p+"attn_output", a.O, D, D),
			nn.CheckLinear(p+"ffn_gate", b.FFN.Gate, F, D),
			nn.CheckLinear(p+"ffn_up", b.FFN.Up, F, D),
			nn.CheckLinear(p+"ffn_down", b.FFN.Down, D, F),
		)
		if c.QKNorm {
			errs = append(errs, checkHeadNorm(p+"attn_q_norm", a.QLayerNorm, c.Heads, c.HeadDim()),
				checkHeadNorm(p+"attn_k_norm", a.KLayerNorm, c.KVHeads, c.HeadDim()))
		}
	}
	for _, err := range errs {
		if err != nil {
			return fmt.Errorf("cohere: %w", err)
		}
	}
	return nil
}

// checkHeadNorm checks a per-head LayerNorm: F32 weights [heads, Dh], no bias.
func checkHeadNorm(name string, n *nn.LayerNorm, heads, dh int) error {
	if err := nn.CheckShape(name+".weight", n.W, heads, dh); err != nil {
		return err
	}
	if n.W.DType() != tensor.F32 {
		return fmt.Errorf("tensor %s.weight is %v; norm weights must be F32", name, n.W.DType())
	}
	if n.B != nil {
		return fmt.Errorf("tensor %s.bias: Command R+'s head norms have no offset", name)
	}
	return nil
}

func blockPrefix(i int) string { return fmt.Sprintf("blk.%d.", i) }

// Weights returns every weight tensor under its GGUF name.
func (m *Model) Weights() []nn.Named {
	ws := nn.Collect("", m)
	for i := range m.Blocks {
		ws = append(ws, nn.Collect(blockPrefix(i), &m.Blocks[i])...)
	}
	return ws
}

// SetMetadata writes the model's configuration as GGUF metadata.
func (m *Model) SetMetadata(w *gguf.Writer) { m.Config.SetMetadata(w) }
