// The algorithm card of GPT-2: Phuong & Hutter's DTransformer (their
// Algorithm 10), with pre-LayerNorm as in GPT-2.

package gpt2

import (
	"github.com/toyml/toy/toy/card"
	"github.com/toyml/toy/toy/models"
)

// Card returns the model's algorithm card: its parameters and their count
// are the weights it holds (none for a model made by New).
func (m *Model) Card() *card.Card {
	c := m.Config
	if m.Output != nil && m.Embed != nil {
		c.TiedOutput = m.Output.W == m.Embed.W
	}
	return models.CardFromModel(c.card(), m, c)
}

// card returns the card's hyperparameters and steps for configuration c.
func (c Config) card() *card.Card {
	k := card.Decoder("gpt2", "GPT-2: a decoder-only transformer with learned positions, pre-LayerNorm, multi-head attention and a GELU MLP, all with biases.", c)
	dh := 0
	if c.Heads > 0 {
		dh = c.Embed / c.Heads
	}
	d := card.Col("d_e", c.Embed)
	k.Stack([]card.Step{
		{Text: "X̃ ← LayerNorm(X | γ_a^l, β_a^l, ε)", Shape: d},
		{Text: "[Q; K; V] ← W_qkv^l X̃ + b_qkv^l 1ᵀ", Shape: card.Col("3d_e", 3*c.Embed)},
		{Text: "for h ∈ [H]: Y_h ← V_h softmax(K_hᵀ Q_h / √(d_e/H) + Mask)", Shape: card.Col("d_e/H", dh)},
		{Text: "X ← X + W_o^l [Y_1; …; Y_H] + b_o^l 1ᵀ", Shape: d},
		{Text: "X̃ ← LayerNorm(X | γ_f^l, β_f^l, ε)", Shape: d},
		{Text: "X ← X + W_down^l GELU(W_up^l X̃ + b_up^l 1ᵀ) + b_down^l 1ᵀ", Shape: d + " (inside: d_mlp × ℓ)"},
	},
		card.Step{Text: "X ← LayerNorm(X | γ, β, ε)", Shape: d},
		card.Step{Text: "return P = softmax(W_u X), column by column (W_u = W_eᵀ when tied)", Shape: card.Col("N_V", c.VocabSize)})
	k.Steps[1].Text = "for t ∈ [ℓ]: X[:, t] ← W_e[:, x[t]] + W_p[:, t]" // with the position's embedding
	k.Notes = []string{"Mask[t', t] = 0 if t' ≤ t else −∞ (causal); softmax runs over each column."}
	return k
}
