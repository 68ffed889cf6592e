// The Phi-2 forward pass, top to bottom.

package phi2

import (
	"fmt"

	"github.com/toyml/toy/toy/gguf"
	"github.com/toyml/toy/toy/nn"
	"github.com/toyml/toy/toy/tensor"
)

// Model is Phi-2. Weights are tagged with their GGUF tensor names; blocks are
// named "blk.N.".
type Model struct {
	Config Config

	Embed      *nn.Embedding `gguf:"token_embd"` // [V, D]
	Blocks     []Block       // L parallel blocks
	OutputNorm *nn.LayerNorm `gguf:"output_norm"` // [D], with a bias
	Output     *nn.Linear    `gguf:"output"`      // [V, D], with a bias
}

// Block is the parallel block (Wang & Komatsuzaki 2021, GPT-J): attention
// and the MLP both read one LayerNorm of x, and both outputs join x at once:
//
//	h = LayerNorm(x)
//	x = x + Attn(h) + MLP(h)
type Block struct {
	Norm *nn.LayerNorm `gguf:"attn_norm"` // [D], with a bias
	Attn nn.Attention  // fused attn_qkv or attn_q, attn_k, attn_v, and attn_output, all with biases
	MLP  nn.MLP        // ffn_up [F, D], ffn_down [D, F], with biases; GELU (tanh)
}

// Forward runs the block on x [T, D] with this layer's KV cache. The sum is
// taken as llama.cpp takes it, (Attn(h) + MLP(h)) + x.
func (b *Block) Forward(x *tensor.Tensor, cache *nn.KVCache) *tensor.Tensor {
	h := b.Norm.Forward(x) // [T, D]
	return tensor.Add(tensor.Add(b.Attn.Forward(h, cache), b.MLP.Forward(h)), x)
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
		m.Blocks[i] = Block{
			Norm: &nn.LayerNorm{Eps: c.NormEps},
			Attn: nn.Attention{
				Heads: c.Heads, KVHeads: c.KVHeads, HeadDim: c.HeadDim,
				RoPE: &nn.RoPE{Dim: c.RopeDim, Base: c.RopeBase, NeoX: true},
			},
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
		// h = LayerNorm(x); x = x + Attn(h) + MLP(h)
		x = m.Blocks[i].Forward(x, cache.Layer(i))
	}
	return m.OutputNorm.Forward(x)
}

// Logits projects hidden states [T, D] to vocabulary logits [T, V], bias
// included.
func (m *Model) Logits(h *tensor.Tensor) *tensor.Tensor { return m.Output.Forward(h) }

// NewCache returns an empty KV cache for up to capacity positions.
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
		checkNorm("output_norm", m.OutputNorm, D),
		nn.CheckLinear("output", m.Output, c.VocabSize, D),
	}
	for i := range m.Blocks {
		b := &m.Blocks[i]
		a := &b.Attn
		p := blockPrefix(i)
		errs = append(errs,
			checkNorm(p+"attn_norm", b.Norm, D),
			nn.CheckLinear(p+"attn_output", a.O, D, q),
			nn.CheckLinear(p+"ffn_up", b.MLP.Up, F, D),
			nn.CheckLinear(p+"ffn_down", b.MLP.Down, D, F),
		)
		if a.QKV != nil {
			errs = append(errs, nn.CheckLinear(p+"attn_qkv", a.QKV, q+2*kv, D))
		} else {
			errs = append(errs, nn.CheckLinear(p+"attn_q", a.Q, q, D), nn.CheckLinear(p+"attn_k", a.K, kv, D),
				nn.CheckLinear(p+"attn_v", a.V, kv, D))
		}
	}
	for _, err := range errs {
		if err != nil {
			return fmt.Errorf("phi2: %w", err)
		}
	}
	return nil
}

func checkNorm(name string, n *nn.LayerNorm, d int) error {
	if err := nn.CheckShape(name+".weight", n.W, d); err != nil {
		return err
	}
	if n.B != nil {
		return nn.CheckShape(name+".bias", n.B, d)
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
