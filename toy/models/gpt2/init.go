// Fresh random weights, for training from scratch, and the family's
// registration.

package gpt2

import (
	"cmp"

	"github.com/toyml/toy/toy/gguf"
	"github.com/toyml/toy/toy/models"
	"github.com/toyml/toy/toy/models/internal/builtin"
	"github.com/toyml/toy/toy/nn"
)

// NewRandom returns a model of shape c initialised as GPT-2 was: N(0, 0.02²)
// weights (position embeddings 0.01), residual projections scaled by
// 1/√(2L), LayerNorm gains 1 and all biases 0; the output head is the token
// embedding when c.TiedOutput is set (as in GPT-2), else its own N(0, 0.02²)
// matrix. The same seed gives the same model.
func NewRandom(c Config, seed uint64) *Model {
	// As models.Randomize, but the token embedding is drawn before Pos,
	// which the walk meets first.
	in, std, resid := models.GPT2Init(seed, c.Layers)
	m := New(c)
	m.Embed = &nn.Embedding{W: in.Normal(std, c.VocabSize, c.Embed)}
	for _, b := range m.Blocks { // optional in nn.Attention: drawn once built
		b.(*nn.Block).Attn.QKV = &nn.Linear{}
	}
	in.Randomize(m, c, std, resid)
	for _, b := range m.Blocks {
		b, mlp := b.(*nn.Block), b.(*nn.Block).FFN.(*nn.MLP)
		for _, l := range []*nn.Linear{b.Attn.QKV, b.Attn.O, mlp.Up, mlp.Down} {
			l.B = in.Fill(0, l.W.Rows())
		}
	}
	if !c.TiedOutput {
		m.Output = in.Linear(c.VocabSize, c.Embed, std, false)
	}
	models.Tie(m)
	return m
}

func init() {
	read := func(f *gguf.File) (Config, []string, error) { c, err := ConfigFromGGUF(f); return c, nil, err }
	f := builtin.Family([]string{"gpt2"}, Load, NewRandom, builtin.Card(read, Config.card, New), nil)
	f.Sized = func(s models.Shape) any {
		return Config{VocabSize: s.VocabSize, ContextLength: s.ContextLength, Embed: s.Embed, Layers: s.Layers,
			FFN: cmp.Or(s.FFN, 4*s.Embed), Heads: s.Heads, NormEps: 1e-5, TiedOutput: true}
	}
	models.Register(f)
}
