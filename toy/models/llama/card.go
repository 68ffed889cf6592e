// The algorithm card of a Llama-family model (Phuong & Hutter's DTransformer
// with RMSNorm, RoPE, grouped-query attention and SwiGLU).

package llama

import (
	"fmt"
	"slices"
	"strings"

	"github.com/toyml/toy/toy/card"
	"github.com/toyml/toy/toy/models"
)

// Card returns the model's algorithm card: its parameters and their count
// are the weights it holds (none for a model made by New).
func (m *Model) Card() *card.Card { return models.CardFromModel(m.Config.card(), m, m.Config) }

// ConfigFromCard reads a Config from a card's hyperparameters (a card
// without neox, as older ones, pairs RoPE features as its architecture does).
func ConfigFromCard(k *card.Card) (any, error) {
	return card.FromCard(k, &Config{RopeNeoX: neoX(k.Arch)})
}

var summaries = map[string]string{
	"llama":      "Llama: a decoder-only transformer with pre-RMSNorm, rotary positions, grouped-query attention and a SwiGLU MLP.",
	"qwen2":      "Qwen2: the Llama transformer with biases on the query, key and value projections and half-split RoPE pairs.",
	"qwen3":      "Qwen3: the Llama transformer with each query and key head RMS-normalised before half-split RoPE.",
	"qwen3moe":   "Qwen3-MoE: the Qwen3 transformer with a mixture of SwiGLU experts in place of the MLP.",
	"qwen2moe":   "Qwen2-MoE: the Qwen2 transformer with a mixture of SwiGLU experts and a gated shared expert in place of the MLP.",
	"granitemoe": "Granite-MoE: the Granite transformer with a mixture of SwiGLU experts in place of the MLP.",
	"mixtral":    "Mixtral: the Llama transformer with a mixture of SwiGLU experts in place of the MLP.",
	"mistral3":   "Ministral 3: the Llama transformer with YaRN's magnitude set by its log multiplier and queries sharpened far into a long context.",
	"exaone":     "EXAONE: the Llama transformer with half-split RoPE pairs.",
	"smollm3":    "SmolLM3: the Llama transformer with no positions (NoPE) in every fourth layer.",
	"granite":    "Granite: the Llama transformer with multipliers on the embeddings, the residual branches, the attention scores and the logits.",
}

