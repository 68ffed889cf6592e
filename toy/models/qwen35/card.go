// The algorithm card of Qwen3.5: Phuong & Hutter's DTransformer with the
// gated delta rule in place of attention in most layers.

package qwen35

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
		if d := b.Delta(); d != nil && d.Out != nil {
			for _, l := range []*nn.Linear{d.QKV, d.Z, d.In, d.Out} {
				if l != nil {
					ws = append(ws, l.W)
				}
			}
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
	rec := 0
	for l := range c.Layers {
		if c.Recurrent(l) {
			rec++
		}
	}
	name := "Qwen3.5"
	if c.Arch == ArchNext {
		name = "Qwen3-Next"
	}
	summary := fmt.Sprintf("%s: a hybrid decoder, %d of its %d layers a gated delta rule (linear attention with a %d × %d state per value head), the others grouped-query attention with normalised query and key heads and a sigmoid gate on each head's output.", name, rec, c.Layers, c.StateDim, c.StateDim)
	moe := c.MoE()
	if moe {
		summary += fmt.Sprintf(" In every layer a mixture of %d SwiGLU experts, %d a token, by the softmax of the router renormalised over the chosen", c.Experts, c.ExpertsUsed)
		if c.SharedFFN > 0 {
			summary += ", beside a shared expert gated by a sigmoid"
		}
		summary += "."
	}
	k := card.NewDecoder(c.Arch, summary, c.VocabSize, c.ContextLength, c.Embed, c.Layers)
	sec := make([]string, 4)
	for i, s := range c.Sections {
		sec[i] = strconv.Itoa(s)
	}
	if moe {
		k.Hyper = append(k.Hyper, []card.Hyper{
			{Symbol: "E", Value: card.Int(c.Experts), Key: "experts", Meaning: "experts in each layer's mixture"},
			{Symbol: "k_e", Value: card.Int(c.ExpertsUsed), Key: "experts_used", Meaning: "experts run per token"},
			{Symbol: "d_exp", Value: card.Int(c.ExpertFFN), Key: "expert_ffn", Meaning: "each expert's feed-forward width"},
			{Symbol: "d_sh", Value: card.Int(c.SharedFFN), Key: "shared_ffn", Meaning: "the shared expert's feed-forward width (0: none)"},
		}...)
	} else {
		k.Hyper = append(k.Hyper, card.Hyper{Symbol: "d_mlp", Value: card.Int(c.FFN), Key: "ffn", Meaning: "feed-forward width"})
	}
	k.Hyper = append(k.Hyper, []card.Hyper{
		{Symbol: "p", Value: card.Int(c.Interval), Key: "interval", Meaning: "layer l is attention when p divides l (counting from 1), else the delta rule"},
		{Symbol: "H", Value: card.Int(c.Heads), Key: "heads", Meaning: "query heads of the attention layers"},
		{Symbol: "H_kv", Value: card.Int(c.KVHeads), Key: "kv_heads", Meaning: "key/value heads of the attention layers"},
		{Symbol: "d_h", Value: card.Int(c.HeadDim), Key: "head_dim", Meaning: "attention head width"},
		{Symbol: "d_rope", Value: card.Int(c.RopeDim), Key: "rope_dim", Meaning: "features of each head RoPE turns"},
		{Symbol: "θ_rope", Value: card.Float(c.RopeBase), Key: "rope_base", Meaning: "RoPE frequency base"},
	}...)
	if c.Arch != ArchNext {
		k.Hyper = append(k.Hyper, card.Hyper{Symbol: "s_rope", Value: strings.Join(sec, ","), Key: "rope_sections", Meaning: "M-RoPE sections (text positions are equal in all, so RoPE is plain)"})
	}
	reads := "h mod H_k"
	if c.Grouped() {
		reads = "⌊h·H_k/H_v⌋"
	}
	k.Hyper = append(k.Hyper, []card.Hyper{
		{Symbol: "H_k", Value: card.Int(c.KHeads), Key: "k_heads", Meaning: "query/key heads of the delta rule"},
		{Symbol: "H_v", Value: card.Int(c.VHeads), Key: "v_heads", Meaning: "value heads of the delta rule; head h reads key head " + reads},
		{Symbol: "d_s", Value: card.Int(c.StateDim), Key: "state_dim", Meaning: "width of the delta rule's heads"},
		{Symbol: "k", Value: card.Int(c.ConvL), Key: "conv_taps", Meaning: "taps of the causal convolution before the delta rule"},
		{Symbol: "ε", Value: card.Float(c.NormEps), Key: "norm_eps", Meaning: "RMSNorm and L2-norm epsilon"},
		{Symbol: "tied", Value: card.Bool(c.TiedOutput), Key: "tied_output", Meaning: "the unembedding is the token embedding (W_u = W_eᵀ)"},
	}...)
	if c.MTPLayers > 0 {
		k.Hyper = append(k.Hyper, card.Hyper{Symbol: "L_mtp", Value: card.Int(c.MTPLayers), Key: "mtp_layers", Meaning: "multi-token-prediction layers in the file (not run)"})
	}
	per := func(sym, shape, meaning string) card.Param {
		return card.Param{Symbol: sym, Shape: shape, Meaning: meaning, PerLayer: true}
	}
	k.Params = []card.Param{
		{Symbol: "W_e", Shape: "d_e × N_V", Meaning: "token embedding"},
		per("γ_l, γ'_l", "d_e", "RMSNorm scales before the mixer and the MLP"),
		per("W_qkv^l", "(2H_k + H_v)·d_s × d_e", "delta-rule layers: query, key and value projection"),
		per("K_l", "(2H_k + H_v)·d_s × k", "delta-rule layers: each channel's taps"),
		per("W_α^l, W_β^l", "H_v × d_e", "delta-rule layers: decay and step projections"),
		per("b_dt^l, a^l", "H_v", "delta-rule layers: decay bias and rates (a = −exp(A_log))"),
		per("γs_l", "d_s", "delta-rule layers: RMSNorm scale shared by the heads"),
		per("W_z^l", "H_v·d_s × d_e", "delta-rule layers: output gate projection"),
		per("W_out^l", "d_e × H_v·d_s", "delta-rule layers: output projection"),
		per("W_q^l", "2H·d_h × d_e", "attention layers: query and gate projection"),
		per("W_k^l, W_v^l", "H_kv·d_h × d_e", "attention layers: key and value projections"),
		per("γq_l, γk_l", "d_h", "attention layers: RMSNorm scales shared by the query heads, and by the key heads"),
		per("W_o^l", "d_e × H·d_h", "attention layers: output projection"),
	}
	if moe {
		k.Params = append(k.Params,
			per("W_r^l", "E × d_e", "router"),
			per("W_gate^{l,e}, W_up^{l,e}", "d_exp × d_e", "expert e's gate and up projections"),
			per("W_down^{l,e}", "d_e × d_exp", "expert e's down projection"))
		if c.SharedFFN > 0 {
			k.Params = append(k.Params,
				per("W_gate^{l,s}, W_up^{l,s}", "d_sh × d_e", "the shared expert's gate and up projections"),
				per("W_down^{l,s}", "d_e × d_sh", "the shared expert's down projection"),
				per("w_s^l", "d_e", "the shared expert's gate"))
		}
	} else {
		k.Params = append(k.Params,
			per("W_gate^l", "d_mlp × d_e", "MLP gate"),
			per("W_up^l", "d_mlp × d_e", "MLP up projection"),
			per("W_down^l", "d_e × d_mlp", "MLP down projection"))
	}
	k.Params = append(k.Params,
		card.Param{Symbol: "γ", Shape: "d_e", Meaning: "final RMSNorm scale"},
		card.Param{Symbol: "W_u", Shape: "N_V × d_e", Meaning: "unembedding (W_eᵀ when tied)"})
	ds := c.StateDim
	k.Steps = []card.Step{
		{Text: "ℓ ← length(x)"},
		{Text: "for t ∈ [ℓ]: X[:, t] ← W_e[:, x[t]]", Shape: col("d_e", c.Embed)},
		{Text: "for l = 1, 2, …, L do"},
		{Depth: 1, Text: "X̃ ← RMSNorm(X | γ_l, ε)", Shape: col("d_e", c.Embed)},
		{Depth: 1, Text: "if p ∤ l then"},
		{Depth: 2, Text: "M ← W_qkv^l X̃;  for t ∈ [ℓ]: M[:, t] ← SiLU(Σ_{j ∈ [k]} K_l[:, j] ⊙ M[:, t − k + j])   (M[:, s] = 0 for s < 1)", Shape: col("(2H_k + H_v)·d_s", c.ConvChannels())},
		{Depth: 2, Text: "[Q; K; V] ← M;  β ← σ(W_β^l X̃);  g ← a^l ⊙ softplus(W_α^l X̃ + b_dt^l)", Shape: "β, g: H_v × ℓ"},
		{Depth: 2, Text: "for h ∈ [H_v]: S ← 0 (d_s × d_s); g' ← " + reads + "; for t ∈ [ℓ]:"},
		{Depth: 3, Text: "q ← Q_g'[:, t]/‖Q_g'[:, t]‖;  κ ← K_g'[:, t]/‖K_g'[:, t]‖", Shape: col("d_s", ds)},
		{Depth: 3, Text: "S ← e^{g[h, t]} S;  S ← S + κ (β[h, t] (V_h[:, t] − Sᵀκ))ᵀ;  Y_h[:, t] ← Sᵀq / √d_s", Shape: fmt.Sprintf("S: d_s × d_s = %d × %d", ds, ds)},
		{Depth: 2, Text: "for h ∈ [H_v]: Y_h ← RMSNorm(Y_h | γs_l, ε) ⊙ SiLU((W_z^l X̃)_h)", Shape: col("d_s", ds)},
		{Depth: 2, Text: "X ← X + W_out^l [Y_1; …; Y_{H_v}]", Shape: col("d_e", c.Embed)},
		{Depth: 1, Text: "else"},
		{Depth: 2, Text: "[Q_h; G_h]_{h ∈ [H]} ← W_q^l X̃;  K ← W_k^l X̃;  V ← W_v^l X̃", Shape: fmt.Sprintf("Q_h, G_h: %s; K, V: H_kv·d_h × ℓ", col("d_h", c.HeadDim))},
		{Depth: 2, Text: "for each head: Q_h ← RMSNorm(Q_h | γq_l, ε); K_g ← RMSNorm(K_g | γk_l, ε)", Shape: col("d_h", c.HeadDim)},
		{Depth: 2, Text: "Q, K ← RoPE(Q, K | d_rope, θ_rope), rotating the pairs (i, i + d_rope/2) of each head's first d_rope features"},
		{Depth: 2, Text: "for h ∈ [H]: g ← ⌈h·H_kv/H⌉; Y_h ← σ(G_h) ⊙ V_g softmax(K_gᵀ Q_h / √d_h + Mask)", Shape: col("d_h", c.HeadDim)},
		{Depth: 2, Text: "X ← X + W_o^l [Y_1; …; Y_H]", Shape: col("d_e", c.Embed)},
		{Depth: 1, Text: "end if"},
		{Depth: 1, Text: "X̃ ← RMSNorm(X | γ'_l, ε)", Shape: col("d_e", c.Embed)},
	}
	if moe {
		k.Steps = append(k.Steps, []card.Step{
			{Depth: 1, Text: "for t ∈ [ℓ]: s ← softmax(W_r^l X̃[:, t]); S ← the k_e experts of largest s", Shape: "E"},
			{Depth: 2, Text: "X[:, t] ← X[:, t] + Σ_{e ∈ S} (s_e / Σ_{e' ∈ S} s_e') W_down^{l,e} (SiLU(W_gate^{l,e} X̃[:, t]) ⊙ W_up^{l,e} X̃[:, t])", Shape: "d_e"},
		}...)
		if c.SharedFFN > 0 {
			k.Steps = append(k.Steps, card.Step{Depth: 2, Text: "X[:, t] ← X[:, t] + σ(w_s^l · X̃[:, t]) W_down^{l,s} (SiLU(W_gate^{l,s} X̃[:, t]) ⊙ W_up^{l,s} X̃[:, t])", Shape: "d_e"})
		}
	} else {
		k.Steps = append(k.Steps, card.Step{Depth: 1, Text: "X ← X + W_down^l (SiLU(W_gate^l X̃) ⊙ W_up^l X̃)", Shape: col("d_e", c.Embed) + " (inside: d_mlp × ℓ)"})
	}
	k.Steps = append(k.Steps, []card.Step{
		{Text: "end for"},
		{Text: "X ← RMSNorm(X | γ, ε)", Shape: col("d_e", c.Embed)},
		{Text: "return P = softmax(W_u X), column by column", Shape: col("N_V", c.VocabSize)},
	}...)
	k.Notes = []string{
		"Mask[t', t] = 0 if t' ≤ t else −∞ (causal); softmax runs over each column.",
		"‖·‖ is the L2 norm, max(‖x‖, ε).",
	}
	k.ParamCount = c.ParamCount()
	return k
}

