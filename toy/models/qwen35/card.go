// The algorithm card of Qwen3.5: Phuong & Hutter's DTransformer with the
// gated delta rule in place of attention in most layers.

package qwen35

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/toyml/toy/toy/card"
	"github.com/toyml/toy/toy/models"
)

// Card returns the model's algorithm card: its parameters and their count
// are the weights it holds (none for a model made by New).
func (m *Model) Card() *card.Card { return models.CardFromModel(m.Config.card(), m, m.Config) }

// ConfigFromCard reads a Config from a card's hyperparameters.
func ConfigFromCard(k *card.Card) (any, error) {
	var c Config
	if k.Arch != ArchNext {
		sec, err := k.Value("rope_sections")
		if err != nil {
			return nil, err
		}
		fields := strings.Split(sec, ",")
		if len(fields) != 4 {
			return nil, fmt.Errorf("qwen35: card rope_sections %q: want 4 numbers", sec)
		}
		for i, f := range fields {
			if c.Sections[i], err = strconv.Atoi(strings.TrimSpace(f)); err != nil {
				return nil, fmt.Errorf("qwen35: card rope_sections %q: %w", sec, err)
			}
		}
	}
	return card.FromCard(k, &c)
}

// card returns the card's hyperparameters and steps for configuration c.
func (c Config) card() *card.Card {
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
	k := card.Decoder(c.Arch, summary, c)
	if moe {
		k.Drop("ffn")
	} else {
		k.Drop("experts", "experts_used", "expert_ffn", "shared_ffn")
	}
	if c.MTPLayers == 0 {
		k.Drop("mtp_layers")
	}
	if c.Arch != ArchNext {
		sec := make([]string, 4)
		for i, s := range c.Sections {
			sec[i] = strconv.Itoa(s)
		}
		i := slices.IndexFunc(k.Hyper, func(h card.Hyper) bool { return h.Key == "rope_base" }) + 1
		k.Hyper = slices.Insert(k.Hyper, i, card.Hyper{Symbol: "s_rope", Value: strings.Join(sec, ","), Key: "rope_sections",
			Meaning: "M-RoPE sections (text positions are equal in all, so RoPE is plain)"})
	}
	reads := "h mod H_k"
	if c.Grouped() {
		reads = "⌊h·H_k/H_v⌋"
	}
	ds := c.StateDim
	d := card.Col("d_e", c.Embed)
	layer := []card.Step{
		{Text: "X̃ ← RMSNorm(X | γ_a^l, ε)", Shape: d},
		{Text: "if p ∤ l then"},
		{Depth: 1, Text: "M ← W_qkv^l X̃;  for t ∈ [ℓ]: M[:, t] ← SiLU(Σ_{j ∈ [k]} K^l[:, j] ⊙ M[:, t − k + j])   (M[:, s] = 0 for s < 1)", Shape: card.Col("(2H_k + H_v)·d_s", c.ConvChannels())},
		{Depth: 1, Text: "[Q; K; V] ← M;  β ← σ(W_β^l X̃);  g ← a^l ⊙ softplus(W_α^l X̃ + b_dt^l)", Shape: "β, g: H_v × ℓ"},
		{Depth: 1, Text: "for h ∈ [H_v]: S ← 0 (d_s × d_s); g' ← " + reads + "; for t ∈ [ℓ]:"},
		{Depth: 2, Text: "q ← Q_g'[:, t]/‖Q_g'[:, t]‖;  κ ← K_g'[:, t]/‖K_g'[:, t]‖", Shape: card.Col("d_s", ds)},
		{Depth: 2, Text: "S ← e^{g[h, t]} S;  S ← S + κ (β[h, t] (V_h[:, t] − Sᵀκ))ᵀ;  Y_h[:, t] ← Sᵀq / √d_s", Shape: fmt.Sprintf("S: d_s × d_s = %d × %d", ds, ds)},
		{Depth: 1, Text: "for h ∈ [H_v]: Y_h ← RMSNorm(Y_h | γ_s^l, ε) ⊙ SiLU((W_z^l X̃)_h)", Shape: card.Col("d_s", ds)},
		{Depth: 1, Text: "X ← X + W_out^l [Y_1; …; Y_{H_v}]", Shape: d},
		{Text: "else"},
		{Depth: 1, Text: "[Q_h; G_h]_{h ∈ [H]} ← W_q^l X̃;  K ← W_k^l X̃;  V ← W_v^l X̃", Shape: fmt.Sprintf("Q_h, G_h: %s; K, V: H_kv·d_h × ℓ", card.Col("d_h", c.HeadDim))},
		{Depth: 1, Text: "for each head: Q_h ← RMSNorm(Q_h | γ_q^l, ε); K_g ← RMSNorm(K_g | γ_k^l, ε)", Shape: card.Col("d_h", c.HeadDim)},
		{Depth: 1, Text: "Q, K ← RoPE(Q, K | d_rope, θ_rope), rotating the pairs (i, i + d_rope/2) of each head's first d_rope features"},
		{Depth: 1, Text: "for h ∈ [H]: g ← ⌈h·H_kv/H⌉; Y_h ← σ(G_h) ⊙ V_g softmax(K_gᵀ Q_h / √d_h + Mask)", Shape: card.Col("d_h", c.HeadDim)},
		{Depth: 1, Text: "X ← X + W_o^l [Y_1; …; Y_H]", Shape: d},
		{Text: "end if"},
		{Text: "X̃ ← RMSNorm(X | γ_f^l, ε)", Shape: d},
	}
	if moe {
		layer = append(layer, []card.Step{
			{Text: "for t ∈ [ℓ]: s ← softmax(W_r^l X̃[:, t]); S ← the k_e experts of largest s", Shape: "E"},
			{Depth: 1, Text: "X[:, t] ← X[:, t] + Σ_{e ∈ S} (s_e / Σ_{e' ∈ S} s_e') W_down^{l,e} (SiLU(W_gate^{l,e} X̃[:, t]) ⊙ W_up^{l,e} X̃[:, t])", Shape: "d_e"},
		}...)
		if c.SharedFFN > 0 {
			layer = append(layer, card.Step{Depth: 1, Text: "X[:, t] ← X[:, t] + σ(w_s^l · X̃[:, t]) W_down^{l,s} (SiLU(W_gate^{l,s} X̃[:, t]) ⊙ W_up^{l,s} X̃[:, t])", Shape: "d_e"})
		}
	} else {
		layer = append(layer, card.Step{Text: "X ← X + W_down^l (SiLU(W_gate^l X̃) ⊙ W_up^l X̃)", Shape: d + " (inside: d_mlp × ℓ)"})
	}
	k.Stack(layer,
		card.Step{Text: "X ← RMSNorm(X | γ, ε)", Shape: d},
		card.Step{Text: "return P = softmax(W_u X), column by column (W_u = W_eᵀ when tied)", Shape: card.Col("N_V", c.VocabSize)})
	k.Notes = []string{
		"Mask[t', t] = 0 if t' ≤ t else −∞ (causal); softmax runs over each column.",
		"‖·‖ is the L2 norm, max(‖x‖, ε).",
	}
	if c.Arch == ArchNext {
		k.Notes = append(k.Notes, "Qwen3-Next's files give W_β^l and W_α^l as one W_βα^l, and older ones W_qkv^l and W_z^l as one W_in^l, their rows grouped by key head.")
	}
	return k
}
