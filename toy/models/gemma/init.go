// Fresh random weights, for training from scratch, and the family's
// registration.

package gemma

import (
	"math"

	"github.com/toyml/toy/toy/models"
	"github.com/toyml/toy/toy/models/internal/builtin"
	"github.com/toyml/toy/toy/nn"
)

// NewRandom returns a model of shape c with GPT-2-style initial weights:
// N(0, 0.02²) everywhere, the projections into the residual stream (attention
// output, feed-forward down) scaled by 1/√(2L), every norm at 1 (Gemma's
// files store 1 + w: this is w = 0). The same seed gives the same model.
func NewRandom(c Config, seed uint64) *Model {
	in := nn.NewInit(seed)
	const std = 0.02
	resid := std / math.Sqrt(2*float64(c.Layers))
	D, F, q, kv := c.Embed, c.FFN, c.Heads*c.HeadDim, c.KVHeads*c.HeadDim
	m := New(c)
	m.Embed = &nn.Embedding{W: in.Normal(std, c.VocabSize, D)}
	for i := range m.Blocks {
		b := &m.Blocks[i]
		for _, n := range []nn.Layer{b.AttnNorm, b.AttnPostNorm, b.FFNNorm, b.FFNPostNorm} {
			if n != nil {
				n.(*nn.RMSNorm).W = in.Fill(1, D)
			}
		}
		if c.QKNorm() {
			b.Attn.Norms.Q.(*nn.RMSNorm).W, b.Attn.Norms.K.(*nn.RMSNorm).W = in.Fill(1, c.HeadDim), in.Fill(1, c.HeadDim)
		}
		b.Attn.Q, b.Attn.K, b.Attn.V = in.Linear(q, D, std, false), in.Linear(kv, D, std, false), in.Linear(kv, D, std, false)
		b.Attn.O = in.Linear(D, q, resid, false)
		ffn := b.FFN.(*nn.GeGLU)
		ffn.Gate, ffn.Up, ffn.Down = in.Linear(F, D, std, false), in.Linear(F, D, std, false), in.Linear(D, F, resid, false)
	}
	m.OutputNorm.W = in.Fill(1, D)
	m.Output = &nn.Linear{W: m.Embed.W}
	if !c.TiedOutput {
		m.Output = in.Linear(c.VocabSize, D, std, false)
	}
	return m
}

func init() {
	models.Register(builtin.Family(Archs, Load, NewRandom, cardFromHeader, nil))
}
