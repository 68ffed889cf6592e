// Fresh random weights, for training from scratch, and the family's
// registration.

package starcoder2

import (
	"math"

	"github.com/toyml/toy/toy/models"
	"github.com/toyml/toy/toy/models/internal/builtin"
	"github.com/toyml/toy/toy/nn"
)

// NewRandom returns a model of shape c with GPT-2-style initial weights:
// N(0, 0.02²) everywhere, the projections into the residual stream
// (attention output, MLP down) scaled by 1/√(2L), LayerNorm gains 1 and
// every bias 0. The same seed gives the same model.
func NewRandom(c Config, seed uint64) *Model {
	in := nn.NewInit(seed)
	const std = 0.02
	resid := std / math.Sqrt(2*float64(c.Layers))
	D, F, kv := c.Embed, c.FFN, c.KVHeads*c.HeadDim()
	norm := func() *nn.LayerNorm { return &nn.LayerNorm{W: in.Fill(1, D), B: in.Fill(0, D), Eps: c.NormEps} }
	m := New(c)
	m.Embed = &nn.Embedding{W: in.Normal(std, c.VocabSize, D)}
	for i := range m.Blocks {
		b := &m.Blocks[i]
		b.AttnNorm, b.FFNNorm = norm(), norm()
		b.Attn.Q, b.Attn.K, b.Attn.V = in.Linear(D, D, std, true), in.Linear(kv, D, std, true), in.Linear(kv, D, std, true)
		b.Attn.O = in.Linear(D, D, resid, true)
		b.FFN = &nn.MLP{Up: in.Linear(F, D, std, true), Down: in.Linear(D, F, resid, true)}
	}
	m.OutputNorm = norm()
	m.Output = &nn.Linear{W: m.Embed.W}
	if !c.TiedOutput {
		m.Output = in.Linear(c.VocabSize, D, std, false)
	}
	return m
}

func init() {
	models.Register(builtin.Family([]string{Arch}, Load, NewRandom, cardFromHeader, nil))
}
