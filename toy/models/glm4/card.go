// The algorithm card of GLM-4 and GLM-4.5: Phuong & Hutter's DTransformer
// with sandwich norms (glm4) or a sigmoid-routed mixture of experts
// (glm4moe), biased projections and partial RoPE.

package glm4

import (
	"fmt"

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
		b := &m.Blocks[i]
		if a := &b.Attn; a.Q != nil {
			ws = append(ws, a.Q.W, a.K.W, a.V.W, a.O.W)
		}
		switch ffn := b.FFN.(type) {
		case *MLP:
			if ffn.GateUp != nil {
				ws = append(ws, ffn.GateUp.W, ffn.Down.W)
			}
		case *nn.SwiGLU:
			if ffn.Gate != nil {
				ws = append(ws, ffn.Gate.W, ffn.Up.W, ffn.Down.W)
			}
		case *nn.MoE:
			if ffn.Gate != nil {
				ws = append(ws, ffn.Gate, ffn.Up, ffn.Down)
			}
		}
	}
	c.Quant = card.DominantType(ws)
	return c
}

// Card returns the algorithm card of a model with configuration c.
func (c Config) Card() *card.Card {
	col := func(sym string, rows int) string { return fmt.Sprintf("%s × ℓ = %d × ℓ", sym, rows) }
	moe := c.MoE()
	summary := "GLM-4: a decoder-only transformer with RMSNorms before and after each sublayer, biased query, key and value projections, " +
		"RoPE over part of each head in adjacent pairs, and a SwiGLU MLP whose gate and up projections are one matrix."
	if moe {
		summary = fmt.Sprintf("GLM-4.5: a pre-norm decoder with biased query, key and value projections and RoPE over part of each head in "+
			"half-split pairs; the first L_d = %d layers with a dense SwiGLU, the others with mixtures of %d SwiGLU experts, %d a token, chosen "+
			"by sigmoid scores plus a bias and weighted by the unbiased scores, beside shared experts added ungated.", c.DenseLayers, c.Experts, c.ExpertsUsed)
	}
	k := card.NewDecoder(c.Arch, summary, c.VocabSize, c.ContextLength, c.Embed, c.Layers)
	k.Hyper = append(k.Hyper, []card.Hyper{
		{Symbol: "d_mlp", Value: card.Int(c.FFN), Key: "ffn", Meaning: "width of the dense SwiGLUs"},
		{Symbol: "H", Value: card.Int(c.Heads), Key: "heads", Meaning: "query heads"},
		{Symbol: "H_kv", Value: card.Int(c.KVHeads), Key: "kv_heads", Meaning: "key/value heads (grouped-query attention when < H)"},
		{Symbol: "d_h", Value: card.Int(c.HeadDim), Key: "head_dim", Meaning: "head width"},
		{Symbol: "d_rope", Value: card.Int(c.RopeDim), Key: "rope_dim", Meaning: "features of each head RoPE turns"},
		{Symbol: "θ_rope", Value: card.Float(c.RopeBase), Key: "rope_base", Meaning: "RoPE frequency base"},
		{Symbol: "ε", Value: card.Float(c.NormEps), Key: "norm_eps", Meaning: "RMSNorm epsilon"},
		{Symbol: "bias", Value: card.Bool(c.QKVBias), Key: "qkv_bias", Meaning: "the query, key and value projections have biases"},
		{Symbol: "tied", Value: card.Bool(c.TiedOutput), Key: "tied_output", Meaning: "the unembedding is the token embedding (W_u = W_eᵀ)"},
	}...)
	if moe {
		k.Hyper = append(k.Hyper, []card.Hyper{
			{Symbol: "qk_norm", Value: card.Bool(c.QKNorm), Key: "qk_norm", Meaning: "query and key heads are RMS-normalised before RoPE"},
			{Symbol: "L_d", Value: card.Int(c.DenseLayers), Key: "dense_layers", Meaning: "the first L_d layers have a dense SwiGLU, the others experts"},
			{Symbol: "E", Value: card.Int(c.Experts), Key: "experts", Meaning: "experts in each mixture"},
			{Symbol: "k_e", Value: card.Int(c.ExpertsUsed), Key: "experts_used", Meaning: "experts run per token"},
			{Symbol: "d_exp", Value: card.Int(c.ExpertFFN), Key: "expert_ffn", Meaning: "each expert's width"},
			{Symbol: "E_s", Value: card.Int(c.SharedExperts), Key: "shared_experts", Meaning: "shared experts, one SwiGLU of width E_s·d_exp"},
			{Symbol: "norm_w", Value: card.Bool(c.ExpertWeightsNorm), Key: "expert_weights_norm", Meaning: "the chosen experts' weights are divided by their sum"},
			{Symbol: "λ", Value: card.Float(c.ExpertWeightsScale), Key: "expert_weights_scale", Meaning: "the chosen experts' weights are multiplied by λ (0 means 1)"},
		}...)
	}
	if c.MTPLayers > 0 {
		k.Hyper = append(k.Hyper, card.Hyper{Symbol: "L_mtp", Value: card.Int(c.MTPLayers), Key: "mtp_layers", Meaning: "multi-token-prediction layers in the file (not run)"})
	}

	per := func(sym, shape, meaning string) card.Param {
		return card.Param{Symbol: sym, Shape: shape, Meaning: meaning, PerLayer: true}
	}
	k.Params = []card.Param{
		{Symbol: "W_e", Shape: "d_e × N_V", Meaning: "token embedding"},
		per("γ¹_l", "d_e", "attention RMSNorm scale"),
		per("W_q^l", "H·d_h × d_e", "query projection"),
		per("W_k^l, W_v^l", "H_kv·d_h × d_e", "key and value projections"),
	}
	if c.QKVBias {
		k.Params = append(k.Params, per("b_q^l", "H·d_h", "query bias"), per("b_k^l, b_v^l", "H_kv·d_h", "key and value biases"))
	}
	if c.QKNorm {
		k.Params = append(k.Params, per("γq_l, γk_l", "d_h", "RMSNorm scales shared by the query heads, and by the key heads"))
	}
	k.Params = append(k.Params, per("W_o^l", "d_e × H·d_h", "attention output projection"))
	if moe {
		k.Params = append(k.Params,
			per("γ²_l", "d_e", "FFN RMSNorm scale"),
			per("W_gate^l, W_up^l", "d_mlp × d_e", "dense layers: gate and up projections"),
			per("W_down^l", "d_e × d_mlp", "dense layers: down projection"),
			per("W_r^l", "E × d_e", "expert layers: router"),
			per("b^l", "E", "expert layers: the bias that chooses the experts"),
			per("W_gate^{l,e}, W_up^{l,e}", "d_exp × d_e", "expert layers: expert e's gate and up projections"),
			per("W_down^{l,e}", "d_e × d_exp", "expert layers: expert e's down projection"))
		if c.SharedExperts > 0 {
			k.Params = append(k.Params,
				per("W_gate^{l,s}, W_up^{l,s}", "E_s·d_exp × d_e", "expert layers: the shared experts' gate and up projections"),
				per("W_down^{l,s}", "d_e × E_s·d_exp", "expert layers: the shared experts' down projection"))
		}
	} else {
		k.Params = append(k.Params,
			per("γ²_l", "d_e", "attention output RMSNorm scale"),
			per("γ³_l", "d_e", "MLP RMSNorm scale"),
			per("W_up^l", "2·d_mlp × d_e", "MLP gate and up projections, stacked"),
			per("W_down^l", "d_e × d_mlp", "MLP down projection"),
			per("γ⁴_l", "d_e", "MLP output RMSNorm scale"))
	}
	k.Params = append(k.Params,
		card.Param{Symbol: "γ", Shape: "d_e", Meaning: "final RMSNorm scale"},
		card.Param{Symbol: "W_u", Shape: "N_V × d_e", Meaning: "unembedding (W_eᵀ when tied)"})

	qkv := "Q ← W_q^l X̃;  K ← W_k^l X̃;  V ← W_v^l X̃"
	if c.QKVBias {
		qkv = "Q ← W_q^l X̃ + b_q^l;  K ← W_k^l X̃ + b_k^l;  V ← W_v^l X̃ + b_v^l"
	}
	rope := "Q, K ← RoPE(Q, K | d_rope, θ_rope), rotating the adjacent pairs (2i, 2i + 1) of each head's first d_rope features"
	if moe {
		rope = "Q, K ← RoPE(Q, K | d_rope, θ_rope), rotating the pairs (i, i + d_rope/2) of each head's first d_rope features"
	}
	k.Steps = []card.Step{
		{Text: "ℓ ← length(x)"},
		{Text: "for t ∈ [ℓ]: X[:, t] ← W_e[:, x[t]]", Shape: col("d_e", c.Embed)},
		{Text: "for l = 1, 2, …, L do"},
		{Depth: 1, Text: "X̃ ← RMSNorm(X | γ¹_l, ε)", Shape: col("d_e", c.Embed)},
		{Depth: 1, Text: qkv, Shape: fmt.Sprintf("Q: %s, K, V: %s", col("H·d_h", c.Heads*c.HeadDim), col("H_kv·d_h", c.KVHeads*c.HeadDim))},
	}
	if c.QKNorm {
		k.Steps = append(k.Steps, card.Step{Depth: 1, Text: "for each head: Q_h ← RMSNorm(Q_h | γq_l, ε); K_g ← RMSNorm(K_g | γk_l, ε)", Shape: col("d_h", c.HeadDim)})
	}
	k.Steps = append(k.Steps,
		card.Step{Depth: 1, Text: rope},
		card.Step{Depth: 1, Text: "for h ∈ [H]: g ← ⌈h·H_kv/H⌉; Y_h ← V_g softmax(K_gᵀ Q_h / √d_h + Mask)", Shape: col("d_h", c.HeadDim)})
	if moe {
		k.Steps = append(k.Steps, []card.Step{
			{Depth: 1, Text: "X ← X + W_o^l [Y_1; …; Y_H]", Shape: col("d_e", c.Embed)},
			{Depth: 1, Text: "X̃ ← RMSNorm(X | γ²_l, ε)", Shape: col("d_e", c.Embed)},
			{Depth: 1, Text: "if l ≤ L_d then"},
			{Depth: 2, Text: "X ← X + W_down^l (SiLU(W_gate^l X̃) ⊙ W_up^l X̃)", Shape: col("d_e", c.Embed) + " (inside: d_mlp × ℓ)"},
			{Depth: 1, Text: "else for t ∈ [ℓ]:"},
			{Depth: 2, Text: "s ← σ(W_r^l X̃[:, t]);  S ← the k_e experts e of largest s_e + b^l_e", Shape: "E"},
			{Depth: 2, Text: "for e ∈ S: w_e ← λ · s_e / Σ_{e' ∈ S} s_e' if norm_w, else λ · s_e"},
			{Depth: 2, Text: "X[:, t] ← X[:, t] + Σ_{e ∈ S} w_e W_down^{l,e} (SiLU(W_gate^{l,e} X̃[:, t]) ⊙ W_up^{l,e} X̃[:, t])", Shape: "d_e"},
		}...)
		if c.SharedExperts > 0 {
			k.Steps = append(k.Steps, card.Step{Depth: 2, Text: "X[:, t] ← X[:, t] + W_down^{l,s} (SiLU(W_gate^{l,s} X̃[:, t]) ⊙ W_up^{l,s} X̃[:, t])", Shape: "d_e"})
		}
		k.Steps = append(k.Steps, card.Step{Depth: 1, Text: "end if"})
	} else {
		k.Steps = append(k.Steps, []card.Step{
			{Depth: 1, Text: "X ← X + RMSNorm(W_o^l [Y_1; …; Y_H] | γ²_l, ε)", Shape: col("d_e", c.Embed)},
			{Depth: 1, Text: "X̃ ← RMSNorm(X | γ³_l, ε);  [G; U] ← W_up^l X̃", Shape: "G, U: " + col("d_mlp", c.FFN)},
			{Depth: 1, Text: "X ← X + RMSNorm(W_down^l (SiLU(G) ⊙ U) | γ⁴_l, ε)", Shape: col("d_e", c.Embed)},
		}...)
	}
	k.Steps = append(k.Steps, []card.Step{
		{Text: "end for"},
		{Text: "X ← RMSNorm(X | γ, ε)", Shape: col("d_e", c.Embed)},
		{Text: "return P = softmax(W_u X), column by column", Shape: col("N_V", c.VocabSize)},
	}...)
	k.Notes = []string{"Mask[t', t] = 0 if t' ≤ t else −∞ (causal); softmax runs over each column."}
	k.ParamCount = c.ParamCount()
	return k
}

