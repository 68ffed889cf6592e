// Fresh random weights, for tests and training from scratch.

package gptoss

import (
	"github.com/toyml/toy/toy/models"
	"github.com/toyml/toy/toy/models/internal/builtin"
	"github.com/toyml/toy/toy/nn"
)

// NewRandom returns a model of shape c with GPT-2-style initial weights
// (models.Randomize): N(0, 0.02²) matrices (the router and every expert
// too), the projections into the residual stream scaled by 1/√(2L), norms
// at 1; zero biases and sinks. The same seed gives the same model.
func NewRandom(c Config, seed uint64) *Model {
	m := New(c)
	for _, b := range m.Blocks {
		a := &b.(*Block).Attn
		a.Q, a.K, a.V = &nn.Linear{}, &nn.Linear{}, &nn.Linear{}
	}
	in := models.Randomize(m, c, c.Layers, seed)
	for _, b := range m.Blocks {
		b := b.(*Block)
		a, moe := &b.Attn, b.MoE
		for _, l := range []*nn.Linear{a.Q, a.K, a.V, a.O, moe.Router} {
			l.B = in.Fill(0, l.W.Rows())
		}
		b.Sinks = in.Fill(0, c.Heads)
		a.Options.Sinks = b.Sinks
		moe.GateBias, moe.UpBias, moe.DownBias = in.Fill(0, c.Experts, c.FFN), in.Fill(0, c.Experts, c.FFN), in.Fill(0, c.Experts, c.Embed)
	}
	return m
}

func init() {
	models.Register(builtin.Family([]string{Arch}, Load, NewRandom, builtin.Card(readConfig, Config.card, New), nil))
}
