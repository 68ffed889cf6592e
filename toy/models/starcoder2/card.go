// The algorithm card of StarCoder2: Phuong & Hutter's DTransformer with
// GPT-2's pre-LayerNorm blocks, grouped-query attention and rotary positions.

package starcoder2

import (
	"fmt"

	"github.com/toyml/toy/toy/card"
	"github.com/toyml/toy/toy/gguf"
	"github.com/toyml/toy/toy/models"
)

// Card returns the model's algorithm card: its parameters and their count
// are the weights it holds (none for a model made by New).
func (m *Model) Card() *card.Card { return models.CardFromModel(m.Config.card(), m, m.Config) }

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
	k := card.Decoder(Arch, "StarCoder2: GPT-2's pre-LayerNorm blocks and GELU MLP with grouped-query attention and half-split rotary positions, every projection with a bias.", c)
	dh, D := c.HeadDim(), c.Embed
	k.Steps = []card.Step{
		{Text: "ℓ ← length(x)"},
		{Text: "for t ∈ [ℓ]: X[:, t] ← W_e[:, x[t]]", Shape: col("d_e", D)},
		{Text: "for l = 1, 2, …, L do"},
		{Depth: 1, Text: "X̃ ← LayerNorm(X | γ_a^l, β_a^l, ε)", Shape: col("d_e", D)},
		{Depth: 1, Text: "Q ← W_q^l X̃ + b_q^l 1ᵀ;  K ← W_k^l X̃ + b_k^l 1ᵀ;  V ← W_v^l X̃ + b_v^l 1ᵀ",
			Shape: fmt.Sprintf("Q: %s, K, V: %s", col("d_e", D), col("H_kv·d_h", c.KVHeads*dh))},
		{Depth: 1, Text: "Q, K ← RoPE(Q, K | d_h, θ_rope), rotating half-split pairs (i, i + d_h/2)"},
		{Depth: 1, Text: "for h ∈ [H]: g ← ⌈h·H_kv/H⌉; Y_h ← V_g softmax(K_gᵀ Q_h / √d_h + Mask)", Shape: col("d_h", dh)},
		{Depth: 1, Text: "X ← X + W_o^l [Y_1; …; Y_H] + b_o^l 1ᵀ", Shape: col("d_e", D)},
		{Depth: 1, Text: "X̃ ← LayerNorm(X | γ_f^l, β_f^l, ε)", Shape: col("d_e", D)},
		{Depth: 1, Text: "X ← X + W_down^l GELU(W_up^l X̃ + b_up^l 1ᵀ) + b_down^l 1ᵀ", Shape: col("d_e", D) + " (inside: d_mlp × ℓ)"},
		{Text: "end for"},
		{Text: "X ← LayerNorm(X | γ, β, ε)", Shape: col("d_e", D)},
		{Text: "return P = softmax(W_u X), column by column (W_u = W_eᵀ when tied)", Shape: col("N_V", c.VocabSize)},
	}
	k.Notes = []string{"Mask[t', t] = 0 if t' ≤ t else −∞ (causal); softmax runs over each column."}
	return k
}
