// Fresh random weights, for tests and examples.

package bert

import "github.com/toyml/toy/toy/nn"

// NewRandom returns a model of shape c initialised as Hugging Face's BERT is:
// N(0, 0.02²) matrices and embedding tables, zero biases, every LayerNorm at
// weight 1 and bias 0 (nomic-bert: no biases on the projections). The same
// seed gives the same model.
func NewRandom(c Config, seed uint64) *Model {
	in := nn.NewInit(seed)
	const std = 0.02
	D, F := c.Embed, c.FFN
	bias := !c.Nomic()
	norm := func() *nn.LayerNorm { return &nn.LayerNorm{W: in.Fill(1, D), B: in.Fill(0, D), Eps: c.NormEps} }
	m := New(c)
	m.Embed = &nn.Embedding{W: in.Normal(std, c.VocabSize, D)}
	if c.TokenTypes > 0 {
		m.Types = &nn.Embedding{W: in.Normal(std, c.TokenTypes, D)}
	}
	if !c.Nomic() {
		m.Pos = &nn.Embedding{W: in.Normal(std, c.ContextLength, D)}
	}
	m.EmbedNorm = norm()
	for i := range m.Blocks {
		b := &m.Blocks[i]
		if c.Nomic() {
			b.Attn.QKV = in.Linear(3*D, D, std, false)
		} else {
			b.Attn.Q, b.Attn.K, b.Attn.V = in.Linear(D, D, std, true), in.Linear(D, D, std, true), in.Linear(D, D, std, true)
		}
		b.Attn.O = in.Linear(D, D, std, bias)
		b.AttnNorm, b.OutNorm = norm(), norm()
		switch ffn := b.FFN.(type) {
		case *MLP:
			ffn.Up, ffn.Down = in.Linear(F, D, std, true), in.Linear(D, F, std, true)
		case *nn.SwiGLU:
			ffn.Gate, ffn.Up, ffn.Down = in.Linear(F, D, std, false), in.Linear(F, D, std, false), in.Linear(D, F, std, false)
		}
	}
	return m
}
