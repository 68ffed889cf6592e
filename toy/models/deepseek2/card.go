// The algorithm card of a DeepSeek-V2 model (Phuong & Hutter's DTransformer
// with multi-head latent attention and a mixture of experts with shared
// experts).

package deepseek2

import (
	"fmt"

	"github.com/toyml/toy/toy/card"
	"github.com/toyml/toy/toy/models"
)

// Card returns the model's algorithm card: its parameters and their count
// are the weights it holds (none for a model made by New).
func (m *Model) Card() *card.Card { return models.CardFromModel(m.Config.card(), m, m.Config) }

// card returns the card's hyperparameters and steps for configuration c.
// The hyperparameters of the experts and of RoPE scaling are left off when
// zero (a model without them).
func (c Config) card() *card.Card {
	k := card.Decoder(Arch, "DeepSeek-V2: a decoder-only transformer with pre-RMSNorm, multi-head latent attention (keys and values "+
		"decompressed from one low-rank latent per token, RoPE on a separate part of each head), and, after the first "+
		"dense layers, a mixture of SwiGLU experts beside always-on shared experts.", c)
	k.DropZero("experts", "experts_used", "expert_ffn", "shared_experts", "expert_gating", "expert_bias",
		"expert_weights_norm", "expert_weights_scale", "expert_groups", "expert_groups_used",
		"rope_scaling", "rope_scale", "rope_orig_context", "rope_attn_factor", "yarn_log_mul")
	d := card.Col("d_e", c.Embed)
	rope := "RoPE(· | d_r, θ_rope), rotating adjacent pairs (2i, 2i+1)" + map[string]string{
		"linear": ", angles divided by s_rope", "yarn": ", YaRN-stretched by s_rope over ℓ_orig"}[c.RopeScaling]
	query := pick(c.QLoraRank > 0, "Q ← W_qb^l RMSNorm(W_qa^l X̃ | γ_qa^l, ε)", "Q ← W_q^l X̃")
	decompress := pick(c.SplitKVB, "for h ∈ [H]: K_h ← [W_kb^{l,h}ᵀ C; K_r];  V_h ← W_vb^{l,h} C",
		"[K_1^n; V_1; …; K_H^n; V_H] ← W_kvb^l C;  for h ∈ [H]: K_h ← [K_h^n; K_r]")
	layer := []card.Step{
		{Text: "X̃ ← RMSNorm(X | γ_a^l, ε)", Shape: d},
		{Text: query + ";  for h ∈ [H]: Q_h ← [Q_h^n; " + rope + " of Q_h^r]", Shape: card.Col("H·d_k", c.Heads*c.KeyDim)},
		{Text: "[C; K_r] ← W_kva^l X̃;  C ← RMSNorm(C | γ_kv^l, ε);  K_r ← RoPE(K_r)", Shape: card.Col("r_kv + d_r", c.KVLoraRank+c.RopeDim)},
		{Text: decompress, Shape: fmt.Sprintf("K_h: %s, V_h: %s", card.Col("d_k", c.KeyDim), card.Col("d_v", c.ValueDim))},
		{Text: "for h ∈ [H]: Y_h ← V_h softmax(s · K_hᵀ Q_h + Mask), s = " + card.Float(c.AttnScale()), Shape: card.Col("d_v", c.ValueDim)},
		{Text: "X ← X + W_o^l [Y_1; …; Y_H]", Shape: d},
		{Text: "X̃ ← RMSNorm(X | γ_f^l, ε)", Shape: d},
		{Text: "if l ≤ L_d: X ← X + W_down^l (SiLU(W_gate^l X̃) ⊙ W_up^l X̃)", Shape: d},
	}
	if c.MoE() {
		scores := pick(c.ExpertGating == "sigmoid", "p ← σ(W_r^l X̃[:, t])", "p ← softmax(W_r^l X̃[:, t])")
		choose := "S ← the k largest entries of " + pick(c.ExpertBias, "p + b_r^l", "p") +
			pick(c.ExpertGroups > 1, " among the G_u groups (of E/G) whose best two sum highest", "")
		w := pick(c.ExpertWeightsNorm, "p_e / Σ_{e' ∈ S} p_e'", "p_e")
		w = pick(c.ExpertWeightsScale != 0 && c.ExpertWeightsScale != 1, "s_w · ", "") + w
		shared := pick(c.SharedExperts > 0, " + W_down^{l,s} (SiLU(W_gate^{l,s} X̃[:, t]) ⊙ W_up^{l,s} X̃[:, t])", "")
		layer = append(layer,
			card.Step{Text: "else for t ∈ [ℓ]: " + scores + ";  " + choose},
			card.Step{Depth: 1, Text: "X[:, t] ← X[:, t] + Σ_{e ∈ S} " + w + " · W_down^{l,e} (SiLU(W_gate^{l,e} X̃[:, t]) ⊙ W_up^{l,e} X̃[:, t])" + shared,
				Shape: "d_e (inside: d_exp × k, E_s·d_exp)"})
	}
	k.Stack(layer,
		card.Step{Text: "X ← RMSNorm(X | γ, ε)", Shape: d},
		card.Step{Text: "return P = softmax(W_u X), column by column (W_u = W_eᵀ when tied)", Shape: card.Col("N_V", c.VocabSize)})
	k.Notes = []string{
		"Mask[t', t] = 0 if t' ≤ t else −∞ (causal); softmax runs over each column.",
		"Q_h^n, K_h^n are a head's first d_k − d_r features, Q_h^r its last d_r; K_r is one rotated key every head shares.",
		"s = m²/√d_k, where m = 1 without YaRN and DeepSeek's YaRN temperature with it (llama.cpp's formula; Config.AttnScale).",
	}
	return k
}

// pick returns a if ok, else b.
func pick[T any](ok bool, a, b T) T {
	if ok {
		return a
	}
	return b
}
