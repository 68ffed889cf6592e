// The algorithm card of a DeepSeek-V2 model (Phuong & Hutter's DTransformer
// with multi-head latent attention and a mixture of experts with shared
// experts).

package deepseek2

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
	for _, w := range m.Weights() {
		if len(w.T.Shape()) >= 2 {
			ws = append(ws, w.T)
		}
	}
	c.Quant = card.DominantType(ws)
	return c
}

// Card returns the algorithm card of a model with configuration c.
func (c Config) Card() *card.Card {
	col := func(sym string, rows int) string { return fmt.Sprintf("%s × ℓ = %d × ℓ", sym, rows) }
	hy := func(sym, value, key, meaning string) card.Hyper {
		return card.Hyper{Symbol: sym, Value: value, Key: key, Meaning: meaning}
	}
	k := card.NewDecoder(Arch, "DeepSeek-V2: a decoder-only transformer with pre-RMSNorm, multi-head latent attention (keys and values "+
		"decompressed from one low-rank latent per token, RoPE on a separate part of each head), and, after the first "+
		"dense layers, a mixture of SwiGLU experts beside always-on shared experts.",
		c.VocabSize, c.ContextLength, c.Embed, c.Layers)
	k.Hyper = append(k.Hyper,
		hy("L_d", card.Int(c.DenseLayers), "dense_layers", "leading layers with a dense MLP"),
		hy("d_mlp", card.Int(c.FFN), "ffn", "dense MLP width"),
		hy("H", card.Int(c.Heads), "heads", "attention heads"),
		hy("r_q", card.Int(c.QLoRARank), "q_lora_rank", "query bottleneck width (0: none)"),
		hy("r_kv", card.Int(c.KVLoRARank), "kv_lora_rank", "key/value latent width"),
		hy("d_k", card.Int(c.KeyDim), "key_dim", "query/key head width"),
		hy("d_v", card.Int(c.ValueDim), "value_dim", "value head width"),
		hy("d_r", card.Int(c.RopeDim), "rope_dim", "rotated features at the end of each query/key head"),
		hy("split", card.Bool(c.SplitKVB), "split_kv_b", "W_kb, W_vb stored apart (attn_k_b, attn_v_b), not as attn_kv_b"),
		hy("θ_rope", card.Float(c.RopeBase), "rope_base", "RoPE frequency base"),
		hy("ε", card.Float(c.NormEps), "norm_eps", "RMSNorm epsilon"),
		hy("tied", card.Bool(c.TiedOutput), "tied_output", "the unembedding is the token embedding (W_u = W_eᵀ)"),
	)
	moe := c.DenseLayers < c.Layers
	if moe {
		k.Hyper = append(k.Hyper,
			hy("E", card.Int(c.Experts), "experts", "routed experts per MoE layer"),
			hy("k", card.Int(c.ExpertsUsed), "experts_used", "experts run per token"),
			hy("d_exp", card.Int(c.ExpertFFN), "expert_ffn", "expert width"),
			hy("E_s", card.Int(c.SharedExperts), "shared_experts", "shared experts (one SwiGLU of width E_s·d_exp)"),
			hy("gate", c.ExpertGating, "expert_gating", "router scores: softmax over the experts, or a sigmoid each"),
			hy("bias", card.Bool(c.ExpertBias), "expert_bias", "a bias b^l on the scores chooses the experts"),
			hy("norm", card.Bool(c.ExpertWeightsNorm), "expert_weights_norm", "the k weights are divided by their sum"),
			hy("s_w", card.Float(c.ExpertWeightsScale), "expert_weights_scale", "the k weights are multiplied by s_w (0: 1)"),
			hy("G", card.Int(c.ExpertGroups), "expert_groups", "expert groups (≤ 1: no group-limited routing)"),
			hy("G_u", card.Int(c.ExpertGroupsUsed), "expert_groups_used", "groups a token's experts come from"))
	}
	switch c.RopeScaling {
	case "linear":
		k.Hyper = append(k.Hyper,
			hy("scaling", c.RopeScaling, "rope_scaling", "RoPE scaling for a longer context"),
			hy("s_rope", card.Float(c.RopeScaleFactor), "rope_scale", "every RoPE angle is divided by s_rope"))
	case "yarn":
		k.Hyper = append(k.Hyper,
			hy("scaling", c.RopeScaling, "rope_scaling", "RoPE scaling for a longer context"),
			hy("s_rope", card.Float(c.RopeScaleFactor), "rope_scale", "YaRN stretch factor"),
			hy("ℓ_orig", card.Int(c.RopeOrigContext), "rope_orig_context", "context before the stretch"))
	}
	if c.RopeAttnFactor != 0 {
		k.Hyper = append(k.Hyper, hy("m_rope", card.Float(c.RopeAttnFactor), "rope_attn_factor", "RoPE's cos and sin are multiplied by m_rope"))
	}
	if c.YarnLogMul != 0 {
		k.Hyper = append(k.Hyper, hy("μ", card.Float(c.YarnLogMul), "yarn_log_mul", "0.1·mscale_all_dim: enlarges the attention scale under YaRN"))
	}

	per := func(sym, shape, meaning string) card.Param {
		return card.Param{Symbol: sym, Shape: shape, Meaning: meaning, PerLayer: true}
	}
	k.Params = []card.Param{{Symbol: "W_e", Shape: "d_e × N_V", Meaning: "token embedding"}, per("γ¹_l", "d_e", "attention RMSNorm scale")}
	query := "Q ← W_q^l X̃"
	if c.QLoRARank > 0 {
		k.Params = append(k.Params,
			per("W_qa^l", "r_q × d_e", "query down-projection"),
			per("γq_l", "r_q", "query bottleneck RMSNorm scale"),
			per("W_qb^l", "H·d_k × r_q", "query up-projection"))
		query = "Q ← W_qb^l RMSNorm(W_qa^l X̃ | γq_l, ε)"
	} else {
		k.Params = append(k.Params, per("W_q^l", "H·d_k × d_e", "query projection"))
	}
	k.Params = append(k.Params,
		per("W_kva^l", "(r_kv + d_r) × d_e", "latent and rotated-key projection"),
		per("γkv_l", "r_kv", "latent RMSNorm scale"))
	if c.SplitKVB {
		k.Params = append(k.Params,
			per("W_kb^{l,h}", "r_kv × (d_k − d_r)", "head h's key up-projection, transposed (attn_k_b)"),
			per("W_vb^{l,h}", "d_v × r_kv", "head h's value up-projection (attn_v_b)"))
	} else {
		k.Params = append(k.Params, per("W_kvb^l", "H·(d_k − d_r + d_v) × r_kv", "keys' and values' up-projection, head by head"))
	}
	k.Params = append(k.Params,
		per("W_o^l", "d_e × H·d_v", "attention output projection"),
		per("γ²_l", "d_e", "feed-forward RMSNorm scale"),
		per("W_gate^l, W_up^l", "d_mlp × d_e", "dense MLP (l ≤ L_d)"),
		per("W_down^l", "d_e × d_mlp", "dense MLP down projection (l ≤ L_d)"))
	if moe {
		k.Params = append(k.Params,
			per("W_r^l", "E × d_e", "router (l > L_d)"),
			per("W_gate^{l,e}, W_up^{l,e}", "d_exp × d_e", "expert e's gate and up projections"),
			per("W_down^{l,e}", "d_e × d_exp", "expert e's down projection"))
		if c.ExpertBias {
			k.Params = append(k.Params, per("b^l", "E", "expert-choice bias (a constant, not trained)"))
		}
		if c.SharedExperts > 0 {
			k.Params = append(k.Params,
				per("W_gate^{l,s}, W_up^{l,s}", "E_s·d_exp × d_e", "shared experts' gate and up projections"),
				per("W_down^{l,s}", "d_e × E_s·d_exp", "shared experts' down projection"))
		}
	}
	k.Params = append(k.Params, card.Param{Symbol: "γ", Shape: "d_e", Meaning: "final RMSNorm scale"})
	if c.TiedOutput {
		k.Params = append(k.Params, card.Param{Symbol: "W_u = W_eᵀ", Shape: "N_V × d_e", Meaning: "unembedding, tied to the token embedding"})
	} else {
		k.Params = append(k.Params, card.Param{Symbol: "W_u", Shape: "N_V × d_e", Meaning: "unembedding"})
	}

	rope := "RoPE(· | d_r, θ_rope), rotating adjacent pairs (2i, 2i+1)"
	switch c.RopeScaling {
	case "linear":
		rope += ", angles divided by s_rope"
	case "yarn":
		rope += ", YaRN-stretched by s_rope over ℓ_orig"
	}
	decompress := "for h ∈ [H]: K_h ← [W_kb^{l,h}ᵀ C; K_r];  V_h ← W_vb^{l,h} C"
	if !c.SplitKVB {
		decompress = "[K_1^n; V_1; …; K_H^n; V_H] ← W_kvb^l C;  for h ∈ [H]: K_h ← [K_h^n; K_r]"
	}
	score := fmt.Sprintf("s = %s", card.Float(c.AttnScale()))
	k.Steps = []card.Step{
		{Text: "ℓ ← length(x)"},
		{Text: "for t ∈ [ℓ]: X[:, t] ← W_e[:, x[t]]", Shape: col("d_e", c.Embed)},
		{Text: "for l = 1, 2, …, L do"},
		{Depth: 1, Text: "X̃ ← RMSNorm(X | γ¹_l, ε)", Shape: col("d_e", c.Embed)},
		{Depth: 1, Text: query + ";  for h ∈ [H]: Q_h ← [Q_h^n; " + rope + " of Q_h^r]", Shape: col("H·d_k", c.Heads*c.KeyDim)},
		{Depth: 1, Text: "[C; K_r] ← W_kva^l X̃;  C ← RMSNorm(C | γkv_l, ε);  K_r ← RoPE(K_r)", Shape: col("r_kv + d_r", c.KVLoRARank+c.RopeDim)},
		{Depth: 1, Text: decompress, Shape: fmt.Sprintf("K_h: %s, V_h: %s", col("d_k", c.KeyDim), col("d_v", c.ValueDim))},
		{Depth: 1, Text: "for h ∈ [H]: Y_h ← V_h softmax(s · K_hᵀ Q_h + Mask), " + score, Shape: col("d_v", c.ValueDim)},
		{Depth: 1, Text: "X ← X + W_o^l [Y_1; …; Y_H]", Shape: col("d_e", c.Embed)},
		{Depth: 1, Text: "X̃ ← RMSNorm(X | γ²_l, ε)", Shape: col("d_e", c.Embed)},
		{Depth: 1, Text: "if l ≤ L_d: X ← X + W_down^l (SiLU(W_gate^l X̃) ⊙ W_up^l X̃)", Shape: col("d_e", c.Embed)},
	}
	if moe {
		scores := "p ← softmax(W_r^l X̃[:, t])"
		if c.ExpertGating == "sigmoid" {
			scores = "p ← σ(W_r^l X̃[:, t])"
		}
		choose := "p"
		if c.ExpertBias {
			choose = "p + b^l"
		}
		pick := "S ← the k largest entries of " + choose
		if c.ExpertGroups > 1 {
			pick = "S ← the k largest entries of " + choose + " among the G_u groups (of E/G) whose best two sum highest"
		}
		w := "p_e"
		if c.ExpertWeightsNorm {
			w = "p_e / Σ_{e' ∈ S} p_e'"
		}
		if c.ExpertWeightsScale != 0 && c.ExpertWeightsScale != 1 {
			w = "s_w · " + w
		}
		shared := ""
		if c.SharedExperts > 0 {
			shared = " + W_down^{l,s} (SiLU(W_gate^{l,s} X̃[:, t]) ⊙ W_up^{l,s} X̃[:, t])"
		}
		k.Steps = append(k.Steps,
			card.Step{Depth: 1, Text: "else for t ∈ [ℓ]: " + scores + ";  " + pick},
			card.Step{Depth: 2, Text: "X[:, t] ← X[:, t] + Σ_{e ∈ S} " + w + " · W_down^{l,e} (SiLU(W_gate^{l,e} X̃[:, t]) ⊙ W_up^{l,e} X̃[:, t])" + shared,
				Shape: "d_e (inside: d_exp × k, E_s·d_exp)"})
	}
	k.Steps = append(k.Steps,
		card.Step{Text: "end for"},
		card.Step{Text: "X ← RMSNorm(X | γ, ε)", Shape: col("d_e", c.Embed)},
		card.Step{Text: "return P = softmax(W_u X), column by column", Shape: col("N_V", c.VocabSize)})
	k.Notes = []string{
		"Mask[t', t] = 0 if t' ≤ t else −∞ (causal); softmax runs over each column.",
		"Q_h^n, K_h^n are a head's first d_k − d_r features, Q_h^r its last d_r; K_r is one rotated key every head shares.",
		"s = m²/√d_k, where m = 1 without YaRN and DeepSeek's YaRN temperature with it (llama.cpp's formula; Config.AttnScale).",
	}
	k.ParamCount = c.ParamCount()
	return k
}

