// The algorithm card of a gpt-oss model (Phuong & Hutter's DTransformer with
// RMSNorm, biased projections, YaRN RoPE, attention sinks, alternating
// sliding windows and a mixture of clamped-SwiGLU experts).

package gptoss

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
	k := card.Decoder(Arch, "gpt-oss: a decoder-only transformer with pre-RMSNorm, biased attention projections, "+
		"YaRN-scaled half-split RoPE, a learned sink logit per head in every softmax, a sliding window on alternate layers, "+
		"and a sparse mixture of clamped-SwiGLU experts with biases (the k of N_E with the largest router logits, weighted by their softmax).", c)
	d := card.Col("d_e", c.Embed)
	k.Stack([]card.Step{
		{Text: "X̃ ← RMSNorm(X | γ_a^l, ε)", Shape: d},
		{Text: "Q ← W_q^l X̃ + b_q^l 1ᵀ;  K ← W_k^l X̃ + b_k^l 1ᵀ;  V ← W_v^l X̃ + b_v^l 1ᵀ", Shape: fmt.Sprintf("Q: %s, K, V: %s", card.Col("H·d_h", c.Heads*c.HeadDim), card.Col("H_kv·d_h", c.KVHeads*c.HeadDim))},
		{Text: "Q, K ← RoPE(Q, K | d_rope, θ_rope, YaRN(s_rope, ℓ_orig)), rotating half-split pairs (i, i + d_rope/2)"},
		{Text: "Mask[t', t] ← 0 if t' ≤ t (and, when (l − 1) mod P < P − 1, t − t' < W) else −∞"},
		{Text: "for h ∈ [H]: g ← ⌈h·H_kv/H⌉; S ← K_gᵀ Q_h / √d_h + Mask; " +
			"A[t', t] ← e^{S[t', t]} / (Σ_{t''} e^{S[t'', t]} + e^{s^l[h]}); Y_h ← V_g A", Shape: card.Col("d_h", c.HeadDim)},
		{Text: "X ← X + W_o^l [Y_1; …; Y_H] + b_o^l 1ᵀ", Shape: d},
		{Text: "X̃ ← RMSNorm(X | γ_f^l, ε)", Shape: d},
		{Text: "R ← W_r^l X̃ + b_r^l 1ᵀ", Shape: card.Col("N_E", c.Experts)},
		{Text: "for t ∈ [ℓ]: S_t ← the k rows e of largest R[e, t]; p_e ← softmax over S_t of R[·, t]"},
		{Text: "for t ∈ [ℓ], e ∈ S_t: g ← min(W_gate^{l,e} X̃[:, t] + b_gate^{l,e}, 7); u ← clamp(W_up^{l,e} X̃[:, t] + b_up^{l,e}, −7, 7)",
			Shape: "d_mlp"},
		{Text: "for t ∈ [ℓ]: X[:, t] ← X[:, t] + Σ_{e ∈ S_t} p_e · (W_down^{l,e} (g ⊙ σ(1.702 g) ⊙ (u + 1)) + b_down^{l,e})",
			Shape: "d_e"},
	},
		card.Step{Text: "X ← RMSNorm(X | γ, ε)", Shape: d},
		card.Step{Text: "return P = softmax(W_u X), column by column", Shape: card.Col("N_V", c.VocabSize)})
	k.Notes = []string{
		"Layers count from 1 here: the windowed layers are llama.cpp's layers 0, 2, 4, … (P = 2).",
		"YaRN as llama.cpp runs it: pairs turning more than β_fast times over ℓ_orig keep their angle, fewer than β_slow times are divided by s_rope, a linear ramp between; cos and sin × (1 + 0.1 ln s_rope).",
	}
	return k
}
