// Fresh random weights, for training from scratch, and the family's
// registration.

package olmoe

import (
	"math"

	"github.com/toyml/toy/toy/models"
	"github.com/toyml/toy/toy/models/internal/builtin"
	"github.com/toyml/toy/toy/nn"
)

// NewRandom returns a model of shape c with GPT-2-style initial weights:
// N(0, 0.02²) everywhere (the router and every expert too), the projections
// into the residual stream (attention output, experts' down) scaled by
// 1/√(2L), norms at 1. The same seed gives the same model.
func NewRandom(c Config, seed uint64) *Model {
	in := nn.NewInit(seed)
	const std = 0.02
	resid := std / math.Sqrt(2*float64(c.Layers))
	D, F, E, q, kv := c.Embed, c.FFN, c.Experts, c.Heads*c.HeadDim, c.KVHeads*c.HeadDim
	m := New(c)
	m.Embed = &nn.Embedding{W: in.Normal(std, c.VocabSize, D)}
	for i := range m.Blocks {
		b := &m.Blocks[i]
		b.AttnNorm.(*nn.RMSNorm).W = in.Fill(1, D)
		b.Attn.Q, b.Attn.K, b.Attn.V = in.Linear(q, D, std, false), in.Linear(kv, D, std, false), in.Linear(kv, D, std, false)
		b.Attn.Norms.Q.(*nn.RMSNorm).W, b.Attn.Norms.K.(*nn.RMSNorm).W = in.Fill(1, q), in.Fill(1, kv)
		b.Attn.O = in.Linear(D, q, resid, false)
		b.FFNNorm.(*nn.RMSNorm).W = in.Fill(1, D)
		moe := m.MoE(i)
		moe.Router = in.Linear(E, D, std, false)
		moe.Gate, moe.Up, moe.Down = in.Normal(std, E, F, D), in.Normal(std, E, F, D), in.Normal(resid, E, D, F)
	}
	m.OutputNorm.W = in.Fill(1, D)
	m.Output = in.Linear(c.VocabSize, D, std, false)
	return m
}

func init() {
	models.Register(builtin.Family([]string{Arch}, Load, NewRandom, cardFromHeader, nil))
}