// card returns the card's hyperparameters and steps for configuration c.
func (c Config) card() *card.Card {
	moe := c.Experts > 0 // a "llama" file with experts is Mixtral
	k := card.Decoder(c.Arch, summaries[pick(moe && !strings.HasSuffix(c.Arch, "moe"), "mixtral", c.Arch)], c)
	k.DropZero("rope_freqs", "rope_scaling", "rope_scale", "rope_orig_context", "rope_attn_factor", "experts", "experts_used", "expert_ffn", "shared_ffn",
		"embedding_scale", "residual_scale", "attention_scale", "logit_scale", "yarn_beta_fast", "yarn_beta_slow", "yarn_log_mul", "attn_temperature") // the features c lacks

	d := card.Col("d_e", c.Embed)
	// Granite's multipliers, each where it applies.
	resid := pick(c.ResidualScale != 0, "s_r ", "")
	score, logits := pick(c.AttentionScale != 0, "· s_a", "/ √d_h"), pick(c.LogitScale != 0, "W_u X / s_u", "W_u X")
	qkv := pick(c.QKVBias(), "Q ← W_q^l X̃ + b_q^l 1ᵀ;  K ← W_k^l X̃ + b_k^l 1ᵀ;  V ← W_v^l X̃ + b_v^l 1ᵀ", "Q ← W_q^l X̃;  K ← W_k^l X̃;  V ← W_v^l X̃")
	rope := "Q, K ← RoPE(Q, K | d_rope, θ_rope" + pick(c.RopeFreqs, ", f", "") + "), rotating " +
		pick(c.RopeNeoX, "half-split pairs (i, i + d_rope/2)", "adjacent pairs (2i, 2i+1)") +
		pick(c.RopeFreqs, " by angles pos·θ_rope^(−2i/d_rope)/f[i]", "") +
		map[string]string{
			"linear": "; every angle divided by s_rope (linear position interpolation)",
			"yarn":   "; YaRN: pairs turning fewer than once over ℓ_orig positions divided by s_rope, more than 32 times kept, a linear ramp between; cos, sin × (1 + 0.1 ln s_rope)",
		}[c.RopeScaling] +
		pick(c.Arch == "smollm3", "; none in layers l with l mod 4 = 0 (NoPE)", "") +
		pick(c.RopeAttnFactor != 0, "; cos, sin × m_rope", "") +
		pick(c.AttnTemperature != 0, "; then Q[:, t] ← (1 + τ·ln(⌊t/ℓ_orig⌋ + 1)) Q[:, t]", "")
	ffn, ffnShape := "X ← X + "+resid+"W_down^l (SiLU(W_gate^l X̃) ⊙ W_up^l X̃)", d+" (inside: d_mlp × ℓ)"
	if moe {
		ffn, ffnShape = "for t ∈ [ℓ]: p ← softmax(W_r^l X̃[:, t]); S ← the k largest p_e; X[:, t] ← X[:, t] + "+resid+
			"Σ_{e ∈ S} "+pick(c.NormalizeExperts(), "(p_e / Σ_{e' ∈ S} p_e')", "p_e")+
			" W_down^{l,e} (SiLU(W_gate^{l,e} X̃[:, t]) ⊙ W_up^{l,e} X̃[:, t])", d+" (inside: d_exp × k per token)"
		if c.SharedFFN > 0 {
			ffn += " + σ(w_s^l · X̃[:, t]) W_down^{l,s} (SiLU(W_gate^{l,s} X̃[:, t]) ⊙ W_up^{l,s} X̃[:, t])"
		}
	}
	layer := []card.Step{
		{Text: "X̃ ← RMSNorm(X | γ_a^l, ε)", Shape: d},
		{Text: qkv, Shape: fmt.Sprintf("Q: %s, K, V: %s", card.Col("H·d_h", c.Heads*c.HeadDim), card.Col("H_kv·d_h", c.KVHeads*c.HeadDim))},
		{Text: "for h ∈ [H]: Q_h ← RMSNorm(Q_h | γ_q^l, ε); for g ∈ [H_kv]: K_g ← RMSNorm(K_g | γ_k^l, ε)", Shape: card.Col("d_h", c.HeadDim)},
		{Text: rope},
		{Text: "for h ∈ [H]: g ← ⌈h·H_kv/H⌉; Y_h ← V_g softmax(K_gᵀ Q_h " + score + " + Mask)", Shape: card.Col("d_h", c.HeadDim)},
		{Text: "X ← X + " + resid + "W_o^l [Y_1; …; Y_H]", Shape: d},
		{Text: "X̃ ← RMSNorm(X | γ_f^l, ε)", Shape: d},
		{Text: ffn, Shape: ffnShape},
	}
	if !c.QKNorm() {
		layer = slices.Delete(layer, 2, 3) // no per-head norms
	}
	k.Stack(layer,
		card.Step{Text: "X ← RMSNorm(X | γ, ε)", Shape: d},
		card.Step{Text: "return P = softmax(" + logits + "), column by column (W_u = W_eᵀ when tied)", Shape: card.Col("N_V", c.VocabSize)})
	if c.EmbeddingScale != 0 { // Granite
		k.Steps[1].Text = "for t ∈ [ℓ]: X[:, t] ← s_e W_e[:, x[t]]"
	}
	k.Notes = []string{"Mask[t', t] = 0 if t' ≤ t else −∞ (causal); softmax runs over each column."}
	return k
}

// pick returns a if ok, else b.
func pick(ok bool, a, b string) string {
	if ok {
		return a
	}
	return b
}