// ParamCount is the number of weights a model with configuration c holds.
func (c Config) ParamCount() int64 {
	V, D, F := int64(c.VocabSize), int64(c.Embed), int64(c.FFN)
	q, kv := int64(c.Heads*c.HeadDim), int64(c.KVHeads*c.HeadDim)
	C, Hv, v := int64(c.ConvChannels()), int64(c.VHeads), int64(c.VHeads*c.StateDim)
	n := V*D + D
	if !c.TiedOutput {
		n += V * D
	}
	E, FE, S := int64(c.Experts), int64(c.ExpertFFN), int64(c.SharedFFN)
	for l := range c.Layers {
		n += 2 * D
		if c.MoE() {
			n += E*D + 3*E*D*FE
			if S > 0 {
				n += 3*D*S + D
			}
		} else {
			n += 3 * D * F
		}
		if c.Recurrent(l) {
			n += C*D + C*int64(c.ConvL) + 2*Hv*D + 2*Hv + int64(c.StateDim) + v*D + D*v
		} else {
			n += 2*q*D + 2*kv*D + 2*int64(c.HeadDim) + D*q
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
	if c.MoE() {
		r.Int("experts", &c.Experts)
		r.Int("experts_used", &c.ExpertsUsed)
		r.Int("expert_ffn", &c.ExpertFFN)
		r.Int("shared_ffn", &c.SharedFFN)
	} else {
		r.Int("ffn", &c.FFN)
	}
	r.Int("interval", &c.Interval)
	r.Int("heads", &c.Heads)
	r.Int("kv_heads", &c.KVHeads)
	r.Int("head_dim", &c.HeadDim)
	r.Int("rope_dim", &c.RopeDim)
	r.Float("rope_base", &c.RopeBase)
	sec := "0,0,0,0"
	if c.Arch != ArchNext {
		r.String("rope_sections", &sec)
	}
	r.Int("k_heads", &c.KHeads)
	r.Int("v_heads", &c.VHeads)
	r.Int("state_dim", &c.StateDim)
	r.Int("conv_taps", &c.ConvL)
	r.Float("norm_eps", &c.NormEps)
	r.Bool("tied_output", &c.TiedOutput)
	if r.Has("mtp_layers") {
		r.Int("mtp_layers", &c.MTPLayers)
	}
	fields := strings.Split(sec, ",")
	if len(fields) != 4 {
		return nil, fmt.Errorf("qwen35: card rope_sections %q: want 4 numbers", sec)
	}
	for i, f := range fields {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			return nil, fmt.Errorf("qwen35: card rope_sections %q: %w", sec, err)
		}
		c.Sections[i] = n
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