// ParamCount is the number of weights a model with configuration c holds
// (all experts, not only the k a token uses).
func (c Config) ParamCount() int64 {
	V, D, F, H := int64(c.VocabSize), int64(c.Embed), int64(c.FFN), int64(c.Heads)
	Dk, Dv, Dr, R, Rq := int64(c.KeyDim), int64(c.ValueDim), int64(c.RopeDim), int64(c.KVLoRARank), int64(c.QLoRARank)
	attn := 2*D + (R+Dr)*D + R + H*(Dk-Dr+Dv)*R + D*H*Dv // norms, W_kva, γkv, W_kb and W_vb, W_o
	if Rq > 0 {
		attn += Rq*D + Rq + H*Dk*Rq
	} else {
		attn += H * Dk * D
	}
	dense := attn + 3*D*F
	E, Fe, Fs := int64(c.Experts), int64(c.ExpertFFN), int64(c.SharedExperts*c.ExpertFFN)
	sparse := attn + E*D + 3*E*D*Fe + 3*D*Fs
	if c.ExpertBias {
		sparse += E
	}
	n := V*D + int64(c.DenseLayers)*dense + int64(c.Layers-c.DenseLayers)*sparse + D
	if !c.TiedOutput {
		n += V * D
	}
	return n
}

// ConfigFromCard reads a Config from a card's hyperparameters.
func ConfigFromCard(k *card.Card) (any, error) {
	var c Config
	r := k.Reader()
	r.Int("vocab_size", &c.VocabSize)
	r.Int("context_length", &c.ContextLength)
	r.Int("embed", &c.Embed)
	r.Int("layers", &c.Layers)
	r.Int("dense_layers", &c.DenseLayers)
	r.Int("ffn", &c.FFN)
	r.Int("heads", &c.Heads)
	r.Int("q_lora_rank", &c.QLoRARank)
	r.Int("kv_lora_rank", &c.KVLoRARank)
	r.Int("key_dim", &c.KeyDim)
	r.Int("value_dim", &c.ValueDim)
	r.Int("rope_dim", &c.RopeDim)
	r.Bool("split_kv_b", &c.SplitKVB)
	r.Float("rope_base", &c.RopeBase)
	r.Float("norm_eps", &c.NormEps)
	r.Bool("tied_output", &c.TiedOutput)
	if r.Has("experts") {
		r.Int("experts", &c.Experts)
		r.Int("experts_used", &c.ExpertsUsed)
		r.Int("expert_ffn", &c.ExpertFFN)
		r.Int("shared_experts", &c.SharedExperts)
		r.String("expert_gating", &c.ExpertGating)
		r.Bool("expert_bias", &c.ExpertBias)
		r.Bool("expert_weights_norm", &c.ExpertWeightsNorm)
		r.Float("expert_weights_scale", &c.ExpertWeightsScale)
		r.Int("expert_groups", &c.ExpertGroups)
		r.Int("expert_groups_used", &c.ExpertGroupsUsed)
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
	if r.Has("yarn_log_mul") {
		r.Float("yarn_log_mul", &c.YarnLogMul)
	}
	return r.Config(c, c.Validate())
}

// cardFromHeader makes the card from metadata alone; features toy cannot run
// yet become notes instead of errors, so that every deepseek2 file can be
// described.
func cardFromHeader(h *gguf.File) (*card.Card, error) {
	c, lacking, err := readConfig(h)
	if err != nil && len(lacking) == 0 {
		return nil, err
	}
	k := c.Card()
	for _, l := range lacking {
		k.Notes = append(k.Notes, l+" is not in this card, and toy does not run it yet")
	}
	return k, nil
}
