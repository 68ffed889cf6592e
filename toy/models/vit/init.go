// Fresh random weights, for training from scratch and for tests.

package vit

import "github.com/toyml/toy/toy/nn"

// NewRandom returns a model of shape c initialised as Hugging Face's ViT is:
// N(0, 0.02²) matrices, [CLS] token and position embeddings, zero biases,
// every LayerNorm at weight 1 and bias 0. The same seed gives the same model.
func NewRandom(c Config, seed uint64) *Model {
	in := nn.NewInit(seed)
	const std = 0.02
	D, F, P := c.Embed, c.FFN, c.PatchSize
	norm := func() *nn.LayerNorm { return &nn.LayerNorm{W: in.Fill(1, D), B: in.Fill(0, D), Eps: c.NormEps} }
	m := New(c)
	m.PatchEmbed = in.Linear(D, Channels*P*P, std, true)
	m.Class = in.Normal(std, D)
	m.Pos = &nn.Embedding{W: in.Normal(std, c.Tokens(), D)}
	for i := range m.Blocks {
		b := &m.Blocks[i]
		b.Norm1, b.Norm2 = norm(), norm()
		b.Attn.Q, b.Attn.K, b.Attn.V = in.Linear(D, D, std, true), in.Linear(D, D, std, true), in.Linear(D, D, std, true)
		b.Attn.Out = in.Linear(D, D, std, true)
		b.MLP.Up, b.MLP.Down = in.Linear(F, D, std, true), in.Linear(D, F, std, true)
	}
	m.PostNorm = norm()
	m.Head = in.Linear(c.Classes, D, std, true)
	return m
}
