// The StarCoder2 forward pass, top to bottom.

package starcoder2

import (
	"fmt"
	"strings"

	"github.com/toyml/toy/toy/gguf"
	"github.com/toyml/toy/toy/models"
	"github.com/toyml/toy/toy/nn"
	"github.com/toyml/toy/toy/tensor"
)

// Model is a StarCoder2 transformer. Weights are declared with their GGUF
// names and shapes.
type Model struct {
	Config Config

	Embed      *nn.Embedding `gguf:"token_embd" shape:"VocabSize, Embed" card:"W_e, token embedding"`
	Blocks     []nn.Block    `gguf:"blk"` // L pre-LayerNorm blocks with GELU MLPs
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
	if err := models.LoadWeights(f, Arch, m, c); err != nil {
		return nil, err
	}
	return m, m.check()
}

// check holds the rules shapes do not say: each block has its query, key and
// value projections, and every norm and projection but the head has a bias.
func (m *Model) check() error {
	for i := range m.Blocks {
		if err := m.Blocks[i].Attn.Check(); err != nil {
			return fmt.Errorf("starcoder2: blk.%d: %w", i, err)
		}
	}
	ws := m.Weights()
	has := map[string]bool{}
	for _, w := range ws {
		has[w.Name] = true
	}
	for _, w := range ws {
		if base, ok := strings.CutSuffix(w.Name, ".weight"); ok && base != "token_embd" && base != "output" && !has[base+".bias"] {
			return fmt.Errorf("starcoder2: %s.bias is missing", base)
		}
	}
	return nil
}

// New returns a model with the shape of c and no weights yet.
func New(c Config) *Model {
	m := &Model{Config: c, OutputNorm: &nn.LayerNorm{Eps: c.NormEps}}
	m.Blocks = make([]nn.Block, c.Layers)
	for i := range m.Blocks {
		m.Blocks[i] = nn.Block{
			AttnNorm: &nn.LayerNorm{Eps: c.NormEps},
			Attn: nn.Attention{
				Heads: c.Heads, KVHeads: c.KVHeads, HeadDim: c.HeadDim(),
				RoPE: &nn.RoPE{Dim: c.HeadDim(), Base: c.RopeBase, NeoX: true},
			},
			FFNNorm: &nn.LayerNorm{Eps: c.NormEps},
			FFN:     &nn.MLP{},
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
		// x = x + Attn(LayerNorm(x)); x = x + MLP(LayerNorm(x))
		x = m.Blocks[i].Forward(x, cache.Layer(i))
	}
	return m.OutputNorm.Forward(x)
}

// Logits projects hidden states [T, D] to vocabulary logits [T, V].
func (m *Model) Logits(h *tensor.Tensor) *tensor.Tensor { return m.Output.Forward(h) }

// NewCache returns an empty KV cache for up to capacity positions.
func (m *Model) NewCache(capacity int) *nn.Cache {
	return nn.NewCache(m.Config.Layers, capacity, m.Config.KVHeads*m.Config.HeadDim())
}

// VocabSize returns V.
func (m *Model) VocabSize() int { return m.Config.VocabSize }

// ContextLength returns the trained context length.
func (m *Model) ContextLength() int { return m.Config.ContextLength }

// Weights returns every weight tensor under its GGUF name, each once (a tied
// output head is listed as token_embd.weight only).
func (m *Model) Weights() []nn.Named { return nn.Unique(nn.Collect("", m)) }

// SetMetadata writes the model's configuration as GGUF metadata.
func (m *Model) SetMetadata(w *gguf.Writer) { m.Config.SetMetadata(w) }
