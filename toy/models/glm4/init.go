// Fresh random weights, for training from scratch, and the family's
// registration.

package glm4

import (
	"github.com/toyml/toy/toy/models"
	"github.com/toyml/toy/toy/models/internal/builtin"
	"github.com/toyml/toy/toy/nn"
	"github.com/toyml/toy/toy/tensor"
)

// NewRandom returns a model of shape c with GPT-2-style initial weights
// (nn.Init.Randomize): N(0, 0.02²) for the projections, the router and the
// experts, those into the residual stream scaled by 1/√(2L); biases 0; norm
// gains 1; the experts' choice bias 0 (a constant, not trained); the output
// head tied to the embedding when c.TiedOutput, else drawn right after it,
// before the blocks. The same seed gives the same model.
func NewRandom(c Config, seed uint64) *Model {
	in, std, resid := models.GPT2Init(seed, c.Layers)
	m := New(c)
	m.Embed = &nn.Embedding{W: in.Normal(std, c.VocabSize, c.Embed)}
	if !c.TiedOutput {
		m.Output = in.Linear(c.VocabSize, c.Embed, std, false)
	}
	q, kv := c.Heads*c.HeadDim, c.KVHeads*c.HeadDim
	for i, b := range m.Blocks {
		a := &b.(*Block).Attn
		a.Q, a.K, a.V = &nn.Linear{}, &nn.Linear{}, &nn.Linear{}
		if c.QKVBias {
			a.Q.B, a.K.B, a.V.B = in.Fill(0, q), in.Fill(0, kv), in.Fill(0, kv)
		}
		if moe := m.MoE(i); moe != nil {
			moe.Bias = tensor.New(c.Experts)
			if c.SharedExperts > 0 {
				moe.SharedGate, moe.SharedUp, moe.SharedDown = &nn.Linear{}, &nn.Linear{}, &nn.Linear{}
			}
		}
	}
	in.Randomize(m, c, std, resid)
	models.Tie(m)
	return m
}

func init() {
	models.Register(builtin.Family(Archs, Load, NewRandom, builtin.Card(readConfig, Config.card, New), ConfigFromCard))
}
