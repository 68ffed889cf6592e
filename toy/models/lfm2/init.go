// Fresh random weights, for training from scratch, and the family's
// registration.

package lfm2

import (
	"math"

	"github.com/toyml/toy/toy/models"
	"github.com/toyml/toy/toy/models/internal/builtin"
	"github.com/toyml/toy/toy/nn"
)

// NewRandom returns a model of shape c with GPT-2-style initial weights:
// N(0, 0.02²) everywhere, the projections into the residual stream
// (attention and convolution output, feed-forward down) scaled by 1/√(2L),
// the convolution taps N(0, 1/k) (PyTorch's Conv1d scale), RMSNorm gains 1,
// the experts' selection biases 0, the output head tied to the embedding. The same seed gives the same model.
func NewRandom(c Config, seed uint64) *Model {
	in := nn.NewInit(seed)
	const std = 0.02
	resid := std / math.Sqrt(2*float64(c.Layers))
	D, F, dh := c.Embed, c.FFN, c.HeadDim()
	m := New(c)
	m.Embed = &nn.Embedding{W: in.Normal(std, c.VocabSize, D)}
	m.Output = &nn.Linear{W: m.Embed.W}
	for i := range m.Blocks {
		b := &m.Blocks[i]
		b.Norm.W, b.FFNNorm.W = in.Fill(1, D), in.Fill(1, D)
		if s := b.Conv(); s != nil {
			s.In, s.Out = in.Linear(3*D, D, std, false), in.Linear(D, D, resid, false)
			s.Conv = in.Normal(1/math.Sqrt(float64(c.ConvTaps)), D, c.ConvTaps)
		} else {
			a, kv := b.Attn(), c.KVHeads[i]*dh
			a.Q, a.K, a.V = in.Linear(D, D, std, false), in.Linear(kv, D, std, false), in.Linear(kv, D, std, false)
			a.O = in.Linear(D, D, resid, false)
			a.Norms.Q.(*nn.RMSNorm).W, a.Norms.K.(*nn.RMSNorm).W = in.Fill(1, dh), in.Fill(1, dh)
		}
		switch ffn := b.FFN.(type) {
		case *nn.SwiGLU:
			ffn.Gate, ffn.Up, ffn.Down = in.Linear(F, D, std, false), in.Linear(F, D, std, false), in.Linear(D, F, resid, false)
		case *nn.MoE:
			E, FE := c.Experts, c.ExpertFFN
			ffn.Router = in.Linear(E, D, std, false)
			ffn.Gate, ffn.Up, ffn.Down = in.Normal(std, E, FE, D), in.Normal(std, E, FE, D), in.Normal(resid, E, D, FE)
			ffn.Bias = in.Fill(0, E) // a constant: toy does not train it
		}
	}
	m.OutputNorm.W = in.Fill(1, D)
	return m
}

func init() {
	models.Register(builtin.Family(Archs, Load, NewRandom, cardFromHeader, ConfigFromCard))
}
