// The GPT-2 configuration and forward pass, top to bottom.

package gpt2

import (
	"fmt"

	"github.com/toyml/toy/toy/gguf"
	"github.com/toyml/toy/toy/models"
	"github.com/toyml/toy/toy/nn"
	"github.com/toyml/toy/toy/tensor"
)

// Config holds every hyperparameter of a GPT-2 model, declared with its
// GGUF key (under "gpt2.") and its card symbol.
type Config struct {
	VocabSize     int     `card:"N_V, vocabulary size"`
	ContextLength int     `gguf:"context_length" card:"ℓ_max, context length (learned positions)"`
	Embed         int     `gguf:"embedding_length" card:"d_e, model width"`
	Layers        int     `gguf:"block_count" card:"L, layers"`
	FFN           int     `gguf:"feed_forward_length" card:"d_mlp, feed-forward width"`
	Heads         int     `gguf:"attention.head_count" card:"H, attention heads, each d_e/H wide"`
	NormEps       float32 `gguf:"attention.layer_norm_epsilon" card:"ε, LayerNorm epsilon"`
	TiedOutput    bool    `card:"tied, the unembedding is the token embedding (W_u = W_eᵀ)"` // as in OpenAI's checkpoints
}

// ConfigFromGGUF reads the configuration from f's metadata (keys "gpt2.*").
func ConfigFromGGUF(f *gguf.File) (Config, error) {
	var c Config
	if err := models.ReadConfig(f, "gpt2", &c); err != nil {
		return c, err
	}
	return c, c.Validate()
}

// SetMetadata writes the configuration as GGUF metadata (keys "gpt2.*").
func (c Config) SetMetadata(w *gguf.Writer) { w.SetConfig("gpt2", c) }

// Validate checks that the numbers describe a buildable model.
func (c Config) Validate() error {
	const big = 1 << 20
	switch {
	case c.VocabSize <= 0 || c.VocabSize > 1<<24:
		return fmt.Errorf("gpt2: vocabulary size %d", c.VocabSize)
	case c.Embed <= 0 || c.Embed > big || c.FFN <= 0 || c.FFN > big:
		return fmt.Errorf("gpt2: width %d, feed-forward width %d", c.Embed, c.FFN)
	case c.Layers <= 0 || c.Layers > 1024:
		return fmt.Errorf("gpt2: %d layers", c.Layers)
	case c.Heads <= 0 || c.Embed%c.Heads != 0:
		return fmt.Errorf("gpt2: %d heads for width %d", c.Heads, c.Embed)
	case c.ContextLength <= 0 || c.ContextLength > 1<<24:
		return fmt.Errorf("gpt2: context length %d", c.ContextLength)
	case !(c.NormEps > 0 && c.NormEps < 1):
		return fmt.Errorf("gpt2: LayerNorm epsilon %g", c.NormEps)
	}
	return nil
}

// Model is GPT-2. Weights are declared with their GGUF names and shapes.
type Model struct {
	Config Config

	Embed      *nn.Embedding `gguf:"token_embd" shape:"VocabSize, Embed" card:"W_e, token embedding"`
	Pos        *nn.Embedding `gguf:"position_embd" shape:"ContextLength, Embed" card:"W_p, position embedding"`
	Blocks     []nn.Block    `gguf:"blk"` // L pre-norm blocks
	OutputNorm *nn.LayerNorm `gguf:"output_norm" shape:"Embed" card:"γ, final LayerNorm scale"`
	Output     *nn.Linear    `gguf:"output,optional" shape:"VocabSize, Embed" card:"W_u, unembedding"` // tied: a Linear over Embed.W
}

// Load builds the model from a GGUF file; the weights view the file's memory.
func Load(f *gguf.File) (*Model, error) {
	c, err := ConfigFromGGUF(f)
	if err != nil {
		return nil, err
	}
	m := New(c)
	return m, models.LoadWeights(f, "gpt2", m, c)
}

// New returns a model with the shape of c and no weights yet.
func New(c Config) *Model {
	m := &Model{Config: c, OutputNorm: &nn.LayerNorm{Eps: c.NormEps}}
	m.Blocks = make([]nn.Block, c.Layers)
	for i := range m.Blocks {
		m.Blocks[i] = nn.Block{
			AttnNorm: &nn.LayerNorm{Eps: c.NormEps},
			Attn:     nn.Attention{Heads: c.Heads, KVHeads: c.Heads, HeadDim: c.Embed / c.Heads},
			FFNNorm:  &nn.LayerNorm{Eps: c.NormEps},
			FFN:      &nn.MLP{},
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
	positions := make([]int32, len(ids))
	for t := range positions {
		positions[t] = int32(cache.Len() + t)
	}
	x := tensor.Add(m.Embed.Forward(ids), m.Pos.Forward(positions)) // [T, D]
	for i := range m.Blocks {
		// x = x + Attn(LayerNorm(x)); x = x + MLP(LayerNorm(x))
		x = m.Blocks[i].Forward(x, cache.Layer(i))
	}
	return m.OutputNorm.Forward(x)
}

// Logits projects hidden states [T, D] to vocabulary logits [T, V].
func (m *Model) Logits(h *tensor.Tensor) *tensor.Tensor { return m.Output.Forward(h) }

// NewCache returns an empty KV cache for up to capacity positions (at most
// the context length: GPT-2 has no position embeddings beyond it).
func (m *Model) NewCache(capacity int) *nn.Cache {
	return nn.NewCache(m.Config.Layers, min(capacity, m.Config.ContextLength), m.Config.Embed)
}

// VocabSize returns V.
func (m *Model) VocabSize() int { return m.Config.VocabSize }

// ContextLength returns P.
func (m *Model) ContextLength() int { return m.Config.ContextLength }

// Weights returns every weight tensor under its GGUF name, each once (a tied
// output head is listed as token_embd.weight only).
func (m *Model) Weights() []nn.Named { return nn.Unique(nn.Collect("", m)) }

// SetMetadata writes the model's configuration as GGUF metadata.
func (m *Model) SetMetadata(w *gguf.Writer) { m.Config.SetMetadata(w) }
