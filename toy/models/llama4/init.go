// Fresh random weights, for tests and training from scratch.

package llama4

import (
	"math"

	"github.com/toyml/toy/toy/models"
	"github.com/toyml/toy/toy/models/internal/builtin"
	"github.com/toyml/toy/toy/nn"
)

// NewRandom returns a model of shape c with GPT-2-style initial weights:
// N(0, 0.02²) matrices (the router and every expert too), the projections
// into the residual stream (attention output, the MLPs' and experts' down)
// scaled by 1/√(2L), norms at 1, no RoPE frequency factors. The same seed
// gives the same model.
func NewRandom(c Config, seed uint64) *Model {
	in := nn.NewInit(seed)
	const std = 0.02
	resid := std / math.Sqrt(2*float64(c.Layers))
	D, F, FE, E, q, kv := c.Embed, c.FFN, c.ExpertFFN, c.Experts, c.Heads*c.HeadDim, c.KVHeads*c.HeadDim
	m := New(c)
	m.Embed = &nn.Embedding{W: in.Normal(std, c.VocabSize, D)}
	for i := range m.Blocks {
		b := &m.Blocks[i]
		b.AttnNorm.(*nn.RMSNorm).W, b.FFNNorm.(*nn.RMSNorm).W = in.Fill(1, D), in.Fill(1, D)
		b.Attn.Q, b.Attn.K, b.Attn.V = in.Linear(q, D, std, false), in.Linear(kv, D, std, false), in.Linear(kv, D, std, false)
		b.Attn.O = in.Linear(D, q, resid, false)
		switch ffn := b.FFN.(type) {
		case *nn.SwiGLU:
			ffn.Gate, ffn.Up, ffn.Down = in.Linear(F, D, std, false), in.Linear(F, D, std, false), in.Linear(D, F, resid, false)
		case *nn.MoE:
			ffn.Router = in.Linear(E, D, std, false)
			ffn.Gate, ffn.Up, ffn.Down = in.Normal(std, E, FE, D), in.Normal(std, E, FE, D), in.Normal(resid, E, D, FE)
			ffn.SharedGate, ffn.SharedUp, ffn.SharedDown = in.Linear(FE, D, std, false), in.Linear(FE, D, std, false), in.Linear(D, FE, resid, false)
		}
	}
	m.OutputNorm.W = in.Fill(1, D)
	m.Output = &nn.Linear{W: m.Embed.W}
	if !c.TiedOutput {
		m.Output = in.Linear(c.VocabSize, D, std, false)
	}
	return m
}

func init() {
	models.Register(builtin.Family([]string{Arch}, Load, NewRandom, cardFromHeader, nil))
}
