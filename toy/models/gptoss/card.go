// The algorithm card of a gpt-oss model (Phuong & Hutter's DTransformer with
// RMSNorm, biased projections, YaRN RoPE, attention sinks, alternating
// sliding windows and a mixture of clamped-SwiGLU experts).

package gptoss

import (
	"fmt"

	"github.com/toyml/toy/toy/card"
	"github.com/toyml/toy/toy/gguf"
	"github.com/toyml/toy/toy/tensor"
)

// Card returns the model's algorithm card; the quantization is that of the
// loaded weights (none for a model made by New).
func (m *Model) Card() *card.Card {
	c := m.Config.Card()
	var ws []*tensor.Tensor
	if m.Embed != nil {
		ws = append(ws, m.Embed.W)
	}
	for i := range m.Blocks {
		b := &m.Blocks[i]
		if b.Attn.Q != nil {
			ws = append(ws, b.Attn.Q.W, b.Attn.K.W, b.Attn.V.W, b.Attn.O.W)
		}
		if b.MoE.Gate != nil {
			ws = append(ws, b.MoE.Gate, b.MoE.Up, b.MoE.Down)
		}
	}
	c.Quant = card.DominantType(ws)
	return c
}

// Card returns the algorithm card of a model with configuration c.
func (c Config) Card() *card.Card {
	q, kv := "H·d_h", "H_kv·d_h"
	qn, kvn := c.Heads*c.HeadDim, c.KVHeads*c.HeadDim
	col := func(sym string, rows int) string { return fmt.Sprintf("%s × ℓ = %d × ℓ", sym, rows) }
	k := card.NewDecoder(Arch, "gpt-oss: a decoder-only transformer with pre-RMSNorm, biased attention projections, "+
		"YaRN-scaled half-split RoPE, a learned sink logit per head in every softmax, a sliding window on alternate layers, "+
		"and a sparse mixture of clamped-SwiGLU experts with biases (the k of N_E with the largest router logits, weighted by their softmax).",
		c.VocabSize, c.ContextLength, c.Embed, c.Layers)
	k.Hyper = append(k.Hyper, []card.Hyper{
		{Symbol: "d_mlp", Value: card.Int(c.FFN), Key: "ffn", Meaning: "width of each expert"},
		{Symbol: "N_E", Value: card.Int(c.Experts), Key: "experts", Meaning: "experts per layer"},
		{Symbol: "k", Value: card.Int(c.ExpertsUsed), Key: "experts_used", Meaning: "experts run per token"},
		{Symbol: "H", Value: card.Int(c.Heads), Key: "heads", Meaning: "query heads"},
		{Symbol: "H_kv", Value: card.Int(c.KVHeads), Key: "kv_heads", Meaning: "key/value heads"},
		{Symbol: "d_h", Value: card.Int(c.HeadDim), Key: "head_dim", Meaning: "head width"},
		{Symbol: "d_rope", Value: card.Int(c.RopeDim), Key: "rope_dim", Meaning: "features rotated per head"},
		{Symbol: "θ_rope", Value: card.Float(c.RopeBase), Key: "rope_base", Meaning: "RoPE frequency base"},
		{Symbol: "s_rope", Value: card.Float(c.RopeScaleFactor), Key: "rope_scale", Meaning: "YaRN's stretch (0: none)"},
		{Symbol: "ℓ_orig", Value: card.Int(c.RopeOrigContext), Key: "rope_orig_context", Meaning: "the context YaRN stretches"},
		{Symbol: "m_rope", Value: card.Float(c.RopeAttnFactor), Key: "rope_attn_factor", Meaning: "factor on cos and sin (0: 1)"},
		{Symbol: "β_fast", Value: card.Float(c.YarnBetaFast), Key: "yarn_beta_fast", Meaning: "YaRN keeps pairs turning more than β_fast times over ℓ_orig (0: 32)"},
		{Symbol: "β_slow", Value: card.Float(c.YarnBetaSlow), Key: "yarn_beta_slow", Meaning: "YaRN divides pairs turning fewer than β_slow times by s_rope (0: 1)"},
		{Symbol: "W", Value: card.Int(c.Window), Key: "window", Meaning: "sliding window of the windowed layers"},
		{Symbol: "P", Value: card.Int(c.WindowPeriod), Key: "window_period", Meaning: "layer l is windowed when l mod P < P − 1"},
		{Symbol: "ε", Value: card.Float(c.NormEps), Key: "norm_eps", Meaning: "RMSNorm epsilon"},
	}...)
	per := func(sym, shape, meaning string) card.Param {
		return card.Param{Symbol: sym, Shape: shape, Meaning: meaning, PerLayer: true}
	}
	k.Params = []card.Param{
		{Symbol: "W_e", Shape: "d_e × N_V", Meaning: "token embedding"},
		per("γ¹_l", "d_e", "attention RMSNorm scale"),
		per("W_q^l, b_q^l", q+" × d_e, "+q, "query projection"),
		per("W_k^l, b_k^l", kv+" × d_e, "+kv, "key projection"),
		per("W_v^l, b_v^l", kv+" × d_e, "+kv, "value projection"),
		per("W_o^l, b_o^l", "d_e × "+q+", d_e", "attention output projection"),
		per("σ^l", "H", "sink logits"),
		per("γ²_l", "d_e", "MoE RMSNorm scale"),
		per("W_r^l, b_r^l", "N_E × d_e, N_E", "router"),
		per("W_gate^l, b_gate^l", "N_E × d_mlp × d_e, N_E × d_mlp", "experts' gates"),
		per("W_up^l, b_up^l", "N_E × d_mlp × d_e, N_E × d_mlp", "experts' up projections"),
		per("W_down^l, b_down^l", "N_E × d_e × d_mlp, N_E × d_e", "experts' down projections"),
		{Symbol: "γ", Shape: "d_e", Meaning: "final RMSNorm scale"},
		{Symbol: "W_u", Shape: "N_V × d_e", Meaning: "unembedding"},
	}
	k.Steps = []card.Step{
		{Text: "ℓ ← length(x)"},
		{Text: "for t ∈ [ℓ]: X[:, t] ← W_e[:, x[t]]", Shape: col("d_e", c.Embed)},
		{Text: "for l = 1, 2, …, L do"},
		{Depth: 1, Text: "X̃ ← RMSNorm(X | γ¹_l, ε)", Shape: col("d_e", c.Embed)},
		{Depth: 1, Text: "Q ← W_q^l X̃ + b_q^l 1ᵀ;  K ← W_k^l X̃ + b_k^l 1ᵀ;  V ← W_v^l X̃ + b_v^l 1ᵀ", Shape: fmt.Sprintf("Q: %s, K, V: %s", col(q, qn), col(kv, kvn))},
		{Depth: 1, Text: "Q, K ← RoPE(Q, K | d_rope, θ_rope, YaRN(s_rope, ℓ_orig)), rotating half-split pairs (i, i + d_rope/2)"},
		{Depth: 1, Text: "Mask[t', t] ← 0 if t' ≤ t (and, when (l − 1) mod P < P − 1, t − t' < W) else −∞"},
		{Depth: 1, Text: "for h ∈ [H]: g ← ⌈h·H_kv/H⌉; S ← K_gᵀ Q_h / √d_h + Mask; " +
			"A[t', t] ← e^{S[t', t]} / (Σ_{t''} e^{S[t'', t]} + e^{σ^l[h]}); Y_h ← V_g A", Shape: col("d_h", c.HeadDim)},
		{Depth: 1, Text: "X ← X + W_o^l [Y_1; …; Y_H] + b_o^l 1ᵀ", Shape: col("d_e", c.Embed)},
		{Depth: 1, Text: "X̃ ← RMSNorm(X | γ²_l, ε)", Shape: col("d_e", c.Embed)},
		{Depth: 1, Text: "R ← W_r^l X̃ + b_r^l 1ᵀ", Shape: col("N_E", c.Experts)},
		{Depth: 1, Text: "for t ∈ [ℓ]: S_t ← the k rows e of largest R[e, t]; p_e ← softmax over S_t of R[·, t]"},
		{Depth: 1, Text: "for t ∈ [ℓ], e ∈ S_t: g ← min(W_gate^{l,e} X̃[:, t] + b_gate^{l,e}, 7); u ← clamp(W_up^{l,e} X̃[:, t] + b_up^{l,e}, −7, 7)",
			Shape: "d_mlp"},
		{Depth: 1, Text: "for t ∈ [ℓ]: X[:, t] ← X[:, t] + Σ_{e ∈ S_t} p_e · (W_down^{l,e} (g ⊙ σ(1.702 g) ⊙ (u + 1)) + b_down^{l,e})",
			Shape: "d_e"},
		{Text: "end for"},
		{Text: "X ← RMSNorm(X | γ, ε)", Shape: col("d_e", c.Embed)},
		{Text: "return P = softmax(W_u X), column by column", Shape: col("N_V", c.VocabSize)},
	}
	k.Notes = []string{
		"Layers count from 1 here: the windowed layers are llama.cpp's layers 0, 2, 4, … (P = 2).",
		"YaRN as llama.cpp runs it: pairs turning more than β_fast times over ℓ_orig keep their angle, fewer than β_slow times are divided by s_rope, a linear ramp between; cos and sin × (1 + 0.1 ln s_rope).",
	}
	k.ParamCount = c.ParamCount()
	return k
}

