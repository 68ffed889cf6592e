// Fresh random weights, for training from scratch, and the family's
// registration.

package deepseek2

import (
	"github.com/toyml/toy/toy/models"
	"github.com/toyml/toy/toy/models/internal/builtin"
	"github.com/toyml/toy/toy/nn"
)

// NewRandom returns a model of shape c with GPT-2-style initial weights:
// N(0, 0.02²) everywhere (router, experts and the low-rank factors too),
// the projections into the residual stream (attention output, the dense,
// routed and shared experts' down projections) scaled by 1/√(2L), norms at
// 1, and an expert bias (V3) of zeros. The same seed gives the same model.
func NewRandom(c Config, seed uint64) *Model {
	in, std, resid := models.GPT2Init(seed, c.Layers)
	D, H, Dk, Dv, Dr, R, Rq := c.Embed, c.Heads, c.KeyDim, c.ValueDim, c.RopeDim, c.KVLoraRank, c.QLoraRank
	m := New(c)
	m.Embed = &nn.Embedding{W: in.Normal(std, c.VocabSize, D)}
	for _, b := range m.Blocks {
		b := b.(*Block)
		a := &b.Attn
		b.AttnNorm.W = in.Fill(1, D)
		if Rq > 0 {
			a.QA, a.QB = in.Linear(Rq, D, std, false), in.Linear(H*Dk, Rq, std, false)
			a.QANorm.W = in.Fill(1, Rq)
		} else {
			a.Q = in.Linear(H*Dk, D, std, false)
		}
		a.KVA = in.Linear(R+Dr, D, std, false)
		a.KVANorm.W = in.Fill(1, R)
		if c.SplitKVB {
			a.KB, a.VB = in.Normal(std, H, R, Dk-Dr), in.Normal(std, H, Dv, R)
		} else {
			a.KVB = in.Linear(H*(Dk-Dr+Dv), R, std, false)
		}
		a.O = in.Linear(D, H*Dv, resid, false)
		b.FFNNorm.W = in.Fill(1, D)
		switch ffn := b.FFN.(type) {
		case *nn.SwiGLU:
			ffn.Gate, ffn.Up, ffn.Down = in.Linear(c.FFN, D, std, false), in.Linear(c.FFN, D, std, false), in.Linear(D, c.FFN, resid, false)
		case *nn.MoE:
			E, Fe, Fs := c.Experts, c.ExpertFFN, c.SharedExperts*c.ExpertFFN
			ffn.Router = in.Linear(E, D, std, false)
			ffn.Gate, ffn.Up, ffn.Down = in.Normal(std, E, Fe, D), in.Normal(std, E, Fe, D), in.Normal(resid, E, D, Fe)
			if c.ExpertBias {
				ffn.Bias = in.Fill(0, E).SetRequiresGrad(false)
			}
			if Fs > 0 {
				ffn.SharedGate, ffn.SharedUp, ffn.SharedDown = in.Linear(Fs, D, std, false), in.Linear(Fs, D, std, false), in.Linear(D, Fs, resid, false)
			}
		}
	}
	m.OutputNorm.(*nn.RMSNorm).W = in.Fill(1, D)
	if !c.TiedOutput {
		m.Output = in.Linear(c.VocabSize, D, std, false)
	}
	models.Tie(m)
	return m
}

func init() {
	models.Register(builtin.Family([]string{Arch}, Load, NewRandom, builtin.Card(readConfig, Config.card, New), nil))
}
