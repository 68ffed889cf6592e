// The algorithm card of StarCoder2: Phuong & Hutter's DTransformer with
// GPT-2's pre-LayerNorm blocks, grouped-query attention and rotary positions.

package starcoder2

import (
	"fmt"

	"github.com/toyml/toy/toy/card"
	"github.com/toyml/toy/toy/models"
)

// Card returns the model's algorithm card: its parameters and their count
// are the weights it holds (none for a model made by New).
func (m *Model) Card() *card.Card { return models.CardFromModel(m.Config.card(), m, m.Config) }

// card returns the card's hyperparameters and steps for configuration c.
func (c Config) card() *card.Card {
	k := card.Decoder(Arch, "StarCoder2: GPT-2's pre-LayerNorm blocks and GELU MLP with grouped-query attention and half-split rotary positions, every projection with a bias.", c)
	dh, d := c.HeadDim(), card.Col("d_e", c.Embed)
	k.Stack([]card.Step{
		{Text: "X̃ ← LayerNorm(X | γ_a^l, β_a^l, ε)", Shape: d},
		{Text: "Q ← W_q^l X̃ + b_q^l 1ᵀ;  K ← W_k^l X̃ + b_k^l 1ᵀ;  V ← W_v^l X̃ + b_v^l 1ᵀ",
			Shape: fmt.Sprintf("Q: %s, K, V: %s", d, card.Col("H_kv·d_h", c.KVHeads*dh))},
		{Text: "Q, K ← RoPE(Q, K | d_h, θ_rope), rotating half-split pairs (i, i + d_h/2)"},
		{Text: "for h ∈ [H]: g ← ⌈h·H_kv/H⌉; Y_h ← V_g softmax(K_gᵀ Q_h / √d_h + Mask)", Shape: card.Col("d_h", dh)},
		{Text: "X ← X + W_o^l [Y_1; …; Y_H] + b_o^l 1ᵀ", Shape: d},
		{Text: "X̃ ← LayerNorm(X | γ_f^l, β_f^l, ε)", Shape: d},
		{Text: "X ← X + W_down^l GELU(W_up^l X̃ + b_up^l 1ᵀ) + b_down^l 1ᵀ", Shape: d + " (inside: d_mlp × ℓ)"},
	},
		card.Step{Text: "X ← LayerNorm(X | γ, β, ε)", Shape: d},
		card.Step{Text: "return P = softmax(W_u X), column by column (W_u = W_eᵀ when tied)", Shape: card.Col("N_V", c.VocabSize)})
	k.Notes = []string{"Mask[t', t] = 0 if t' ≤ t else −∞ (causal); softmax runs over each column."}
	return k
}
