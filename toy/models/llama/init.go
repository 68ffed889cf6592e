// Fresh random weights, for training from scratch, and the family's
// registration.

package llama

import (
	"cmp"
	"math"

	"github.com/toyml/toy/toy/models"
	"github.com/toyml/toy/toy/models/internal/builtin"
	"github.com/toyml/toy/toy/nn"
)

// NewRandom returns a model of shape c with GPT-2-style initial weights:
// N(0, 0.02²) everywhere, the projections into the residual stream (attention
// output, feed-forward down) scaled by 1/√(2L), norms (qwen3's per-head
// ones too) at 1, biases (qwen2's Q, K, V) at 0. The same seed gives the same model.
func NewRandom(c Config, seed uint64) *Model {
	in := nn.NewInit(seed)
	const std = 0.02
	resid := std / math.Sqrt(2*float64(c.Layers))
	D, F, q, kv := c.Embed, c.FFN, c.Heads*c.HeadDim, c.KVHeads*c.HeadDim
	bias := c.QKVBias()
	m := New(c)
	m.Embed = &nn.Embedding{W: in.Normal(std, c.VocabSize, D)}
	for i := range m.Blocks {
		b := &m.Blocks[i]
		b.AttnNorm.(*nn.RMSNorm).W = in.Fill(1, D)
		b.Attn.Q, b.Attn.K, b.Attn.V = in.Linear(q, D, std, bias), in.Linear(kv, D, std, bias), in.Linear(kv, D, std, bias)
		b.Attn.O = in.Linear(D, q, resid, false)
		if c.QKNorm() {
			b.Attn.Norms.Q.(*nn.RMSNorm).W, b.Attn.Norms.K.(*nn.RMSNorm).W = in.Fill(1, c.HeadDim), in.Fill(1, c.HeadDim)
		}
		b.FFNNorm.(*nn.RMSNorm).W = in.Fill(1, D)
		switch ffn := b.FFN.(type) {
		case *nn.SwiGLU:
			ffn.Gate, ffn.Up, ffn.Down = in.Linear(F, D, std, false), in.Linear(F, D, std, false), in.Linear(D, F, resid, false)
		case *nn.MoE: // the router and every expert drawn as the dense layers
			E, FE := c.Experts, c.ExpertFFN
			ffn.Router = in.Linear(E, D, std, false)
			ffn.Gate, ffn.Up, ffn.Down = in.Normal(std, E, FE, D), in.Normal(std, E, FE, D), in.Normal(resid, E, D, FE)
			if S := c.SharedFFN; S > 0 {
				ffn.SharedGate, ffn.SharedUp = in.Linear(S, D, std, false), in.Linear(S, D, std, false)
				ffn.SharedDown, ffn.SharedWeight = in.Linear(D, S, resid, false), in.Normal(std, D)
			}
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
	f := builtin.Family(Archs, Load, NewRandom, cardFromHeader, ConfigFromCard)
	f.Sized = func(s models.Shape) any {
		kv, hd := cmp.Or(s.KVHeads, s.Heads), s.Embed/max(s.Heads, 1)
		return Config{Arch: "llama", VocabSize: s.VocabSize, ContextLength: s.ContextLength, Embed: s.Embed, Layers: s.Layers,
			FFN: cmp.Or(s.FFN, (8*s.Embed/3+31)/32*32), Heads: s.Heads, KVHeads: kv, HeadDim: hd, RopeDim: hd, RopeBase: 10000, NormEps: 1e-5}
	}
	models.Register(f)
}
