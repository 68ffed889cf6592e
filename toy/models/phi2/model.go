// The Phi-2 forward pass, top to bottom.

package phi2

import (
	"fmt"

	"github.com/toyml/toy/toy/gguf"
	"github.com/toyml/toy/toy/models"
	"github.com/toyml/toy/toy/nn"
	"github.com/toyml/toy/toy/tensor"
)

// Model is Phi-2. Weights are declared with their GGUF names and shapes.
type Model struct {
	Config Config

	Embed      *nn.Embedding `gguf:"token_embd" shape:"VocabSize, Embed" card:"W_e, token embedding"`
	Blocks     []Block       `gguf:"blk"`                                                       // L parallel blocks
	OutputNorm *nn.LayerNorm `gguf:"output_norm" shape:"Embed" card:"γ, final LayerNorm scale"` // with a bias
	Output     *nn.Linear    `gguf:"output" shape:"VocabSize, Embed" card:"W_u, unembedding"`   // with a bias
}

// Block is the parallel block (Wang & Komatsuzaki 2021, GPT-J): attention
// and the MLP both read one LayerNorm of x, and both outputs join x at once:
//
//	h = LayerNorm(x)
//	x = x + Attn(h) + MLP(h)
type Block struct {
	Norm *nn.LayerNorm `gguf:"attn_norm" shape:"Embed" card:"γ, LayerNorm scale"` // with a bias
	Attn nn.Attention  // fused attn_qkv or attn_q, attn_k, attn_v, and attn_output, all with biases
	MLP  nn.MLP        // ffn_up, ffn_down, with biases; GELU (tanh)
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
	if err := models.LoadWeights(f, Arch, m, c); err != nil {
		return nil, err
	}
	for i := range m.Blocks { // the fused projection or all three separate ones
		if err := m.Blocks[i].Attn.Check(); err != nil {
			return nil, fmt.Errorf("phi2: blk.%d: %w", i, err)
		}
	}
	return m, nil
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

// Weights returns every weight tensor under its GGUF name.
func (m *Model) Weights() []nn.Named { return nn.Collect("", m) }

// SetMetadata writes the model's configuration as GGUF metadata.
func (m *Model) SetMetadata(w *gguf.Writer) { m.Config.SetMetadata(w) }
