// The algorithm card of a Phi-2 model (Phuong & Hutter's DTransformer with
// parallel attention and MLP on one LayerNorm, and partial half-split RoPE).

package phi2

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
	d := card.Col("d_e", c.Embed)
	k := card.Decoder(Arch, "Phi-2: a decoder-only transformer whose attention and GELU MLP run side by side on one LayerNorm of the residual stream, "+
		"with half-split RoPE on the first d_rope features of each head and biases on every projection.", c)
	k.Stack([]card.Step{
		{Text: "X̃ ← LayerNorm(X | γ^l, β^l, ε)", Shape: d},
		{Text: "[Q; K; V] ← W_qkv^l X̃ + b_qkv^l 1ᵀ", Shape: fmt.Sprintf("Q: %s, K, V: %s", card.Col("H·d_h", c.Heads*c.HeadDim), card.Col("H_kv·d_h", c.KVHeads*c.HeadDim))},
		{Text: "Q, K ← RoPE(Q, K | d_rope, θ_rope), rotating half-split pairs (i, i + d_rope/2) of the first d_rope features of each head"},
		{Text: "for h ∈ [H]: g ← ⌈h·H_kv/H⌉; Y_h ← V_g softmax(K_gᵀ Q_h / √d_h + Mask)", Shape: card.Col("d_h", c.HeadDim)},
		{Text: "X ← X + W_o^l [Y_1; …; Y_H] + b_o^l 1ᵀ + W_down^l GELU(W_up^l X̃ + b_up^l 1ᵀ) + b_down^l 1ᵀ", Shape: d + " (inside: d_mlp × ℓ)"},
	},
		card.Step{Text: "X ← LayerNorm(X | γ, β, ε)", Shape: d},
		card.Step{Text: "return P = softmax(W_u X + b_u 1ᵀ), column by column", Shape: card.Col("N_V", c.VocabSize)})
	k.Notes = []string{
		"Mask[t', t] = 0 if t' ≤ t else −∞ (causal); softmax runs over each column.",
		"GELU(x) = ½x(1 + tanh(√(2/π)(x + 0.044715x³))).",
		"W_qkv^l = [W_q^l; W_k^l; W_v^l] and b_qkv^l = [b_q^l; b_k^l; b_v^l] where a file gives them apart.",
	}
	return k
}
