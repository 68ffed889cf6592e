// The algorithm card of a Llama-family model (Phuong & Hutter's DTransformer
// with RMSNorm, RoPE, grouped-query attention and SwiGLU).

package llama

import (
	"fmt"
	"slices"
	"strings"

	"github.com/toyml/toy/toy/card"
	"github.com/toyml/toy/toy/gguf"
	"github.com/toyml/toy/toy/nn"
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
		if a := m.Blocks[i].Attn; a.Q != nil {
			ws = append(ws, a.Q.W, a.K.W, a.V.W, a.O.W)
		}
		if f, ok := m.Blocks[i].FFN.(*nn.SwiGLU); ok && f.Gate != nil {
			ws = append(ws, f.Gate.W, f.Up.W, f.Down.W)
		}
	}
	c.Quant = card.DominantType(ws)
	return c
}

// Card returns the algorithm card of a model with configuration c.
func (c Config) Card() *card.Card {
	q, kv := "H·d_h", "H_kv·d_h"
	qn, kvn := c.Heads*c.HeadDim, c.KVHeads*c.HeadDim
	bias, qkNorm := c.QKVBias(), c.QKNorm()
	col := func(sym string, rows int) string { return fmt.Sprintf("%s × ℓ = %d × ℓ", sym, rows) }
	pairs := "adjacent pairs (2i, 2i+1)"
	summary := "Llama: a decoder-only transformer with pre-RMSNorm, rotary positions, grouped-query attention and a SwiGLU MLP."
	if c.RopeNeoX {
		pairs = "half-split pairs (i, i + d_rope/2)"
	}
	switch {
	case bias:
		summary = "Qwen2: the Llama transformer with biases on the query, key and value projections and half-split RoPE pairs."
	case qkNorm:
		summary = "Qwen3: the Llama transformer with each query and key head RMS-normalised before half-split RoPE."
	}
	moe := c.Experts > 0
	switch {
	case moe && qkNorm:
		summary = "Qwen3-MoE: the Qwen3 transformer with a mixture of SwiGLU experts in place of the MLP."
	case moe && bias:
		summary = "Qwen2-MoE: the Qwen2 transformer with a mixture of SwiGLU experts and a gated shared expert in place of the MLP."
	case moe && c.Granite():
		summary = "Granite-MoE: the Granite transformer with a mixture of SwiGLU experts in place of the MLP."
	case moe:
		summary = "Mixtral: the Llama transformer with a mixture of SwiGLU experts in place of the MLP."
	case c.Arch == "mistral3":
		summary = "Ministral 3: the Llama transformer with YaRN's magnitude set by its log multiplier and queries sharpened far into a long context."
	case c.Arch == "exaone":
		summary = "EXAONE: the Llama transformer with half-split RoPE pairs."
	case c.Arch == "smollm3":
		summary = "SmolLM3: the Llama transformer with no positions (NoPE) in every fourth layer."
	case c.Granite():
		summary = "Granite: the Llama transformer with multipliers on the embeddings, the residual branches, the attention scores and the logits."
	}
	k := card.NewDecoder(c.Arch, summary,
		c.VocabSize, c.ContextLength, c.Embed, c.Layers)
	k.Hyper = append(k.Hyper, []card.Hyper{
		{Symbol: "d_mlp", Value: card.Int(c.FFN), Key: "ffn", Meaning: "feed-forward width"},
		{Symbol: "H", Value: card.Int(c.Heads), Key: "heads", Meaning: "query heads"},
		{Symbol: "H_kv", Value: card.Int(c.KVHeads), Key: "kv_heads", Meaning: "key/value heads (grouped-query attention when < H)"},
		{Symbol: "d_h", Value: card.Int(c.HeadDim), Key: "head_dim", Meaning: "head width"},
		{Symbol: "d_rope", Value: card.Int(c.RopeDim), Key: "rope_dim", Meaning: "features rotated per head"},
		{Symbol: "θ_rope", Value: card.Float(c.RopeBase), Key: "rope_base", Meaning: "RoPE frequency base"},
		{Symbol: "neox", Value: card.Bool(c.RopeNeoX), Key: "rope_neox", Meaning: "RoPE rotates half-split pairs, not adjacent ones"},
		{Symbol: "ε", Value: card.Float(c.NormEps), Key: "norm_eps", Meaning: "RMSNorm epsilon"},
		{Symbol: "tied", Value: card.Bool(c.TiedOutput), Key: "tied_output", Meaning: "the unembedding is the token embedding (W_u = W_eᵀ)"},
	}...)
	rope := fmt.Sprintf("Q, K ← RoPE(Q, K | d_rope, θ_rope), rotating %s", pairs)
	if c.RopeFreqs {
		k.Hyper = append(k.Hyper, card.Hyper{Symbol: "f_rope", Value: card.Bool(true), Key: "rope_freqs",
			Meaning: "pair i's RoPE angle is divided by the frequency factor f[i]"})
		rope = fmt.Sprintf("Q, K ← RoPE(Q, K | d_rope, θ_rope, f), rotating %s by angles pos·θ_rope^(−2i/d_rope)/f[i]", pairs)
	}
	switch c.RopeScaling {
	case "linear":
		k.Hyper = append(k.Hyper,
			card.Hyper{Symbol: "scaling", Value: c.RopeScaling, Key: "rope_scaling", Meaning: "RoPE scaling for a longer context"},
			card.Hyper{Symbol: "s_rope", Value: card.Float(c.RopeScaleFactor), Key: "rope_scale", Meaning: "every RoPE angle is divided by s_rope"})
		rope += "; every angle divided by s_rope (linear position interpolation)"
	case "yarn":
		k.Hyper = append(k.Hyper,
			card.Hyper{Symbol: "scaling", Value: c.RopeScaling, Key: "rope_scaling", Meaning: "RoPE scaling for a longer context"},
			card.Hyper{Symbol: "s_rope", Value: card.Float(c.RopeScaleFactor), Key: "rope_scale", Meaning: "YaRN stretch factor"},
			card.Hyper{Symbol: "ℓ_orig", Value: card.Int(c.RopeOrigContext), Key: "rope_orig_context", Meaning: "context before the stretch"})
		rope += "; YaRN: pairs turning fewer than once over ℓ_orig positions divided by s_rope, more than 32 times kept, a linear ramp between; cos, sin × (1 + 0.1 ln s_rope)"
	}
	if c.Arch == "smollm3" {
		rope += "; none in layers l with l mod 4 = 0 (NoPE)"
	}
	if c.RopeAttnFactor != 0 {
		k.Hyper = append(k.Hyper, card.Hyper{Symbol: "m_rope", Value: card.Float(c.RopeAttnFactor), Key: "rope_attn_factor", Meaning: "RoPE's cos and sin are multiplied by m_rope"})
		rope += "; cos, sin × m_rope"
	}
	per := func(sym, shape, meaning string) card.Param {
		return card.Param{Symbol: sym, Shape: shape, Meaning: meaning, PerLayer: true}
	}
	k.Params = []card.Param{{Symbol: "W_e", Shape: "d_e × N_V", Meaning: "token embedding"}}
	if c.RopeFreqs {
		k.Params = append(k.Params, card.Param{Symbol: "f", Shape: "d_rope/2", Meaning: "RoPE frequency factors (a constant, not trained)"})
	}
	k.Params = append(k.Params,
		per("γ¹_l", "d_e", "attention RMSNorm scale"),
		per("W_q^l", q+" × d_e", "query projection"))
	if bias {
		k.Params = append(k.Params, per("b_q^l", q, "query bias"))
	}
	k.Params = append(k.Params, per("W_k^l", kv+" × d_e", "key projection"))
	if bias {
		k.Params = append(k.Params, per("b_k^l", kv, "key bias"))
	}
	k.Params = append(k.Params, per("W_v^l", kv+" × d_e", "value projection"))
	if bias {
		k.Params = append(k.Params, per("b_v^l", kv, "value bias"))
	}
	if qkNorm {
		k.Params = append(k.Params, per("γq_l", "d_h", "query head RMSNorm scale"), per("γk_l", "d_h", "key head RMSNorm scale"))
	}
	k.Params = append(k.Params,
		per("W_o^l", "d_e × "+q, "attention output projection"),
		per("γ²_l", "d_e", "MLP RMSNorm scale"))
	mlp, mlpShape := "X ← X + W_down^l (SiLU(W_gate^l X̃) ⊙ W_up^l X̃)", col("d_e", c.Embed)+" (inside: d_mlp × ℓ)"
	if moe {
		k.Hyper = append(k.Hyper,
			card.Hyper{Symbol: "E", Value: card.Int(c.Experts), Key: "experts", Meaning: "experts per layer"},
			card.Hyper{Symbol: "k", Value: card.Int(c.ExpertsUsed), Key: "experts_used", Meaning: "experts run per token"},
			card.Hyper{Symbol: "d_exp", Value: card.Int(c.ExpertFFN), Key: "expert_ffn", Meaning: "expert width"})
		k.Params = append(k.Params,
			per("W_r^l", "E × d_e", "router"),
			per("W_gate^{l,e}", "d_exp × d_e", "expert e's gate, e ∈ [E]"),
			per("W_up^{l,e}", "d_exp × d_e", "expert e's up projection"),
			per("W_down^{l,e}", "d_e × d_exp", "expert e's down projection"))
		mlpShape = col("d_e", c.Embed) + " (inside: d_exp × k per token)"
		weight := "(p_e / Σ_{e' ∈ S} p_e')"
		if !c.NormalizeExperts() {
			weight = "p_e"
		}
		mlp = "for t ∈ [ℓ]: p ← softmax(W_r^l X̃[:, t]); S ← the k largest p_e; " +
			"X[:, t] ← X[:, t] + Σ_{e ∈ S} " + weight + " W_down^{l,e} (SiLU(W_gate^{l,e} X̃[:, t]) ⊙ W_up^{l,e} X̃[:, t])"
		if c.SharedFFN > 0 {
			k.Hyper = append(k.Hyper, card.Hyper{Symbol: "d_sh", Value: card.Int(c.SharedFFN), Key: "shared_ffn", Meaning: "shared expert width"})
			k.Params = append(k.Params,
				per("w_s^l", "d_e", "shared expert gate"),
				per("W_gate^{l,s}", "d_sh × d_e", "shared expert's gate"),
				per("W_up^{l,s}", "d_sh × d_e", "shared expert's up projection"),
				per("W_down^{l,s}", "d_e × d_sh", "shared expert's down projection"))
			mlp += " + σ(w_s^l · X̃[:, t]) W_down^{l,s} (SiLU(W_gate^{l,s} X̃[:, t]) ⊙ W_up^{l,s} X̃[:, t])"
		}
	} else {
		k.Params = append(k.Params,
			per("W_gate^l", "d_mlp × d_e", "MLP gate"),
			per("W_up^l", "d_mlp × d_e", "MLP up projection"),
			per("W_down^l", "d_e × d_mlp", "MLP down projection"))
	}
	k.Params = append(k.Params, card.Param{Symbol: "γ", Shape: "d_e", Meaning: "final RMSNorm scale"})
	if c.TiedOutput {
		k.Params = append(k.Params, card.Param{Symbol: "W_u = W_eᵀ", Shape: "N_V × d_e", Meaning: "unembedding, tied to the token embedding"})
	} else {
		k.Params = append(k.Params, card.Param{Symbol: "W_u", Shape: "N_V × d_e", Meaning: "unembedding"})
	}
	qkv := "Q ← W_q^l X̃;  K ← W_k^l X̃;  V ← W_v^l X̃"
	if bias {
		qkv = "Q ← W_q^l X̃ + b_q^l 1ᵀ;  K ← W_k^l X̃ + b_k^l 1ᵀ;  V ← W_v^l X̃ + b_v^l 1ᵀ"
	}
	// Granite's multipliers, each where it applies.
	embed, resid, score, logits := "", "", "/ √d_h", "W_u X"
	if c.EmbedScale != 0 {
		k.Hyper = append(k.Hyper, card.Hyper{Symbol: "s_e", Value: card.Float(c.EmbedScale), Key: "embedding_scale", Meaning: "the token embeddings are multiplied by s_e"})
		embed = "s_e "
	}
	if c.ResidualScale != 0 {
		k.Hyper = append(k.Hyper, card.Hyper{Symbol: "s_r", Value: card.Float(c.ResidualScale), Key: "residual_scale", Meaning: "each sublayer's output is multiplied by s_r before it joins the residual stream"})
		resid = "s_r "
		mlp = strings.Replace(mlp, "+ ", "+ s_r ", 1)
	}
	if c.AttnScale != 0 {
		k.Hyper = append(k.Hyper, card.Hyper{Symbol: "s_a", Value: card.Float(c.AttnScale), Key: "attention_scale", Meaning: "the attention scores are multiplied by s_a (in place of 1/√d_h)"})
		score = "· s_a"
	}
	for _, h := range []struct {
		sym, key, meaning string
		v                 float32
	}{
		{"β_fast", "yarn_beta_fast", "YaRN keeps pairs turning more than β_fast times over ℓ_orig (0: 32)", c.YarnBetaFast},
		{"β_slow", "yarn_beta_slow", "YaRN divides pairs turning fewer than β_slow times by s_rope (0: 1)", c.YarnBetaSlow},
		{"m_log", "yarn_log_mul", "cos, sin × (1 + 0.1 ln s_rope)/(1 + 0.1·m_log·ln s_rope) in place of YaRN's magnitude", c.YarnLogMul},
		{"τ", "attn_temperature", "queries at position p × (1 + τ·ln(⌊p/ℓ_orig⌋ + 1)), after RoPE", c.AttnTemperature},
	} {
		if h.v != 0 {
			k.Hyper = append(k.Hyper, card.Hyper{Symbol: h.sym, Value: card.Float(h.v), Key: h.key, Meaning: h.meaning})
		}
	}
	if c.AttnTemperature != 0 {
		rope += "; then Q[:, t] ← (1 + τ·ln(⌊t/ℓ_orig⌋ + 1)) Q[:, t]"
		if c.RopeScaling != "yarn" {
			k.Hyper = append(k.Hyper, card.Hyper{Symbol: "ℓ_orig", Value: card.Int(c.RopeOrigContext), Key: "rope_orig_context", Meaning: "the temperature's step, in positions"})
		}
	}
	if c.LogitScale != 0 {
		k.Hyper = append(k.Hyper, card.Hyper{Symbol: "s_u", Value: card.Float(c.LogitScale), Key: "logit_scale", Meaning: "the logits are divided by s_u"})
		logits = "W_u X / s_u"
	}
	steps := []card.Step{
		{Text: "ℓ ← length(x)"},
		{Text: "for t ∈ [ℓ]: X[:, t] ← " + embed + "W_e[:, x[t]]", Shape: col("d_e", c.Embed)},
		{Text: "for l = 1, 2, …, L do"},
		{Depth: 1, Text: "X̃ ← RMSNorm(X | γ¹_l, ε)", Shape: col("d_e", c.Embed)},
		{Depth: 1, Text: qkv, Shape: fmt.Sprintf("Q: %s, K, V: %s", col(q, qn), col(kv, kvn))},
		{Depth: 1, Text: rope},
	}
	if qkNorm {
		steps = slices.Insert(steps, len(steps)-1, card.Step{Depth: 1, Text: "for h ∈ [H]: Q_h ← RMSNorm(Q_h | γq_l, ε); for g ∈ [H_kv]: K_g ← RMSNorm(K_g | γk_l, ε)", Shape: col("d_h", c.HeadDim)})
	}
	steps = append(steps, []card.Step{
		{Depth: 1, Text: "for h ∈ [H]: g ← ⌈h·H_kv/H⌉; Y_h ← V_g softmax(K_gᵀ Q_h " + score + " + Mask)", Shape: col("d_h", c.HeadDim)},
		{Depth: 1, Text: "X ← X + " + resid + "W_o^l [Y_1; …; Y_H]", Shape: col("d_e", c.Embed)},
		{Depth: 1, Text: "X̃ ← RMSNorm(X | γ²_l, ε)", Shape: col("d_e", c.Embed)},
		{Depth: 1, Text: mlp, Shape: mlpShape},
		{Text: "end for"},
		{Text: "X ← RMSNorm(X | γ, ε)", Shape: col("d_e", c.Embed)},
		{Text: "return P = softmax(" + logits + "), column by column", Shape: col("N_V", c.VocabSize)},
	}...)
	k.Steps = steps
	k.Notes = []string{"Mask[t', t] = 0 if t' ≤ t else −∞ (causal); softmax runs over each column."}
	k.ParamCount = c.ParamCount()
	return k
}