// ParamCount is the number of weights a model with configuration c holds
// (all experts, not only the k a token uses).
func (c Config) ParamCount() int64 {
	V, D, F, E := int64(c.VocabSize), int64(c.Embed), int64(c.FFN), int64(c.Experts)
	q, kv := int64(c.Heads*c.HeadDim), int64(c.KVHeads*c.HeadDim)
	attn := D*q + q + 2*(D*kv+kv) + q*D + D + int64(c.Heads)
	moe := E*D + E + 2*E*(F*D+F) + E*(D*F+D)
	return 2*V*D + int64(c.Layers)*(2*D+attn+moe) + D
}

// ConfigFromCard reads a Config from a card's hyperparameters.
func ConfigFromCard(k *card.Card) (any, error) {
	var c Config
	r := k.Reader()
	r.Int("vocab_size", &c.VocabSize)
	r.Int("context_length", &c.ContextLength)
	r.Int("embed", &c.Embed)
	r.Int("layers", &c.Layers)
	r.Int("ffn", &c.FFN)
	r.Int("experts", &c.Experts)
	r.Int("experts_used", &c.ExpertsUsed)
	r.Int("heads", &c.Heads)
	r.Int("kv_heads", &c.KVHeads)
	r.Int("head_dim", &c.HeadDim)
	r.Int("rope_dim", &c.RopeDim)
	r.Float("rope_base", &c.RopeBase)
	r.Float("rope_scale", &c.RopeScaleFactor)
	r.Int("rope_orig_context", &c.RopeOrigContext)
	r.Float("rope_attn_factor", &c.RopeAttnFactor)
	r.Float("yarn_beta_fast", &c.YarnBetaFast)
	r.Float("yarn_beta_slow", &c.YarnBetaSlow)
	r.Int("window", &c.Window)
	r.Int("window_period", &c.WindowPeriod)
	r.Float("norm_eps", &c.NormEps)
	return r.Config(c, c.Validate())
}

// cardFromHeader makes the card from metadata alone; features toy cannot run
// yet become notes instead of errors, so that every gpt-oss file can be
// described.
func cardFromHeader(h *gguf.File) (*card.Card, error) {
	c, lacking, err := readConfig(h)
	if err != nil {
		return nil, err
	}
	k := c.Card()
	for _, l := range lacking {
		k.Notes = append(k.Notes, l+" is not in this card, and toy does not run it yet")
	}
	return k, nil
}