// ParamCount is the number of weights a model with configuration c holds
// (all experts, not only the k a token uses).
func (c Config) ParamCount() int64 {
	V, D, F := int64(c.VocabSize), int64(c.Embed), int64(c.FFN)
	q, kv := int64(c.Heads*c.HeadDim), int64(c.KVHeads*c.HeadDim)
	n := V*D + D
	if !c.TiedOutput {
		n += V * D
	}
	attn := 2*D + 2*q*D + 2*kv*D // two norms, W_q, W_o, W_k, W_v
	if c.QKVBias {
		attn += q + 2*kv
	}
	if c.QKNorm {
		attn += 2 * int64(c.HeadDim)
	}
	E, Fe, Fs := int64(c.Experts), int64(c.ExpertFFN), int64(c.SharedExperts*c.ExpertFFN)
	for l := range c.Layers {
		n += attn
		switch {
		case !c.MoE():
			n += 2*D + 3*D*F // two more norms, the stacked W_up, W_down
		case c.Dense(l):
			n += 3 * D * F
		default:
			n += E*D + E + 3*E*D*Fe + 3*D*Fs
		}
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
	r.Bool("qkv_bias", &c.QKVBias)
	r.Bool("tied_output", &c.TiedOutput)
	if c.MoE() {
		r.Bool("qk_norm", &c.QKNorm)
		r.Int("dense_layers", &c.DenseLayers)
		r.Int("experts", &c.Experts)
		r.Int("experts_used", &c.ExpertsUsed)
		r.Int("expert_ffn", &c.ExpertFFN)
		r.Int("shared_experts", &c.SharedExperts)
		r.Bool("expert_weights_norm", &c.ExpertWeightsNorm)
		r.Float("expert_weights_scale", &c.ExpertWeightsScale)
	}
	if r.Has("mtp_layers") {
		r.Int("mtp_layers", &c.MTPLayers)
	}
	return r.Config(c, c.Validate())
}

// cardFromHeader makes the card from metadata alone; features toy cannot run
// yet become notes instead of errors.
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
