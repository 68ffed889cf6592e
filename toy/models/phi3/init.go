// Fresh random weights, for training from scratch, and the family's
// registration.

package phi3

import (
	"math"

	"github.com/toyml/toy/toy/models"
	"github.com/toyml/toy/toy/models/internal/builtin"
	"github.com/toyml/toy/toy/nn"
)

// NewRandom returns a model of shape c with GPT-2-style initial weights:
// N(0, 0.02²) everywhere (the fused attn_qkv and ffn_up too), the
// projections into the residual stream (attention output, feed-forward
// down) scaled by 1/√(2L), norms at 1, and with c.RopeFactors both sets of
// LongRoPE factors at 1 (plain RoPE until a caller sets them). The same seed
// gives the same model.
func NewRandom(c Config, seed uint64) *Model {
	in := nn.NewInit(seed)
	const std = 0.02
	resid := std / math.Sqrt(2*float64(c.Layers))
	D, F, q, kv := c.Embed, c.FFN, c.Heads*c.HeadDim, c.KVHeads*c.HeadDim
	m := New(c)
	m.Embed = &nn.Embedding{W: in.Normal(std, c.VocabSize, D)}
	for i := range m.Blocks {
		b := &m.Blocks[i]
		b.AttnNorm.(*nn.RMSNorm).W = in.Fill(1, D)
		b.Attn.QKV = in.Linear(q+2*kv, D, std, false)
		b.Attn.O = in.Linear(D, q, resid, false)
		b.FFNNorm.(*nn.RMSNorm).W = in.Fill(1, D)
		mlp := b.FFN.(*MLP)
		mlp.GateUp, mlp.Down = in.Linear(2*F, D, std, false), in.Linear(D, F, resid, false)
	}
	m.OutputNorm.W = in.Fill(1, D)
	m.Output = &nn.Linear{W: m.Embed.W}
	if !c.TiedOutput {
		m.Output = in.Linear(c.VocabSize, D, std, false)
	}
	if c.RopeFactors {
		m.RopeShort, m.RopeLong = in.Fill(1, c.RopeDim/2), in.Fill(1, c.RopeDim/2)
	}
	return m
}

func init() {
	models.Register(builtin.Family([]string{Arch}, Load, NewRandom, cardFromHeader, nil))
}
