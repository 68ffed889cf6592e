// Fresh random weights, for training from scratch, and the family's
// registration.

package phi3

import (
	"github.com/toyml/toy/toy/models"
	"github.com/toyml/toy/toy/models/internal/builtin"
	"github.com/toyml/toy/toy/nn"
)

// NewRandom returns a model of shape c with GPT-2-style initial weights
// (models.Randomize): N(0, 0.02²) (the fused attn_qkv and ffn_up too), the
// projections into the residual stream scaled by 1/√(2L), norms at 1, and
// with c.RopeFactors both sets of LongRoPE factors at 1 (plain RoPE until a
// caller sets them). The same seed gives the same model.
func NewRandom(c Config, seed uint64) *Model {
	m := New(c)
	for _, b := range m.Blocks { // optional in nn.Attention: drawn once built
		b.(*nn.Block).Attn.QKV = &nn.Linear{}
	}
	in := models.Randomize(m, c, c.Layers, seed)
	if c.RopeFactors {
		m.RopeShort, m.RopeLong = in.Fill(1, c.RopeDim/2), in.Fill(1, c.RopeDim/2)
	}
	return m
}

func init() {
	models.Register(builtin.Family([]string{Arch}, Load, NewRandom, builtin.Card(readConfig, Config.card, New), nil))
}
