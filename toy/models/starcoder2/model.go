// The StarCoder2 forward pass, top to bottom.

package starcoder2

import (
	"fmt"
	"strings"

	"github.com/toyml/toy/toy/gguf"
	"github.com/toyml/toy/toy/models"
	"github.com/toyml/toy/toy/nn"
)

// Model is a StarCoder2 transformer: the decoder frame over pre-LayerNorm
// blocks with GELU MLPs (*nn.Block), a final LayerNorm, and a head that may
// be tied (a Linear over Embed.W).
type Model struct {
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
	if err := models.LoadWeights(f, Arch, m, c); err != nil {
		return nil, err
	}
	return m, m.check()
}

// check holds the rules shapes do not say: each block has its query, key and
// value projections, and every norm and projection but the head has a bias.
func (m *Model) check() error {
	for i, b := range m.Blocks {
		if err := b.(*nn.Block).Attn.Check(); err != nil {
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
	m := &Model{Config: c, Decoder: models.Decoder{OutputNorm: &nn.LayerNorm{Eps: c.NormEps},
		Vocab: c.VocabSize, Context: c.ContextLength, CacheWidth: c.KVHeads * c.HeadDim()}}
	for range c.Layers {
		// x = x + Attn(LayerNorm(x)); x = x + MLP(LayerNorm(x))
		m.Blocks = append(m.Blocks, &nn.Block{
			AttnNorm: &nn.LayerNorm{Eps: c.NormEps},
			Attn: nn.Attention{
				Heads: c.Heads, KVHeads: c.KVHeads, HeadDim: c.HeadDim(),
				RoPE: &nn.RoPE{Dim: c.HeadDim(), Base: c.RopeBase, NeoX: true},
			},
			FFNNorm: &nn.LayerNorm{Eps: c.NormEps},
			FFN:     &nn.MLP{},
		})
	}
	return m
}

// SetMetadata writes the model's configuration as GGUF metadata.
func (m *Model) SetMetadata(w *gguf.Writer) { m.Config.SetMetadata(w) }
