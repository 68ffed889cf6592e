// Fresh random weights, for training from scratch, and the family's
// registration.

package starcoder2

import (
	"github.com/toyml/toy/toy/models"
	"github.com/toyml/toy/toy/models/internal/builtin"
	"github.com/toyml/toy/toy/nn"
)

// NewRandom returns a model of shape c with GPT-2-style initial weights
// (models.Randomize): N(0, 0.02²), the projections into the residual stream
// scaled by 1/√(2L), LayerNorm gains 1 and every bias 0. The same seed
// gives the same model.
func NewRandom(c Config, seed uint64) *Model {
	m := New(c)
	for _, b := range m.Blocks {
		a := &b.(*nn.Block).Attn
		a.Q, a.K, a.V = &nn.Linear{}, &nn.Linear{}, &nn.Linear{}
	}
	in := models.Randomize(m, c, c.Layers, seed)
	for _, b := range m.Blocks {
		a, f := &b.(*nn.Block).Attn, b.(*nn.Block).FFN.(*nn.MLP)
		for _, l := range []*nn.Linear{a.Q, a.K, a.V, a.O, f.Up, f.Down} {
			l.B = in.Fill(0, l.W.Rows())
		}
	}
	return m
}

func init() {
	models.Register(builtin.Family([]string{Arch}, Load, NewRandom, builtin.Card(readConfig, Config.card, New), nil))
}
