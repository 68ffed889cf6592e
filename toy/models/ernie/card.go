// The algorithm card of ERNIE 4.5: Phuong & Hutter's DTransformer with
// Llama's pre-norm blocks, and in ernie4_5-moe softmax-routed experts with
// a choice bias and a shared expert.

package ernie

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
	summary := "ERNIE 4.5: a pre-norm decoder (Llama's block) with RoPE over each whole head in adjacent pairs and a SwiGLU MLP."
	if moe {
		summary = fmt.Sprintf("ERNIE 4.5 MoE: Llama's pre-norm block with RoPE over each whole head in adjacent pairs; the layers "+
			"l > L_d = %d with l mod s = 0 (s = %d) have a mixture of %d SwiGLU experts, %d a token, chosen by softmax probability plus "+
			"a bias and weighted by the probabilities renormalised, beside a shared SwiGLU added ungated; the others a dense SwiGLU.",
			c.DenseLayers, c.MoEStep, c.Experts, c.ExpertsUsed)
	}
	k := card.NewDecoder(c.Arch, summary, c.VocabSize, c.ContextLength, c.Embed, c.Layers)
	k.Hyper = append(k.Hyper, []card.Hyper{
		{Symbol: "d_mlp", Value: card.Int(c.FFN), Key: "ffn", Meaning: "width of the dense SwiGLUs"},
		{Symbol: "H", Value: card.Int(c.Heads), Key: "heads", Meaning: "query heads"},
		{Symbol: "H_kv", Value: card.Int(c.KVHeads), Key: "kv_heads", Meaning: "key/value heads (grouped-query attention when < H)"},
		{Symbol: "d_h", Value: card.Int(c.HeadDim), Key: "head_dim", Meaning: "head width, all of it turned by RoPE"},
		{Symbol: "θ_rope", Value: card.Float(c.RopeBase), Key: "rope_base", Meaning: "RoPE frequency base"},
		{Symbol: "ε", Value: card.Float(c.NormEps), Key: "norm_eps", Meaning: "RMSNorm epsilon"},
		{Symbol: "bias", Value: card.Bool(c.QKVBias), Key: "qkv_bias", Meaning: "the query, key and value projections have biases"},
		{Symbol: "tied", Value: card.Bool(c.TiedOutput), Key: "tied_output", Meaning: "the unembedding is the token embedding (W_u = W_eᵀ)"},
	}...)
	if moe {
		k.Hyper = append(k.Hyper, []card.Hyper{
			{Symbol: "L_d", Value: card.Int(c.DenseLayers), Key: "dense_layers", Meaning: "the first L_d layers have a dense SwiGLU"},
			{Symbol: "s", Value: card.Int(c.MoEStep), Key: "moe_step", Meaning: "after them, layers l with l mod s = 0 have experts, the others a dense SwiGLU"},
			{Symbol: "E", Value: card.Int(c.Experts), Key: "experts", Meaning: "experts in each mixture"},
			{Symbol: "k_e", Value: card.Int(c.ExpertsUsed), Key: "experts_used", Meaning: "experts run per token"},
			{Symbol: "d_exp", Value: card.Int(c.ExpertFFN), Key: "expert_ffn", Meaning: "each expert's width"},
			{Symbol: "d_s", Value: card.Int(c.SharedFFN), Key: "shared_ffn", Meaning: "the shared expert's width (0: none)"},
			{Symbol: "b", Value: card.Bool(c.ExpertBias), Key: "expert_bias", Meaning: "a bias b^l is added to the probabilities to choose the experts"},
		}...)
	}

	per := func(sym, shape, meaning string) card.Param {
		return card.Param{Symbol: sym, Shape: shape, Meaning: meaning, PerLayer: true}
	}
	k.Params = []card.Param{
		{Symbol: "W_e", Shape: "d_e × N_V", Meaning: "token embedding"},
		per("γ¹_l, γ²_l", "d_e", "attention and FFN RMSNorm scales"),
		per("W_q^l", "H·d_h × d_e", "query projection"),
		per("W_k^l, W_v^l", "H_kv·d_h × d_e", "key and value projections"),
	}
	if c.QKVBias {
		k.Params = append(k.Params, per("b_q^l", "H·d_h", "query bias"), per("b_k^l, b_v^l", "H_kv·d_h", "key and value biases"))
	}
	which := "MLP" // the layers with a dense SwiGLU
	if moe {
		which = "dense layers:"
	}
	k.Params = append(k.Params,
		per("W_o^l", "d_e × H·d_h", "attention output projection"),
		per("W_gate^l, W_up^l", "d_mlp × d_e", which+" gate and up projections"),
		per("W_down^l", "d_e × d_mlp", which+" down projection"))
	if moe {
		k.Params = append(k.Params, per("W_r^l", "E × d_e", "expert layers: router"))
		if c.ExpertBias {
			k.Params = append(k.Params, per("b^l", "E", "expert layers: the bias that chooses the experts"))
		}
		k.Params = append(k.Params,
			per("W_gate^{l,e}, W_up^{l,e}", "d_exp × d_e", "expert layers: expert e's gate and up projections"),
			per("W_down^{l,e}", "d_e × d_exp", "expert layers: expert e's down projection"))
		if c.SharedFFN > 0 {
			k.Params = append(k.Params,
				per("W_gate^{l,s}, W_up^{l,s}", "d_s × d_e", "expert layers: the shared expert's gate and up projections"),
				per("W_down^{l,s}", "d_e × d_s", "expert layers: the shared expert's down projection"))
		}
	}
	k.Params = append(k.Params,
		card.Param{Symbol: "γ", Shape: "d_e", Meaning: "final RMSNorm scale"},
		card.Param{Symbol: "W_u", Shape: "N_V × d_e", Meaning: "unembedding (W_eᵀ when tied)"})

	qkv := "Q ← W_q^l X̃;  K ← W_k^l X̃;  V ← W_v^l X̃"
	if c.QKVBias {
		qkv = "Q ← W_q^l X̃ + b_q^l;  K ← W_k^l X̃ + b_k^l;  V ← W_v^l X̃ + b_v^l"
	}
	dense := "X ← X + W_down^l (SiLU(W_gate^l X̃) ⊙ W_up^l X̃)"
	k.Steps = []card.Step{
		{Text: "ℓ ← length(x)"},
		{Text: "for t ∈ [ℓ]: X[:, t] ← W_e[:, x[t]]", Shape: col("d_e", c.Embed)},
		{Text: "for l = 1, 2, …, L do"},
		{Depth: 1, Text: "X̃ ← RMSNorm(X | γ¹_l, ε)", Shape: col("d_e", c.Embed)},
		{Depth: 1, Text: qkv, Shape: fmt.Sprintf("Q: %s, K, V: %s", col("H·d_h", c.Heads*c.HeadDim), col("H_kv·d_h", c.KVHeads*c.HeadDim))},
		{Depth: 1, Text: "Q, K ← RoPE(Q, K | θ_rope), rotating the adjacent pairs (2i, 2i + 1) of each head"},
		{Depth: 1, Text: "for h ∈ [H]: g ← ⌈h·H_kv/H⌉; Y_h ← V_g softmax(K_gᵀ Q_h / √d_h + Mask)", Shape: col("d_h", c.HeadDim)},
		{Depth: 1, Text: "X ← X + W_o^l [Y_1; …; Y_H]", Shape: col("d_e", c.Embed)},
		{Depth: 1, Text: "X̃ ← RMSNorm(X | γ²_l, ε)", Shape: col("d_e", c.Embed)},
	}
	if moe {
		choice := "S ← the k_e experts e of largest p_e"
		if c.ExpertBias {
			choice = "S ← the k_e experts e of largest p_e + b^l_e"
		}
		k.Steps = append(k.Steps, []card.Step{
			{Depth: 1, Text: "if l ≤ L_d or l mod s ≠ 0 then"},
			{Depth: 2, Text: dense, Shape: col("d_e", c.Embed) + " (inside: d_mlp × ℓ)"},
			{Depth: 1, Text: "else for t ∈ [ℓ]:"},
			{Depth: 2, Text: "p ← softmax(W_r^l X̃[:, t]);  " + choice, Shape: "E"},
			{Depth: 2, Text: "for e ∈ S: w_e ← p_e / Σ_{e' ∈ S} p_e'"},
			{Depth: 2, Text: "X[:, t] ← X[:, t] + Σ_{e ∈ S} w_e W_down^{l,e} (SiLU(W_gate^{l,e} X̃[:, t]) ⊙ W_up^{l,e} X̃[:, t])", Shape: "d_e"},
		}...)
		if c.SharedFFN > 0 {
			k.Steps = append(k.Steps, card.Step{Depth: 2, Text: "X[:, t] ← X[:, t] + W_down^{l,s} (SiLU(W_gate^{l,s} X̃[:, t]) ⊙ W_up^{l,s} X̃[:, t])", Shape: "d_e"})
		}
		k.Steps = append(k.Steps, card.Step{Depth: 1, Text: "end if"})
	} else {
		k.Steps = append(k.Steps, card.Step{Depth: 1, Text: dense, Shape: col("d_e", c.Embed) + " (inside: d_mlp × ℓ)"})
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
	E, Fe, Fs := int64(c.Experts), int64(c.ExpertFFN), int64(c.SharedFFN)
	for l := range c.Layers {
		n += attn
		if c.Dense(l) {
			n += 3 * D * F
			continue
		}
		n += E*D + 3*E*D*Fe + 3*D*Fs
		if c.ExpertBias {
			n += E
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
	r.Float("rope_base", &c.RopeBase)
	r.Float("norm_eps", &c.NormEps)
	r.Bool("qkv_bias", &c.QKVBias)
	r.Bool("tied_output", &c.TiedOutput)
	if c.MoE() {
		r.Int("dense_layers", &c.DenseLayers)
		r.Int("moe_step", &c.MoEStep)
		r.Int("experts", &c.Experts)
		r.Int("experts_used", &c.ExpertsUsed)
		r.Int("expert_ffn", &c.ExpertFFN)
		r.Int("shared_ffn", &c.SharedFFN)
		r.Bool("expert_bias", &c.ExpertBias)
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
