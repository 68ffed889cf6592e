// The Command R forward pass, top to bottom.

package cohere

import (
	"fmt"

	"github.com/toyml/toy/toy/gguf"
	"github.com/toyml/toy/toy/models"
	"github.com/toyml/toy/toy/nn"
	"github.com/toyml/toy/toy/tensor"
)

// Model is a Command R, Command R+ or Command R7B transformer: the decoder
// frame over parallel blocks (*Block), a final LayerNorm without an offset,
// and the token embedding for the head, its logits scaled.
type Model struct {
	models.Decoder
	Config Config
}

// Block is the parallel block: attention and the SwiGLU both read one
// LayerNorm (without a bias) of x. The sum is taken as llama.cpp takes it,
// (SwiGLU(h) + x) + Attn(h). In Command R+ the attention LayerNorms each
// query and key head before RoPE (Attn.Norms: per-head LayerNorms).
type Block struct {
	Norm *nn.LayerNorm `gguf:"attn_norm" shape:"Embed" card:"γ, LayerNorm scale (no offset)"`
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
	if err := models.LoadWeights(f, c.Arch, m, c); err != nil {
		return nil, err
	}
	m.Output = &nn.Linear{W: m.Embed.W} // tied, whatever else the file holds (as llama.cpp)
	for i, b := range m.Blocks {        // attn_q, attn_k, attn_v present; head norms F32, without offsets
		a := &b.(*Block).Attn
		if err := a.Check(); err != nil {
			return nil, fmt.Errorf("cohere: blk.%d: %w", i, err)
		}
		if q, ok := a.Norms.Q.(*nn.LayerNorm); ok && (q.B != nil || a.Norms.K.(*nn.LayerNorm).B != nil) {
			return nil, fmt.Errorf("cohere: blk.%d: attn_q_norm.bias, attn_k_norm.bias: Command R+'s head norms have no offset", i)
		}
	}
	return m, nil
}

// New returns a model with the shape of c and no weights yet.
func New(c Config) *Model {
	m := &Model{Config: c, Decoder: models.Decoder{OutputNorm: &nn.LayerNorm{Eps: c.NormEps},
		LogitScale: c.LogitScale, Vocab: c.VocabSize, Context: c.ContextLength, CacheWidth: c.KVHeads * c.HeadDim()}}
	for i := range c.Layers {
		// h = LayerNorm(x); x = x + SwiGLU(h) + Attn(h)
		b := &Block{Norm: &nn.LayerNorm{Eps: c.NormEps}, Attn: nn.Attention{Heads: c.Heads, KVHeads: c.KVHeads, HeadDim: c.HeadDim()}}
		if c.RoPE(i) {
			b.Attn.RoPE = &nn.RoPE{Dim: c.HeadDim(), Base: c.RopeBase}
		}
		if c.Sliding(i) {
			b.Attn.Options.Window = c.Window
		}
		if c.QKNorm {
			b.Attn.Norms = nn.HeadNorms{Q: &nn.LayerNorm{Eps: c.NormEps}, K: &nn.LayerNorm{Eps: c.NormEps}}
		}
		m.Blocks = append(m.Blocks, b)
	}
	return m
}

// SetMetadata writes the model's configuration as GGUF metadata.
func (m *Model) SetMetadata(w *gguf.Writer) { m.Config.SetMetadata(w) }
