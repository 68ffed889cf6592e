// Fresh random weights, for training from scratch, and the family's
// registration.

package qwen35

import (
	"math"

	"github.com/toyml/toy/toy/models"
	"github.com/toyml/toy/toy/models/internal/builtin"
	"github.com/toyml/toy/toy/nn"
)

// NewRandom returns a model of shape c with GPT-2-style initial weights:
// N(0, 0.02²) for the projections, those into the residual stream
// (attention, delta-rule and feed-forward outputs) scaled by 1/√(2L); the
// convolution taps N(0, 1/k) (PyTorch's Conv1d scale); the decay rates
// a = −1 … −16 spread over the value heads and their biases 0 (as
// Qwen3.5's own initialisation, A_log = log U(1, 16)); norm gains 1; the
// output head tied to the embedding when c.TiedOutput; in qwen35moe and
// qwen3next the experts and the shared expert as the SwiGLU, their router
// N(0, 0.02²). The same seed gives the same model. The draws keep their own
// order (the head after the embedding, each block's feed-forward layer
// before its mixer), which models.Randomize's field order would change.
func NewRandom(c Config, seed uint64) *Model {
	in, std, resid := models.GPT2Init(seed, c.Layers)
	D, F, dh := c.Embed, c.FFN, c.HeadDim
	m := New(c)
	m.Embed = &nn.Embedding{W: in.Normal(std, c.VocabSize, D)}
	m.Output = &nn.Linear{W: m.Embed.W}
	if !c.TiedOutput {
		m.Output = in.Linear(c.VocabSize, D, std, false)
	}
	for _, b := range m.Blocks {
		b := b.(*Block)
		b.Norm.W, b.FFNNorm.W = in.Fill(1, D), in.Fill(1, D)
		switch ffn := b.FFN.(type) {
		case *nn.SwiGLU:
			ffn.Gate, ffn.Up, ffn.Down = in.Linear(F, D, std, false), in.Linear(F, D, std, false), in.Linear(D, F, resid, false)
		case *nn.MoE:
			E, FE := c.Experts, c.ExpertFFN
			ffn.Router = in.Linear(E, D, std, false)
			ffn.Gate, ffn.Up, ffn.Down = in.Normal(std, E, FE, D), in.Normal(std, E, FE, D), in.Normal(resid, E, D, FE)
			if S := c.SharedFFN; S > 0 {
				ffn.SharedGate, ffn.SharedUp = in.Linear(S, D, std, false), in.Linear(S, D, std, false)
				ffn.SharedDown, ffn.SharedWeight = in.Linear(D, S, resid, false), in.Normal(std, D)
			}
		}
		if d := b.Delta(); d != nil {
			C, Hv, v := c.ConvChannels(), c.VHeads, c.VHeads*c.StateDim
			d.QKV, d.Z = in.Linear(C, D, std, false), in.Linear(v, D, std, false)
			d.Conv = in.Normal(1/math.Sqrt(float64(c.ConvTaps)), C, c.ConvTaps)
			if c.Arch == ArchNext {
				d.BA = in.Linear(2*Hv, D, std, false)
			} else {
				d.Beta, d.Alpha = in.Linear(Hv, D, std, false), in.Linear(Hv, D, std, false)
			}
			d.DT, d.A = in.Fill(0, Hv), in.Fill(0, Hv)
			a := d.A.Data()
			for h := range a {
				a[h] = -float32(1 + 15*float64(h)/float64(max(Hv-1, 1)))
			}
			d.Norm.W = in.Fill(1, c.StateDim)
			d.Out = in.Linear(D, v, resid, false)
			continue
		}
		a, q, kv := b.Attn(), c.Heads*dh, c.KVHeads*dh
		a.Q, a.K, a.V = in.Linear(2*q, D, std, false), in.Linear(kv, D, std, false), in.Linear(kv, D, std, false)
		a.O = in.Linear(D, q, resid, false)
		a.Norms.Q.(*nn.RMSNorm).W, a.Norms.K.(*nn.RMSNorm).W = in.Fill(1, dh), in.Fill(1, dh)
	}
	m.OutputNorm.(*nn.RMSNorm).W = in.Fill(1, D)
	return m
}

func init() {
	models.Register(builtin.Family(Archs, Load, NewRandom, builtin.Card(readConfig, Config.card, New), ConfigFromCard))
}
