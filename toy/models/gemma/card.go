// The algorithm card of a Gemma model (Phuong & Hutter's DTransformer with
// GeGLU and, from Gemma 2 on, sandwich RMSNorms and sliding windows).

package gemma

import (
	"fmt"
	"slices"

	"github.com/toyml/toy/toy/card"
	"github.com/toyml/toy/toy/models"
)

// Card returns the model's algorithm card: its parameters and their count
// are the weights it holds (none for a model made by New).
func (m *Model) Card() *card.Card { return models.CardFromModel(m.Config.card(), m, m.Config) }

// card returns the card's hyperparameters and steps for configuration c.
func (c Config) card() *card.Card {
	d := card.Col("d_e", c.Embed)
	summary := map[string]string{
		"gemma": "Gemma: a decoder-only transformer with pre-RMSNorm, rotary positions, multi-query or grouped attention, " +
			"a GeGLU MLP and embeddings scaled by √d_e.",
		"gemma2": "Gemma 2: the Gemma transformer with pre- and post-sublayer RMSNorms, soft-capped attention that alternates " +
			"a sliding window with the whole context, and soft-capped logits.",
		"gemma3": "Gemma 3: the Gemma transformer with pre- and post-sublayer RMSNorms, per-head query/key RMSNorms, and five " +
			"sliding-window layers (RoPE base 10000) to each global one.",
	}[c.Arch]
	k := card.Decoder(c.Arch, summary, c)
	local := map[string]string{"gemma2": "l = 1, 3, 5, …", "gemma3": "l mod 6 ≠ 0"}[c.Arch]
	if c.SlidingPattern() == 0 {
		k.Drop("window")
	}
	if c.Arch != "gemma2" {
		k.Drop("attn_softcap", "final_softcap")
	}
	if c.RopeScale <= 0 {
		k.Drop("rope_scale")
	}
	if i := slices.IndexFunc(k.Hyper, func(h card.Hyper) bool { return h.Key == "window" }); i >= 0 {
		k.Hyper[i].Meaning += " " + local
	}
	rope := "Q, K ← RoPE(Q, K | d_h, θ_rope), rotating half-split pairs (i, i + d_h/2)"
	switch {
	case c.Arch == "gemma3" && c.RopeScale > 0:
		rope += "; base 10000 in the local layers, angles divided by s_rope in the global ones"
	case c.Arch == "gemma3":
		rope += "; base 10000 in the local layers"
	case c.RopeScale > 0:
		rope += "; angles divided by s_rope"
	}
	score := "S_h ← s_q K_gᵀ Q_h"
	if c.AttnSoftcap > 0 {
		score = "S_h ← c_attn·tanh(s_q K_gᵀ Q_h / c_attn)"
	}
	post := func(x, g string) string {
		if c.PostNorms() {
			return "RMSNorm(" + x + " | " + g + ", ε)"
		}
		return x
	}
	logits := "W_u X"
	if c.FinalSoftcap > 0 {
		logits = "c_out·tanh(W_u X / c_out)"
	}
	layer := []card.Step{
		{Text: "X̃ ← RMSNorm(X | γ_a^l, ε)", Shape: d},
		{Text: "Q ← W_q^l X̃;  K ← W_k^l X̃;  V ← W_v^l X̃", Shape: fmt.Sprintf("Q: %s, K, V: %s", card.Col("H·d_h", c.Heads*c.HeadDim), card.Col("H_kv·d_h", c.KVHeads*c.HeadDim))},
		{Text: "for h ∈ [H]: Q_h ← RMSNorm(Q_h | γ_q^l, ε); for g ∈ [H_kv]: K_g ← RMSNorm(K_g | γ_k^l, ε)", Shape: card.Col("d_h", c.HeadDim)},
		{Text: rope},
		{Text: "for h ∈ [H]: g ← ⌈h·H_kv/H⌉; " + score + "; Y_h ← V_g softmax(S_h + Mask_l)", Shape: card.Col("d_h", c.HeadDim)},
		{Text: "X ← X + " + post("W_o^l [Y_1; …; Y_H]", "γ̂_a^l"), Shape: d},
		{Text: "X̃ ← RMSNorm(X | γ_f^l, ε)", Shape: d},
		{Text: "X ← X + " + post("W_down^l (GELU(W_gate^l X̃) ⊙ W_up^l X̃)", "γ̂_f^l"), Shape: d + " (inside: d_mlp × ℓ)"},
	}
	if !c.QKNorm() {
		layer = slices.Delete(layer, 2, 3) // no per-head norms
	}
	k.Stack(layer,
		card.Step{Text: "X ← RMSNorm(X | γ, ε)", Shape: d},
		card.Step{Text: "return P = softmax(" + logits + "), column by column (W_u = W_eᵀ when tied)", Shape: card.Col("N_V", c.VocabSize)})
	k.Steps[1].Text = "for t ∈ [ℓ]: X[:, t] ← √d_e · W_e[:, x[t]]" // the embeddings scaled
	mask := "Mask_l[t', t] = 0 if t' ≤ t else −∞ (causal); softmax runs over each column."
	if c.SlidingPattern() > 0 {
		mask = "Mask_l[t', t] = 0 if t' ≤ t (and, for the local layers " + local + ", t − t' < w) else −∞; softmax runs over each column."
	}
	k.Notes = []string{mask, "GELU is the tanh approximation; the RMSNorm scales are stored as 1 + w, as Gemma's norms use them."}
	return k
}
