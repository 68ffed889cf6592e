// The Phi-2 forward pass, top to bottom.

package phi2

import (
	"fmt"

	"github.com/toyml/toy/toy/gguf"
	"github.com/toyml/toy/toy/models"
	"github.com/toyml/toy/toy/nn"
	"github.com/toyml/toy/toy/tensor"
)

// Model is Phi-2: the decoder frame over parallel blocks (*Block), a final
// LayerNorm and a head, both with biases.
type Model struct {
	models.Decoder
	Config Config
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
	for i, b := range m.Blocks { // the fused projection or all three separate ones
		if err := b.(*Block).Attn.Check(); err != nil {
			return nil, fmt.Errorf("phi2: blk.%d: %w", i, err)
		}
	}
	return m, nil
}

// New returns a model with the shape of c and no weights yet.
func New(c Config) *Model {
	m := &Model{Config: c, Decoder: models.Decoder{OutputNorm: &nn.LayerNorm{Eps: c.NormEps},
		Vocab: c.VocabSize, Context: c.ContextLength, CacheWidth: c.KVHeads * c.HeadDim}}
	for range c.Layers {
		// h = LayerNorm(x); x = x + Attn(h) + MLP(h)
		m.Blocks = append(m.Blocks, &Block{
			Norm: &nn.LayerNorm{Eps: c.NormEps},
			Attn: nn.Attention{
				Heads: c.Heads, KVHeads: c.KVHeads, HeadDim: c.HeadDim,
				RoPE: &nn.RoPE{Dim: c.RopeDim, Base: c.RopeBase, NeoX: true},
			},
		})
	}
	return m
}

// SetMetadata writes the model's configuration as GGUF metadata.
func (m *Model) SetMetadata(w *gguf.Writer) { m.Config.SetMetadata(w) }
