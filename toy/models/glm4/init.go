// Fresh random weights, for training from scratch, and the family's
// registration.

package glm4

import (
	"math"

	"github.com/toyml/toy/toy/models"
	"github.com/toyml/toy/toy/models/internal/builtin"
	"github.com/toyml/toy/toy/nn"
	"github.com/toyml/toy/toy/tensor"
)

// NewRandom returns a model of shape c with GPT-2-style initial weights:
// N(0, 0.02²) for the projections, the router and the experts, those into
// the residual stream (attention output, feed-forward down projections)
// scaled by 1/√(2L); biases 0; norm gains 1; the experts' choice bias 0 (a
// constant, not trained); the output head tied to the embedding when
// c.TiedOutput. The same seed gives the same model.
func NewRandom(c Config, seed uint64) *Model {
	in := nn.NewInit(seed)
	const std = 0.02
	resid := std / math.Sqrt(2*float64(c.Layers))
	D, F, dh := c.Embed, c.FFN, c.HeadDim
	q, kv := c.Heads*dh, c.KVHeads*dh
	m := New(c)
	m.Embed = &nn.Embedding{W: in.Normal(std, c.VocabSize, D)}
	m.Output = &nn.Linear{W: m.Embed.W}
	if !c.TiedOutput {
		m.Output = in.Linear(c.VocabSize, D, std, false)
	}
	for i := range m.Blocks {
		b := &m.Blocks[i]
		b.AttnNorm.W = in.Fill(1, D)
		a := &b.Attn
		a.Q, a.K, a.V = in.Linear(q, D, std, c.QKVBias), in.Linear(kv, D, std, c.QKVBias), in.Linear(kv, D, std, c.QKVBias)
		a.O = in.Linear(D, q, resid, false)
		if c.QKNorm {
			a.Norms.Q.(*nn.RMSNorm).W, a.Norms.K.(*nn.RMSNorm).W = in.Fill(1, dh), in.Fill(1, dh)
		}
		switch ffn := b.FFN.(type) {
		case *MLP:
			b.AttnPostNorm.W, b.FFNNorm.W, b.FFNPostNorm.W = in.Fill(1, D), in.Fill(1, D), in.Fill(1, D)
			ffn.GateUp, ffn.Down = in.Linear(2*F, D, std, false), in.Linear(D, F, resid, false)
		case *nn.SwiGLU:
			b.PreFFNNorm.W = in.Fill(1, D)
			ffn.Gate, ffn.Up, ffn.Down = in.Linear(F, D, std, false), in.Linear(F, D, std, false), in.Linear(D, F, resid, false)
		case *nn.MoE:
			b.PreFFNNorm.W = in.Fill(1, D)
			E, Fe, Fs := c.Experts, c.ExpertFFN, c.SharedExperts*c.ExpertFFN
			ffn.Router, ffn.Bias = in.Linear(E, D, std, false), tensor.New(E)
			ffn.Gate, ffn.Up, ffn.Down = in.Normal(std, E, Fe, D), in.Normal(std, E, Fe, D), in.Normal(resid, E, D, Fe)
			if Fs > 0 {
				ffn.SharedGate, ffn.SharedUp = in.Linear(Fs, D, std, false), in.Linear(Fs, D, std, false)
				ffn.SharedDown = in.Linear(D, Fs, resid, false)
			}
		}
	}
	m.OutputNorm.W = in.Fill(1, D)
	return m
}

func init() {
	models.Register(builtin.Family(Archs, Load, NewRandom, cardFromHeader, ConfigFromCard))
}
