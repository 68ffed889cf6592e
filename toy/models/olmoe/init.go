// Fresh random weights, for training from scratch, and the family's
// registration.

package olmoe

import (
	"github.com/toyml/toy/toy/models"
	"github.com/toyml/toy/toy/models/internal/builtin"
	"github.com/toyml/toy/toy/nn"
)

// NewRandom returns a model of shape c with GPT-2-style initial weights
// (models.Randomize): N(0, 0.02²) (the router and every expert too), the
// projections into the residual stream scaled by 1/√(2L), norms at 1; the
// query and key norms span the whole projections. The same seed gives the
// same model.
func NewRandom(c Config, seed uint64) *Model {
	m := New(c)
	in := models.Randomize(m, c, c.Layers, seed)
	for _, b := range m.Blocks {
		n := b.(*nn.Block).Attn.Norms
		n.Q.(*nn.RMSNorm).W, n.K.(*nn.RMSNorm).W = in.Fill(1, c.Heads*c.HeadDim), in.Fill(1, c.KVHeads*c.HeadDim)
	}
	return m
}

func init() {
	models.Register(builtin.Family([]string{Arch}, Load, NewRandom, builtin.Card(readConfig, Config.card, New), nil))
}
