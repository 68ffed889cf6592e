// Fresh random weights, for training from scratch, and the family's
// registration.

package phi2

import (
	"github.com/toyml/toy/toy/models"
	"github.com/toyml/toy/toy/models/internal/builtin"
	"github.com/toyml/toy/toy/nn"
)

// NewRandom returns a model of shape c with GPT-2-style initial weights
// (models.Randomize): N(0, 0.02²) for every matrix (a fused attn_qkv), the
// projections into the residual stream scaled by 1/√(2L), biases at 0,
// LayerNorm scales at 1. The same seed gives the same model.
func NewRandom(c Config, seed uint64) *Model {
	m := New(c)
	for _, b := range m.Blocks { // optional in nn.Attention: drawn once built
		b.(*Block).Attn.QKV = &nn.Linear{}
	}
	in := models.Randomize(m, c, c.Layers, seed)
	for _, b := range m.Blocks {
		b := b.(*Block)
		for _, l := range []*nn.Linear{b.Attn.QKV, b.Attn.O, b.MLP.Up, b.MLP.Down} {
			l.B = in.Fill(0, l.W.Rows())
		}
	}
	m.Output.B = in.Fill(0, c.VocabSize)
	return m
}

func init() {
	models.Register(builtin.Family([]string{Arch}, Load, NewRandom, builtin.Card(readConfig, Config.card, New), nil))
}
