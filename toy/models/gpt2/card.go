// The algorithm card of GPT-2: Phuong & Hutter's DTransformer (their
// Algorithm 10), with pre-LayerNorm as in GPT-2.

package gpt2

import (
	"fmt"

	"github.com/toyml/toy/toy/card"
	"github.com/toyml/toy/toy/gguf"
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

// cardFromHeader makes the card from GGUF metadata alone.
func cardFromHeader(h *gguf.File) (*card.Card, error) {
	c, err := ConfigFromGGUF(h)
	if err != nil {
		return nil, err
	}
	return models.CardFromFile(c.card(), h, New(c), c), nil
}

// card returns the card's hyperparameters and steps for configuration c.
func (c Config) card() *card.Card {
	col := func(sym string, rows int) string { return fmt.Sprintf("%s × ℓ = %d × ℓ", sym, rows) }
	k := card.Decoder("gpt2", "GPT-2: a decoder-only transformer with learned positions, pre-LayerNorm, multi-head attention and a GELU MLP, all with biases.", c)
	dh := 0
	if c.Heads > 0 {
		dh = c.Embed / c.Heads
	}
	k.Steps = []card.Step{
		{Text: "ℓ ← length(x)"},
		{Text: "for t ∈ [ℓ]: X[:, t] ← W_e[:, x[t]] + W_p[:, t]", Shape: col("d_e", c.Embed)},
		{Text: "for l = 1, 2, …, L do"},
		{Depth: 1, Text: "X̃ ← LayerNorm(X | γ_a^l, β_a^l, ε)", Shape: col("d_e", c.Embed)},
		{Depth: 1, Text: "[Q; K; V] ← W_qkv^l X̃ + b_qkv^l 1ᵀ", Shape: col("3d_e", 3*c.Embed)},
		{Depth: 1, Text: "for h ∈ [H]: Y_h ← V_h softmax(K_hᵀ Q_h / √(d_e/H) + Mask)", Shape: col("d_e/H", dh)},
		{Depth: 1, Text: "X ← X + W_o^l [Y_1; …; Y_H] + b_o^l 1ᵀ", Shape: col("d_e", c.Embed)},
		{Depth: 1, Text: "X̃ ← LayerNorm(X | γ_f^l, β_f^l, ε)", Shape: col("d_e", c.Embed)},
		{Depth: 1, Text: "X ← X + W_down^l GELU(W_up^l X̃ + b_up^l 1ᵀ) + b_down^l 1ᵀ", Shape: col("d_e", c.Embed) + " (inside: d_mlp × ℓ)"},
		{Text: "end for"},
		{Text: "X ← LayerNorm(X | γ, β, ε)", Shape: col("d_e", c.Embed)},
		{Text: "return P = softmax(W_u X), column by column (W_u = W_eᵀ when tied)", Shape: col("N_V", c.VocabSize)},
	}
	k.Notes = []string{"Mask[t', t] = 0 if t' ≤ t else −∞ (causal); softmax runs over each column."}
	return k
}
