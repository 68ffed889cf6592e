// Fresh random weights, for training from scratch, and the family's
// registration.

package olmo2

import (
	"math"

	"github.com/toyml/toy/toy/models"
	"github.com/toyml/toy/toy/models/internal/builtin"
	"github.com/toyml/toy/toy/nn"
)

// NewRandom returns a model of shape c with GPT-2-style initial weights:
// N(0, 0.02²) everywhere, the projections into the residual stream
// (attention output, feed-forward down) scaled by 1/√(2L), norms at 1. The
// same seed gives the same model.
func NewRandom(c Config, seed uint64) *Model {
	in := nn.NewInit(seed)
	const std = 0.02
	resid := std / math.Sqrt(2*float64(c.Layers))
	D, F, kv := c.Embed, c.FFN, c.KVHeads*c.HeadDim()
	m := New(c)
	m.Embed = &nn.Embedding{W: in.Normal(std, c.VocabSize, D)}
	for i := range m.Blocks {
		b := &m.Blocks[i]
		b.Attn.Q, b.Attn.K, b.Attn.V = in.Linear(D, D, std, false), in.Linear(kv, D, std, false), in.Linear(kv, D, std, false)
		b.Attn.Norms.Q.(*nn.RMSNorm).W, b.Attn.Norms.K.(*nn.RMSNorm).W = in.Fill(1, D), in.Fill(1, kv)
		b.Attn.O = in.Linear(D, D, resid, false)
		b.AttnPostNorm.(*nn.RMSNorm).W = in.Fill(1, D)
		b.FFN = &nn.SwiGLU{Gate: in.Linear(F, D, std, false), Up: in.Linear(F, D, std, false), Down: in.Linear(D, F, resid, false)}
		b.FFNPostNorm.(*nn.RMSNorm).W = in.Fill(1, D)
	}
	m.OutputNorm.W = in.Fill(1, D)
	m.Output = in.Linear(c.VocabSize, D, std, false)
	return m
}

func init() {
	models.Register(builtin.Family([]string{Arch}, Load, NewRandom, cardFromHeader, nil))
}
