// Fresh random weights, for tests and training from scratch.

package gptoss

import (
	"math"

	"github.com/toyml/toy/toy/models"
	"github.com/toyml/toy/toy/models/internal/builtin"
	"github.com/toyml/toy/toy/nn"
)

// NewRandom returns a model of shape c with GPT-2-style initial weights:
// N(0, 0.02²) matrices (the router and every expert too), the projections
// into the residual stream (attention output, experts' down) scaled by
// 1/√(2L), zero biases and sinks, norms at 1. The same seed gives the same
// model.
func NewRandom(c Config, seed uint64) *Model {
	in := nn.NewInit(seed)
	const std = 0.02
	resid := std / math.Sqrt(2*float64(c.Layers))
	D, F, E, q, kv := c.Embed, c.FFN, c.Experts, c.Heads*c.HeadDim, c.KVHeads*c.HeadDim
	m := New(c)
	m.Embed = &nn.Embedding{W: in.Normal(std, c.VocabSize, D)}
	for i := range m.Blocks {
		b := &m.Blocks[i]
		b.AttnNorm.W, b.MoENorm.W = in.Fill(1, D), in.Fill(1, D)
		b.Attn.Q, b.Attn.K, b.Attn.V = in.Linear(q, D, std, true), in.Linear(kv, D, std, true), in.Linear(kv, D, std, true)
		b.Attn.O = in.Linear(D, q, resid, true)
		b.Sinks = in.Fill(0, c.Heads)
		b.Attn.Options.Sinks = b.Sinks
		moe := b.MoE
		moe.Router = in.Linear(E, D, std, true)
		moe.Gate, moe.Up, moe.Down = in.Normal(std, E, F, D), in.Normal(std, E, F, D), in.Normal(resid, E, D, F)
		moe.GateBias, moe.UpBias, moe.DownBias = in.Fill(0, E, F), in.Fill(0, E, F), in.Fill(0, E, D)
	}
	m.OutputNorm.W = in.Fill(1, D)
	m.Output = in.Linear(c.VocabSize, D, std, false)
	return m
}

func init() {
	models.Register(builtin.Family([]string{Arch}, Load, NewRandom, cardFromHeader, nil))
}
