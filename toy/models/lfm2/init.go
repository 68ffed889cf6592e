// Fresh random weights, for training from scratch, and the family's
// registration.

package lfm2

import (
	"math"

	"github.com/toyml/toy/toy/models"
	"github.com/toyml/toy/toy/models/internal/builtin"
	"github.com/toyml/toy/toy/nn"
)

// NewRandom returns a model of shape c with GPT-2-style initial weights
// (nn.Init.Randomize): N(0, 0.02²), the projections into the residual
// stream scaled by 1/√(2L), the convolution taps N(0, 1/k) (PyTorch's
// Conv1d scale), norms at 1, the experts' selection biases 0, the output
// head tied to the embedding. The same seed gives the same model.
func NewRandom(c Config, seed uint64) *Model {
	in, std, resid := models.GPT2Init(seed, c.Layers)
	m := New(c)
	m.Embed = &nn.Embedding{W: in.Normal(std, c.VocabSize, c.Embed)}
	for _, b := range m.Blocks { // block by block: a convolution's taps follow its projections
		b := b.(*Block)
		if a := b.Attn(); a != nil {
			a.Q, a.K, a.V = &nn.Linear{}, &nn.Linear{}, &nn.Linear{}
		}
		in.Randomize(b.Mixer, c, std, resid)
		if s := b.Conv(); s != nil {
			s.Conv = in.Normal(1/math.Sqrt(float64(c.ConvTaps)), c.Embed, c.ConvTaps)
		}
		in.Randomize(b, c, std, resid)
		if e, ok := b.FFN.(*nn.MoE); ok {
			e.Bias = in.Fill(0, c.Experts) // a constant: toy does not train it
		}
	}
	in.Randomize(m, c, std, resid)
	m.Output = &nn.Linear{W: m.Embed.W}
	return m
}

func init() {
	models.Register(builtin.Family(Archs, Load, NewRandom, builtin.Card(readConfig, Config.card, New), ConfigFromCard))
}
