// Fresh random weights, for training from scratch, and the family's
// registration.

package phi2

import (
	"math"

	"github.com/toyml/toy/toy/models"
	"github.com/toyml/toy/toy/models/internal/builtin"
	"github.com/toyml/toy/toy/nn"
)

// NewRandom returns a model of shape c with GPT-2-style initial weights:
// N(0, 0.02²) for every matrix, the projections into the residual stream
// (attention output, MLP down) scaled by 1/√(2L), biases at 0, LayerNorm
// scales at 1. The same seed gives the same model.
func NewRandom(c Config, seed uint64) *Model {
	in := nn.NewInit(seed)
	const std = 0.02
	resid := std / math.Sqrt(2*float64(c.Layers))
	D, F, q, kv := c.Embed, c.FFN, c.Heads*c.HeadDim, c.KVHeads*c.HeadDim
	m := New(c)
	m.Embed = &nn.Embedding{W: in.Normal(std, c.VocabSize, D)}
	for i := range m.Blocks {
		b := &m.Blocks[i]
		b.Norm.W, b.Norm.B = in.Fill(1, D), in.Fill(0, D)
		b.Attn.QKV = in.Linear(q+2*kv, D, std, true)
		b.Attn.O = in.Linear(D, q, resid, true)
		b.MLP.Up, b.MLP.Down = in.Linear(F, D, std, true), in.Linear(D, F, resid, true)
	}
	m.OutputNorm.W, m.OutputNorm.B = in.Fill(1, D), in.Fill(0, D)
	m.Output = in.Linear(c.VocabSize, D, std, true)
	return m
}

func init() {
	models.Register(builtin.Family([]string{Arch}, Load, NewRandom, cardFromHeader, nil))
}
