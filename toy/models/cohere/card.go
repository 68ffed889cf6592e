// The algorithm card of Command R, Command R+ and Command R7B: Phuong &
// Hutter's DTransformer with parallel blocks.

package cohere

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
	d, dh := card.Col("d_e", c.Embed), c.HeadDim()
	summary := "Command R: a decoder whose blocks run attention and a SwiGLU side by side on one LayerNorm, with RoPE and a tied, scaled output head."
	if c.Arch == "cohere2" {
		summary = "Command R7B: Command R with three of every four layers attending within a sliding window, with RoPE, and the fourth to everything, without positions."
	}
	if c.QKNorm {
		summary = "Command R+: Command R whose queries and keys are LayerNormed head by head, each head with its own scale, before RoPE."
	}
	k := card.Decoder(c.Arch, summary, c)
	k.DropZero("qk_norm")
	if c.Window == 0 {
		k.Drop("window", "sliding_pattern")
	}
	rope, mask := "Q, K ← RoPE(Q, K | d_h, θ_rope), rotating adjacent pairs (2i, 2i+1)", "Mask"
	if c.Window > 0 {
		rope, mask = "in local layers only: "+rope, "Mask_l"
	}
	layer := []card.Step{
		{Text: "X̃ ← LayerNorm(X | γ^l, 0, ε)", Shape: d},
		{Text: "Q ← W_q^l X̃;  K ← W_k^l X̃;  V ← W_v^l X̃", Shape: fmt.Sprintf("Q: %s, K, V: %s", d, card.Col("H_kv·d_h", c.KVHeads*dh))},
	}
	if c.QKNorm {
		layer = append(layer, card.Step{Text: "for h ∈ [H]: Q_h ← LayerNorm(Q_h | γ_q^l[h], 0, ε); for g ∈ [H_kv]: K_g ← LayerNorm(K_g | γ_k^l[g], 0, ε)", Shape: card.Col("d_h", dh)})
	}
	k.Stack(append(layer,
		card.Step{Text: rope},
		card.Step{Text: "for h ∈ [H]: g ← ⌈h·H_kv/H⌉; Y_h ← V_g softmax(K_gᵀ Q_h / √d_h + " + mask + ")", Shape: card.Col("d_h", dh)},
		card.Step{Text: "X ← X + W_down^l (SiLU(W_gate^l X̃) ⊙ W_up^l X̃) + W_o^l [Y_1; …; Y_H]", Shape: d + " (inside: d_mlp × ℓ)"}),
		card.Step{Text: "X ← LayerNorm(X | γ, 0, ε)", Shape: d},
		card.Step{Text: "return P = softmax(s_u W_eᵀ X), column by column (the unembedding is the token embedding)", Shape: card.Col("N_V", c.VocabSize)})
	k.Notes = []string{"Mask[t', t] = 0 if t' ≤ t else −∞ (causal); softmax runs over each column."}
	if c.Window > 0 {
		k.Notes = append(k.Notes, "Mask_l = Mask in global layers; in local layers also −∞ where t − t' ≥ w.")
	}
	return k
}
