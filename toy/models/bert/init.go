// Fresh random weights, for tests and examples.

package bert

import "github.com/toyml/toy/toy/nn"

// NewRandom returns a model of shape c initialised as Hugging Face's BERT is
// (nn.Init.Randomize): N(0, 0.02²) matrices and embedding tables, zero
// biases, every LayerNorm at weight 1 and bias 0 (nomic-bert: no biases on
// the projections). The same seed gives the same model.
func NewRandom(c Config, seed uint64) *Model {
	m := New(c)
	// The optional layers this model has, for Randomize to draw.
	if c.TokenTypes > 0 {
		m.Types = &nn.Embedding{}
	}
	if !c.Nomic() {
		m.Pos = &nn.Embedding{}
	}
	for i := range m.Blocks {
		if a := &m.Blocks[i].Attn; c.Nomic() {
			a.QKV = &nn.Linear{}
		} else {
			a.Q, a.K, a.V = &nn.Linear{}, &nn.Linear{}, &nn.Linear{}
		}
	}
	in := nn.NewInit(seed)
	in.Randomize(m, c, 0.02, 0.02) // the projections into the residual stream too
	if c.Nomic() {
		return m
	}
	for i := range m.Blocks {
		b := &m.Blocks[i]
		mlp := b.FFN.(*MLP)
		for _, l := range []*nn.Linear{b.Attn.Q, b.Attn.K, b.Attn.V, b.Attn.O, mlp.Up, mlp.Down} {
			l.B = in.Fill(0, l.W.Rows())
		}
	}
	return m
}
