// The algorithm card of LFM2: Phuong & Hutter's DTransformer with short
// convolutions in place of attention in most layers.

package lfm2

import (
	"fmt"
	"strconv"
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
		b := &m.Blocks[i]
		if a := b.Attn(); a != nil && a.Q != nil {
			ws = append(ws, a.Q.W, a.K.W, a.V.W, a.O.W)
		}
		if s := b.Conv(); s != nil && s.In != nil {
			ws = append(ws, s.In.W, s.Out.W)
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

// kvList writes the per-layer key/value head counts as the card shows them.
func kvList(kv []int) string {
	s := make([]string, len(kv))
	for i, n := range kv {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ",")
}

// Card returns the algorithm card of a model with configuration c.
func (c Config) Card() *card.Card {
	col := func(sym string, rows int) string { return fmt.Sprintf("%s × ℓ = %d × ℓ", sym, rows) }
	dh := 0
	if c.Heads > 0 {
		dh = c.HeadDim()
	}
	conv := 0
	for l := range c.KVHeads {
		if c.Conv(l) {
			conv++
		}
	}
	summary := fmt.Sprintf("LFM2: a hybrid decoder, %d of its %d layers a gated short convolution over the last %d positions, the rest grouped-query attention with normalised query and key heads.", conv, c.Layers, c.ConvL)
	if c.Arch == "lfm2moe" {
		gate := "softmax"
		if c.Sigmoid {
			gate = "sigmoid"
		}
		summary += fmt.Sprintf(" From layer %d on, a mixture of %d SwiGLU experts, %d a token, scored by the %s of the router.", c.DenseLead, c.Experts, c.ExpertsUsed, gate)
	}
	k := card.NewDecoder(c.Arch, summary, c.VocabSize, c.ContextLength, c.Embed, c.Layers)
	k.Hyper = append(k.Hyper, []card.Hyper{
		{Symbol: "d_mlp", Value: card.Int(c.FFN), Key: "ffn", Meaning: "feed-forward width"},
		{Symbol: "H", Value: card.Int(c.Heads), Key: "heads", Meaning: "query heads of the attention layers, each d_h = d_e/H wide"},
		{Symbol: "H_kv^l", Value: kvList(c.KVHeads), Key: "kv_heads", Meaning: "key/value heads of layer l, in order; 0 makes l a convolution layer"},
		{Symbol: "k", Value: card.Int(c.ConvL), Key: "conv_taps", Meaning: "taps of each channel's causal convolution"},
		{Symbol: "θ_rope", Value: card.Float(c.RopeBase), Key: "rope_base", Meaning: "RoPE frequency base"},
		{Symbol: "ε", Value: card.Float(c.NormEps), Key: "norm_eps", Meaning: "RMSNorm epsilon"},
	}...)
	if c.Arch == "lfm2moe" {
		k.Hyper = append(k.Hyper, []card.Hyper{
			{Symbol: "E", Value: card.Int(c.Experts), Key: "experts", Meaning: "experts in each mixture layer"},
			{Symbol: "k_e", Value: card.Int(c.ExpertsUsed), Key: "experts_used", Meaning: "experts run per token"},
			{Symbol: "d_exp", Value: card.Int(c.ExpertFFN), Key: "expert_ffn", Meaning: "each expert's feed-forward width"},
			{Symbol: "l_0", Value: card.Int(c.DenseLead), Key: "dense_lead", Meaning: "layers before the first mixture (dense)"},
			{Symbol: "σ_r", Value: card.Bool(c.Sigmoid), Key: "sigmoid", Meaning: "the router's scores are sigmoids (else a softmax)"},
		}...)
	}
	mask := "Mask"
	if c.Window > 0 {
		k.Hyper = append(k.Hyper, card.Hyper{Symbol: "w", Value: card.Int(c.Window), Key: "window", Meaning: "the attention layers' sliding window, in positions"})
		mask = "Mask_w"
	}
	per := func(sym, shape, meaning string) card.Param {
		return card.Param{Symbol: sym, Shape: shape, Meaning: meaning, PerLayer: true}
	}
	k.Params = []card.Param{
		{Symbol: "W_e", Shape: "d_e × N_V", Meaning: "token embedding"},
		per("γ_l, γ'_l", "d_e", "RMSNorm scales before the mixer and the MLP"),
		per("W_in^l", "3d_e × d_e", "convolution layers: input projection to b, c, h"),
		per("K_l", "d_e × k", "convolution layers: each channel's taps"),
		per("W_out^l", "d_e × d_e", "convolution layers: output projection"),
		per("W_q^l", "d_e × d_e", "attention layers: query projection"),
		per("W_k^l, W_v^l", "H_kv^l·d_h × d_e", "attention layers: key and value projections"),
		per("γq_l, γk_l", "d_h", "attention layers: RMSNorm scales shared by the query heads, and by the key heads"),
		per("W_o^l", "d_e × d_e", "attention layers: output projection"),
		per("W_gate^l", "d_mlp × d_e", "MLP gate"),
		per("W_up^l", "d_mlp × d_e", "MLP up projection"),
		per("W_down^l", "d_e × d_mlp", "MLP down projection"),
	}
	if c.Arch == "lfm2moe" {
		k.Params = append(k.Params,
			per("W_r^l", "E × d_e", "mixture layers: router"),
			per("b_r^l", "E", "mixture layers: bias added to the scores to choose the experts"),
			per("W_gate^{l,e}, W_up^{l,e}", "d_exp × d_e", "mixture layers: expert e's gate and up projections"),
			per("W_down^{l,e}", "d_e × d_exp", "mixture layers: expert e's down projection"))
	}
	k.Params = append(k.Params, []card.Param{
		{Symbol: "γ", Shape: "d_e", Meaning: "final RMSNorm scale"},
		{Symbol: "W_u", Shape: "N_V × d_e", Meaning: "unembedding (W_eᵀ when the file has no output head)"},
	}...)
	k.Steps = []card.Step{
		{Text: "ℓ ← length(x)"},
		{Text: "for t ∈ [ℓ]: X[:, t] ← W_e[:, x[t]]", Shape: col("d_e", c.Embed)},
		{Text: "for l = 1, 2, …, L do"},
		{Depth: 1, Text: "X̃ ← RMSNorm(X | γ_l, ε)", Shape: col("d_e", c.Embed)},
		{Depth: 1, Text: "if H_kv^l = 0 then"},
		{Depth: 2, Text: "[B; C; H̃] ← W_in^l X̃;  U ← B ⊙ H̃", Shape: col("d_e", c.Embed) + " each"},
		{Depth: 2, Text: "for t ∈ [ℓ]: Y[:, t] ← Σ_{j ∈ [k]} K_l[:, j] ⊙ U[:, t − k + j]   (U[:, s] = 0 for s < 1)", Shape: col("d_e", c.Embed)},
		{Depth: 2, Text: "X ← X + W_out^l (C ⊙ Y)", Shape: col("d_e", c.Embed)},
		{Depth: 1, Text: "else"},
		{Depth: 2, Text: "Q ← W_q^l X̃;  K ← W_k^l X̃;  V ← W_v^l X̃", Shape: fmt.Sprintf("Q: %s, K, V: H_kv^l·d_h × ℓ", col("d_e", c.Embed))},
		{Depth: 2, Text: "for each head: Q_h ← RMSNorm(Q_h | γq_l, ε); K_g ← RMSNorm(K_g | γk_l, ε)", Shape: col("d_h", dh)},
		{Depth: 2, Text: "Q, K ← RoPE(Q, K | d_h, θ_rope), rotating the pairs (i, i + d_h/2) of each head"},
		{Depth: 2, Text: "for h ∈ [H]: g ← ⌈h·H_kv^l/H⌉; Y_h ← V_g softmax(K_gᵀ Q_h / √d_h + " + mask + ")", Shape: col("d_h", dh)},
		{Depth: 2, Text: "X ← X + W_o^l [Y_1; …; Y_H]", Shape: col("d_e", c.Embed)},
		{Depth: 1, Text: "end if"},
		{Depth: 1, Text: "X̃ ← RMSNorm(X | γ'_l, ε)", Shape: col("d_e", c.Embed)},
		{Depth: 1, Text: "X ← X + W_down^l (SiLU(W_gate^l X̃) ⊙ W_up^l X̃)" + map[bool]string{true: "   (l < l_0)", false: ""}[c.Arch == "lfm2moe"], Shape: col("d_e", c.Embed) + " (inside: d_mlp × ℓ)"},
	}
	if c.Arch == "lfm2moe" {
		score := "softmax(W_r^l X̃[:, t])"
		if c.Sigmoid {
			score = "σ(W_r^l X̃[:, t])"
		}
		k.Steps = append(k.Steps, []card.Step{
			{Depth: 1, Text: "for l ≥ l_0, t ∈ [ℓ]: s ← " + score + "; S ← the k_e experts of largest s + b_r^l", Shape: "E"},
			{Depth: 2, Text: "X[:, t] ← X[:, t] + Σ_{e ∈ S} (s_e / Σ_{e' ∈ S} s_e') W_down^{l,e} (SiLU(W_gate^{l,e} X̃[:, t]) ⊙ W_up^{l,e} X̃[:, t])", Shape: "d_e"},
		}...)
	}
	k.Steps = append(k.Steps, []card.Step{
		{Text: "end for"},
		{Text: "X ← RMSNorm(X | γ, ε)", Shape: col("d_e", c.Embed)},
		{Text: "return P = softmax(W_u X), column by column", Shape: col("N_V", c.VocabSize)},
	}...)
	k.Notes = []string{"Mask[t', t] = 0 if t' ≤ t else −∞ (causal); softmax runs over each column."}
	if c.Window > 0 {
		k.Notes = append(k.Notes, "Mask_w = Mask, and also −∞ where t − t' ≥ w.")
	}
	k.ParamCount = c.ParamCount()
	return k
}

// ParamCount is the number of weights a model with configuration c holds
// (its output head tied to the token embedding).
func (c Config) ParamCount() int64 {
	V, D, F, dh := int64(c.VocabSize), int64(c.Embed), int64(c.FFN), int64(0)
	if c.Heads > 0 {
		dh = int64(c.HeadDim())
	}
	n := V*D + D
	for l := range c.KVHeads {
		n += 2 * D
		if c.MoE(l) {
			E := int64(c.Experts)
			n += E*D + E + 3*E*D*int64(c.ExpertFFN)
		} else {
			n += 3 * D * F
		}
		if c.Conv(l) {
			n += 3*D*D + D*int64(c.ConvL) + D*D
		} else {
			kv := int64(c.KVHeads[l]) * dh
			n += 2*D*D + 2*D*kv + 2*dh
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
	var kv string
	r.String("kv_heads", &kv)
	r.Int("conv_taps", &c.ConvL)
	r.Float("rope_base", &c.RopeBase)
	r.Float("norm_eps", &c.NormEps)
	if r.Has("window") {
		r.Int("window", &c.Window)
	}
	if r.Has("experts") {
		r.Int("experts", &c.Experts)
		r.Int("experts_used", &c.ExpertsUsed)
		r.Int("expert_ffn", &c.ExpertFFN)
		r.Int("dense_lead", &c.DenseLead)
		r.Bool("sigmoid", &c.Sigmoid)
	}
	for _, f := range strings.Split(kv, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			return nil, fmt.Errorf("lfm2: card kv_heads %q: %w", kv, err)
		}
		c.KVHeads = append(c.KVHeads, n)
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
