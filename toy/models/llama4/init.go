// Fresh random weights, for tests and training from scratch.

package llama4

import (
	"github.com/toyml/toy/toy/models"
	"github.com/toyml/toy/toy/models/internal/builtin"
	"github.com/toyml/toy/toy/nn"
)

// NewRandom returns a model of shape c with GPT-2-style initial weights
// (models.Randomize): N(0, 0.02²) matrices (the router and every expert
// too), the projections into the residual stream scaled by 1/√(2L), norms
// at 1, no RoPE frequency factors. The same seed gives the same model.
func NewRandom(c Config, seed uint64) *Model {
	m := New(c)
	for _, b := range m.Blocks { // the optional layers llama4 has, for Randomize to draw
		b := b.(*nn.Block)
		b.Attn.Q, b.Attn.K, b.Attn.V = &nn.Linear{}, &nn.Linear{}, &nn.Linear{}
		if moe, ok := b.FFN.(*nn.MoE); ok {
			moe.SharedGate, moe.SharedUp, moe.SharedDown = &nn.Linear{}, &nn.Linear{}, &nn.Linear{}
		}
	}
	models.Randomize(m, c, c.Layers, seed)
	return m
}

func init() {
	models.Register(builtin.Family([]string{Arch}, Load, NewRandom, builtin.Card(readConfig, Config.card, New), nil))
}
