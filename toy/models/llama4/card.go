// The algorithm card of a Llama 4 model (Phuong & Hutter's DTransformer with
// RMSNorm, RoPE and NoPE layers interleaved, chunked local attention,
// attention temperature, an L2 norm of queries and keys, and a mixture of
// experts weighted before they run, beside a shared expert).

package llama4

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
	k := card.Decoder(Arch, "Llama 4: a decoder-only transformer with pre-RMSNorm and grouped-query attention whose layers "+
		"interleave RoPE, chunked local attention and an L2 norm of queries and keys with global NoPE layers that sharpen "+
		"far queries by a temperature, and a SwiGLU MLP or, every P_moe layers, a mixture of SwiGLU experts run on inputs "+
		"weighted by the sigmoid of their router logits, plus a shared expert.", c)
	rope := "Q, K ← RoPE(Q, K | d_h, θ_rope or, chunked, θ_c), rotating adjacent pairs (2i, 2i+1) by angles pos·θ^(−2i/d_h)"
	if c.RopeFreqs {
		rope += "/f[i]"
	}
	if c.RopeScale != 0 {
		rope += "/s_rope"
	}
	d := card.Col("d_e", c.Embed)
	layer := []card.Step{
		{Text: "X̃ ← RMSNorm(X | γ_a^l, ε)", Shape: d},
		{Text: "Q ← W_q^l X̃;  K ← W_k^l X̃;  V ← W_v^l X̃", Shape: fmt.Sprintf("Q: %s, K, V: %s", card.Col(q, c.Heads*c.HeadDim), card.Col(kv, c.KVHeads*c.HeadDim))},
		{Text: "if l mod P_nope ≠ 0 then"},
		{Depth: 1, Text: rope},
	}
	if c.L2Norm {
		layer = append(layer, card.Step{Depth: 1, Text: "for h ∈ [H]: Q_h ← Q_h / √(mean(Q_h²) + ε); for g ∈ [H_kv]: K_g ← K_g / √(mean(K_g²) + ε)",
			Shape: card.Col("d_h", c.HeadDim)})
	}
	k.Stack(append(layer, []card.Step{
		{Text: "else"},
		{Depth: 1, Text: "for t ∈ [ℓ]: Q[:, t] ← (1 + τ·ln(⌊(t − 1 + o_τ)/n_τ⌋ + 1)) Q[:, t]  (position t − 1)"},
		{Text: "end if"},
		{Text: "Mask[t', t] ← 0 if t' ≤ t and, when (l − 1) mod P_c < P_c − 1, ⌊(t' − 1)/c⌋ = ⌊(t − 1)/c⌋; else −∞"},
		{Text: "for h ∈ [H]: g ← ⌈h·H_kv/H⌉; Y_h ← V_g softmax(K_gᵀ Q_h / √d_h + Mask)", Shape: card.Col("d_h", c.HeadDim)},
		{Text: "X ← X + W_o^l [Y_1; …; Y_H]", Shape: d},
		{Text: "X̃ ← RMSNorm(X | γ_f^l, ε)", Shape: d},
		{Text: "if l mod P_moe ≠ 0 then X ← X + W_down^l (SiLU(W_gate^l X̃) ⊙ W_up^l X̃)", Shape: d + " (inside: d_mlp × ℓ)"},
		{Text: "else for t ∈ [ℓ]: r ← W_r^l X̃[:, t]; S ← the k largest r_e; x̃_e ← σ(r_e) X̃[:, t]"},
		{Depth: 1, Text: "X[:, t] ← X[:, t] + Σ_{e ∈ S} W_down^{l,e} (SiLU(W_gate^{l,e} x̃_e) ⊙ W_up^{l,e} x̃_e) + W_down^{l,s} (SiLU(W_gate^{l,s} X̃[:, t]) ⊙ W_up^{l,s} X̃[:, t])",
			Shape: "d_e (inside: d_exp × (k + 1))"},
	}...),
		card.Step{Text: "X ← RMSNorm(X | γ, ε)", Shape: d},
		card.Step{Text: "return P = softmax(W_u X), column by column (W_u = W_eᵀ when tied)", Shape: card.Col("N_V", c.VocabSize)})
	k.Notes = []string{
		"Layers count from 1 here: llama.cpp's NoPE layers are 3, 7, 11, … (P_nope = 4), its chunked layers 0, 1, 2, 4, … (P_c = 4), its mixtures 0, 1, 2, … (P_moe = 1) or 1, 3, 5, … (P_moe = 2).",
		"The experts' inputs, not their outputs, carry the router's weights σ(r_e); the k experts are the largest logits r_e.",
	}
	return k
}
