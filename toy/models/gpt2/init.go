// Fresh random weights, for training from scratch, and the family's
// registration.

package gpt2

import (
	"cmp"
	"math"

	"github.com/toyml/toy/toy/models"
	"github.com/toyml/toy/toy/models/internal/builtin"
	"github.com/toyml/toy/toy/nn"
)

// NewRandom returns a model of shape c initialised as GPT-2 was: N(0, 0.02²)
// weights (position embeddings 0.01), residual projections scaled by
// 1/√(2L), LayerNorm gains 1 and all biases 0; the output head is the token
// embedding when c.TiedOutput is set (as in GPT-2), else its own N(0, 0.02²)
// matrix. The same seed gives the same model.
func NewRandom(c Config, seed uint64) *Model {
	in := nn.NewInit(seed)
	const std = 0.02
	resid := std / math.Sqrt(2*float64(c.Layers))
	D, F := c.Embed, c.FFN
	norm := func() *nn.LayerNorm { return &nn.LayerNorm{W: in.Fill(1, D), B: in.Fill(0, D), Eps: c.NormEps} }
	m := New(c)
	m.Embed = &nn.Embedding{W: in.Normal(std, c.VocabSize, D)}
	m.Pos = &nn.Embedding{W: in.Normal(0.01, c.ContextLength, D)}
	for i := range m.Blocks {
		b := &m.Blocks[i]
		b.AttnNorm, b.FFNNorm = norm(), norm()
		b.Attn.QKV = in.Linear(3*D, D, std, true)
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
	f := builtin.Family([]string{"gpt2"}, Load, NewRandom, cardFromHeader, nil)
	f.Sized = func(s models.Shape) any {
		return Config{VocabSize: s.VocabSize, ContextLength: s.ContextLength, Embed: s.Embed, Layers: s.Layers,
			FFN: cmp.Or(s.FFN, 4*s.Embed), Heads: s.Heads, NormEps: 1e-5, TiedOutput: true}
	}
	models.Register(f)
}
