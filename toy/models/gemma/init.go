// Fresh random weights, for training from scratch, and the family's
// registration.

package gemma

import (
	"github.com/toyml/toy/toy/gguf"
	"github.com/toyml/toy/toy/models"
	"github.com/toyml/toy/toy/models/internal/builtin"
	"github.com/toyml/toy/toy/nn"
)

// NewRandom returns a model of shape c with GPT-2-style initial weights
// (models.Randomize): N(0, 0.02²), the projections into the residual stream
// scaled by 1/√(2L), every norm at 1 (Gemma's files store 1 + w: this is
// w = 0). The same seed gives the same model.
func NewRandom(c Config, seed uint64) *Model {
	m := New(c)
	for _, b := range m.Blocks { // optional in nn.Attention: drawn once built
		a := &b.(*nn.Block).Attn
		a.Q, a.K, a.V = &nn.Linear{}, &nn.Linear{}, &nn.Linear{}
	}
	models.Randomize(m, c, c.Layers, seed)
	return m
}

func init() {
	read := func(f *gguf.File) (Config, []string, error) { c, err := ConfigFromGGUF(f); return c, nil, err }
	models.Register(builtin.Family(Archs, Load, NewRandom, builtin.Card(read, Config.card, New), nil))
}
