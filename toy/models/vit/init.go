// Fresh random weights, for training from scratch and for tests.

package vit

import "github.com/toyml/toy/toy/nn"

// NewRandom returns a model of shape c initialised as Hugging Face's ViT is
// (nn.Init.Randomize): N(0, 0.02²) matrices, [CLS] token and position
// embeddings, zero biases, every LayerNorm at weight 1 and bias 0. The same
// seed gives the same model.
func NewRandom(c Config, seed uint64) *Model {
	in := nn.NewInit(seed)
	const std = 0.02
	m := New(c)
	m.PatchEmbed = in.Linear(c.Embed, Channels*c.PatchSize*c.PatchSize, std, true) // flat, as Load reshapes the file's
	in.Randomize(m, c, std, std)
	m.Head = in.Linear(c.Classes, c.Embed, std, true) // after the blocks
	for i := range m.Blocks {
		b := &m.Blocks[i]
		for _, l := range []*nn.Linear{b.Attn.Q, b.Attn.K, b.Attn.V, b.Attn.Out, b.MLP.Up, b.MLP.Down} {
			l.B = in.Fill(0, l.W.Rows())
		}
	}
	return m
}