// ParamCount is the number of weights a model with configuration c holds.
func (c Config) ParamCount() int64 {
	V, D, F := int64(c.VocabSize), int64(c.Embed), int64(c.FFN)
	q, kv := int64(c.Heads*c.HeadDim), int64(c.KVHeads*c.HeadDim)
	layer := 2*D + D*q + 2*D*kv + q*D + 3*D*F
	if c.Experts > 0 {
		E := int64(c.Experts)
		layer += E*D + E*3*D*int64(c.ExpertFFN) - 3*D*F
		if c.SharedFFN > 0 {
			layer += D + 3*D*int64(c.SharedFFN)
		}
	}
	if c.QKVBias() {
		layer += q + 2*kv
	}
	if c.QKNorm() {
		layer += 2 * int64(c.HeadDim)
	}
	n := V*D + int64(c.Layers)*layer + D
	if !c.TiedOutput {
		n += V * D
	}
	return n
}

// ConfigFromCard reads a Config from a card's hyperparameters.
func ConfigFromCard(k *card.Card) (any, error) {
	c := Config{Arch: k.Arch}
	r := k.Reader()
	r.Int("vocab_size", &c.VocabSize)
	r.Int("context_length", &c.ContextLength)
	r.Int("embed", &c.Embed)
	r.Int("layers", &c.Layers)
	r.Int("ffn", &c.FFN)
	r.Int("heads", &c.Heads)
	r.Int("kv_heads", &c.KVHeads)
	r.Int("head_dim", &c.HeadDim)
	r.Int("rope_dim", &c.RopeDim)
	r.Float("rope_base", &c.RopeBase)
	r.Float("norm_eps", &c.NormEps)
	r.Bool("rope_neox", &c.RopeNeoX)
	r.Bool("tied_output", &c.TiedOutput)
	if r.Has("rope_freqs") { // cards before rope_freqs lack the key
		r.Bool("rope_freqs", &c.RopeFreqs)
	}
	if r.Has("rope_scaling") {
		r.String("rope_scaling", &c.RopeScaling)
		r.Float("rope_scale", &c.RopeScaleFactor)
	}
	if r.Has("rope_orig_context") {
		r.Int("rope_orig_context", &c.RopeOrigContext)
	}
	if r.Has("rope_attn_factor") {
		r.Float("rope_attn_factor", &c.RopeAttnFactor)
	}
	if r.Has("experts") {
		r.Int("experts", &c.Experts)
		r.Int("experts_used", &c.ExpertsUsed)
		r.Int("expert_ffn", &c.ExpertFFN)
	}
	if r.Has("shared_ffn") {
		r.Int("shared_ffn", &c.SharedFFN)
	}
	for key, v := range map[string]*float32{"embedding_scale": &c.EmbedScale, "residual_scale": &c.ResidualScale,
		"attention_scale": &c.AttnScale, "logit_scale": &c.LogitScale, "yarn_beta_fast": &c.YarnBetaFast,
		"yarn_beta_slow": &c.YarnBetaSlow, "yarn_log_mul": &c.YarnLogMul, "attn_temperature": &c.AttnTemperature} {
		if r.Has(key) {
			r.Float(key, v)
		}
	}
	return r.Config(c, c.Validate())
}

// cardFromHeader makes the card from metadata alone; features toy cannot run
// yet become notes instead of errors, so that every Llama file can be described.
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
