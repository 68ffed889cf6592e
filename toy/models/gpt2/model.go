// The GPT-2 configuration and forward pass, top to bottom.

package gpt2

import (
	"fmt"
	"slices"

	"github.com/toyml/toy/toy/gguf"
	"github.com/toyml/toy/toy/models"
	"github.com/toyml/toy/toy/nn"
	"github.com/toyml/toy/toy/tensor"
)

// Config holds every hyperparameter of a GPT-2 model, declared with its
// GGUF key (under "gpt2.") and its card symbol.
type Config struct {
	VocabSize     int     `range:"[1, 1<<24]" card:"N_V, vocabulary size"`
	ContextLength int     `gguf:"context_length" range:"[1, 1<<24]" card:"ℓ_max, context length (learned positions)"`
	Embed         int     `gguf:"embedding_length" range:"[1, 1<<20]" card:"d_e, model width"`
	Layers        int     `gguf:"block_count" range:"[1, 1024]" card:"L, layers"`
	FFN           int     `gguf:"feed_forward_length" range:"[1, 1<<20]" card:"d_mlp, feed-forward width"`
	Heads         int     `gguf:"attention.head_count" range:"[1, *]" card:"H, attention heads, each d_e/H wide"`
	NormEps       float32 `gguf:"attention.layer_norm_epsilon" range:"(0, 1)" card:"ε, LayerNorm epsilon"`
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

// Validate checks that the numbers describe a buildable model: the declared
// ranges, then how they fit together.
func (c Config) Validate() error {
	if err := models.CheckRanges("gpt2", c); err != nil {
		return err
	}
	if c.Embed%c.Heads != 0 {
		return fmt.Errorf("gpt2: %d heads for width %d", c.Heads, c.Embed)
	}
	return nil
}

// Model is GPT-2: the decoder frame, with learned position embeddings added
// to the token embeddings, over pre-LayerNorm blocks (*nn.Block).
type Model struct {
	Pos *nn.Embedding `gguf:"position_embd" shape:"ContextLength, Embed" init:"0.01" card:"W_p, position embedding"`
	models.Decoder
	Config Config
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
	m := &Model{Config: c, Decoder: models.Decoder{OutputNorm: &nn.LayerNorm{Eps: c.NormEps},
		Vocab: c.VocabSize, Context: c.ContextLength, CacheWidth: c.Embed}}
	for range c.Layers {
		// x = x + Attn(LayerNorm(x)); x = x + MLP(LayerNorm(x))
		m.Blocks = append(m.Blocks, &nn.Block{
			AttnNorm: &nn.LayerNorm{Eps: c.NormEps},
			Attn:     nn.Attention{Heads: c.Heads, KVHeads: c.Heads, HeadDim: c.Embed / c.Heads},
			FFNNorm:  &nn.LayerNorm{Eps: c.NormEps},
			FFN:      &nn.MLP{},
		})
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
	x := tensor.Add(m.Embed.Forward(ids), m.Pos.Forward(cache.Positions(len(ids)))) // [T, D]
	for i, b := range m.Blocks {
		x = b.Forward(x, cache.Layer(i))
	}
	return m.OutputNorm.Forward(x)
}

// NewCache returns an empty KV cache for up to capacity positions (at most
// the context length: GPT-2 has no position embeddings beyond it).
func (m *Model) NewCache(capacity int) *nn.Cache {
	return nn.NewCache(len(m.Blocks), min(capacity, m.Context), m.CacheWidth)
}

// Weights returns every weight tensor under its GGUF name, each once (a tied
// output head is listed as token_embd.weight only), position_embd.weight
// second, after token_embd.weight, as GPT-2 files hold them.
func (m *Model) Weights() []nn.Named {
	w := m.Decoder.Weights()
	if m.Pos != nil && m.Pos.W != nil {
		w = slices.Insert(w, min(1, len(w)), nn.Named{Name: "position_embd.weight", T: m.Pos.W})
	}
	return w
}

// SetMetadata writes the model's configuration as GGUF metadata.
func (m *Model) SetMetadata(w *gguf.Writer) { m.Config.SetMetadata(w) }
