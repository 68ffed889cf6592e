// The algorithm card of an OLMoE model (Phuong & Hutter's DTransformer with
// RMSNorm, normalised queries and keys, RoPE, and a mixture of SwiGLU
// experts).

package olmoe

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
	q, kv := "H·d_h", "H_kv·d_h"
	qn, kvn := c.Heads*c.HeadDim, c.KVHeads*c.HeadDim
	d := card.Col("d_e", c.Embed)
	k := card.Decoder(Arch, "OLMoE: a decoder-only transformer with pre-RMSNorm, queries and keys RMS-normalised whole before half-split RoPE, "+
		"and a sparse mixture of SwiGLU experts in place of the MLP (the k most probable of N_E per token, weighted by their router probabilities).", c)
	k.Stack([]card.Step{
		{Text: "X̃ ← RMSNorm(X | γ_a^l, ε)", Shape: d},
		{Text: "Q ← W_q^l X̃;  K ← W_k^l X̃;  V ← W_v^l X̃", Shape: fmt.Sprintf("Q: %s, K, V: %s", card.Col(q, qn), card.Col(kv, kvn))},
		{Text: "Q ← RMSNorm(Q | γ_q^l, ε);  K ← RMSNorm(K | γ_k^l, ε)", Shape: fmt.Sprintf("Q: %s, K: %s", card.Col(q, qn), card.Col(kv, kvn))},
		{Text: "Q, K ← RoPE(Q, K | d_rope, θ_rope), rotating half-split pairs (i, i + d_rope/2)"},
		{Text: "for h ∈ [H]: g ← ⌈h·H_kv/H⌉; Y_h ← V_g softmax(K_gᵀ Q_h / √d_h + Mask)", Shape: card.Col("d_h", c.HeadDim)},
		{Text: "X ← X + W_o^l [Y_1; …; Y_H]", Shape: d},
		{Text: "X̃ ← RMSNorm(X | γ_f^l, ε)", Shape: d},
		{Text: "P_r ← softmax(W_r^l X̃), column by column", Shape: card.Col("N_E", c.Experts)},
		{Text: "for t ∈ [ℓ]: S_t ← the k rows e of largest P_r[e, t]"},
		{Text: "for t ∈ [ℓ]: X[:, t] ← X[:, t] + Σ_{e ∈ S_t} P_r[e, t] · W_down^{l,e} (SiLU(W_gate^{l,e} X̃[:, t]) ⊙ W_up^{l,e} X̃[:, t])",
			Shape: "d_e (inside: d_exp)"},
	},
		card.Step{Text: "X ← RMSNorm(X | γ, ε)", Shape: d},
		card.Step{Text: "return P = softmax(W_u X), column by column", Shape: card.Col("N_V", c.VocabSize)})
	k.Notes = []string{
		"Mask[t', t] = 0 if t' ≤ t else −∞ (causal); softmax runs over each column.",
		"The k routing weights P_r[e, t] are not renormalised over S_t.",
	}
	return k
}
