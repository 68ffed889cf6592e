// Fresh random weights, for training from scratch, and the family's
// registration.

package cohere

import (
	"github.com/toyml/toy/toy/models"
	"github.com/toyml/toy/toy/models/internal/builtin"
	"github.com/toyml/toy/toy/nn"
)

// NewRandom returns a model of shape c with GPT-2-style initial weights
// (models.Randomize): N(0, 0.02²), the projections into the residual stream
// scaled by 1/√(2L), LayerNorm gains (Command R+'s per-head ones too) 1 and
// no offsets; the output head is the token embedding. The same seed gives the
// same model.
func NewRandom(c Config, seed uint64) *Model {
	m := New(c)
	for _, b := range m.Blocks { // optional in nn.Attention: drawn once built
		a := &b.(*Block).Attn
		a.Q, a.K, a.V = &nn.Linear{}, &nn.Linear{}, &nn.Linear{}
	}
	in := models.Randomize(m, c, c.Layers, seed)
	m.Output = &nn.Linear{W: m.Embed.W} // always tied (c has no TiedOutput: Randomize drew a head, last)
	m.OutputNorm.(*nn.LayerNorm).B = nil
	for _, b := range m.Blocks { // LayerNorms without offsets
		b := b.(*Block)
		b.Norm.B = nil
		if c.QKNorm { // a row per head
			q, k := b.Attn.Norms.Q.(*nn.LayerNorm), b.Attn.Norms.K.(*nn.LayerNorm)
			q.W, q.B, k.W, k.B = in.Fill(1, c.Heads, c.HeadDim()), nil, in.Fill(1, c.KVHeads, c.HeadDim()), nil
		}
	}
	return m
}

func init() {
	models.Register(builtin.Family(Archs, Load, NewRandom, builtin.Card(readConfig, Config.card, New), nil))
}
