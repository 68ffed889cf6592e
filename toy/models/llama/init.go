// Fresh random weights, for training from scratch, and the family's
// registration.

package llama

import (
	"cmp"

	"github.com/toyml/toy/toy/models"
	"github.com/toyml/toy/toy/models/internal/builtin"
	"github.com/toyml/toy/toy/nn"
	"github.com/toyml/toy/toy/tensor"
)

// NewRandom returns a model of shape c with GPT-2-style initial weights
// (models.Randomize): N(0, 0.02²), the projections into the residual stream
// scaled by 1/√(2L), norms (qwen3's per-head ones too) at 1, every expert as
// the dense layers, biases (qwen2's Q, K, V) at 0. The same seed gives the
// same model.
func NewRandom(c Config, seed uint64) *Model {
	m := New(c)
	if c.Experts > 0 && c.SharedFFN > 0 { // the shared expert's gate vector, drawn where it always was
		for i, b := range m.Blocks {
			m.Blocks[i] = &sharedGate{Block: b.(*nn.Block)}
		}
	}
	in := models.Randomize(m, c, c.Layers, seed)
	for i, b := range m.Blocks {
		if s, ok := b.(*sharedGate); ok {
			s.FFN.(*nn.MoE).SharedWeight, m.Blocks[i] = s.W, s.Block
		}
		if c.QKVBias() {
			a := m.Blocks[i].(*nn.Block).Attn
			for _, l := range []*nn.Linear{a.Q, a.K, a.V} {
				l.B = in.Fill(0, l.W.Rows())
			}
		}
	}
	return m
}

// sharedGate holds a layer's shared expert gate vector while
// models.Randomize draws it after the layer's other weights: nn.MoE's
// SharedWeight is an optional tensor, which Randomize leaves nil.
type sharedGate struct {
	*nn.Block
	W *tensor.Tensor `gguf:"ffn_gate_inp_shexp.weight" shape:"Embed"`
}

func init() {
	f := builtin.Family(Archs, Load, NewRandom, builtin.Card(readConfig, Config.card, New), ConfigFromCard)
	f.Sized = func(s models.Shape) any {
		kv, hd := cmp.Or(s.KVHeads, s.Heads), s.Embed/max(s.Heads, 1)
		return Config{Arch: "llama", VocabSize: s.VocabSize, ContextLength: s.ContextLength, Embed: s.Embed, Layers: s.Layers,
			FFN: cmp.Or(s.FFN, (8*s.Embed/3+31)/32*32), Heads: s.Heads, KVHeads: kv, HeadDim: hd, RopeDim: hd, RopeBase: 10000, NormEps: 1e-5}
	}
	models.Register(f)
}
