// The algorithm card of LFM2: Phuong & Hutter's DTransformer with short
// convolutions in place of attention in most layers.

package lfm2

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
	kv, err := k.Value("kv_heads")
	if err != nil {
		return nil, err
	}
	for _, f := range strings.Split(kv, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			return nil, fmt.Errorf("lfm2: card kv_heads %q: %w", kv, err)
		}
		c.KVHeads = append(c.KVHeads, n)
	}
	return card.FromCard(k, &c)
}

// card returns the card's hyperparameters and steps for configuration c.
func (c Config) card() *card.Card {
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
	summary := fmt.Sprintf("LFM2: a hybrid decoder, %d of its %d layers a gated short convolution over the last %d positions, the rest grouped-query attention with normalised query and key heads.", conv, c.Layers, c.ConvTaps)
	if c.Arch == "lfm2moe" {
		gate := "softmax"
		if c.Sigmoid {
			gate = "sigmoid"
		}
		summary += fmt.Sprintf(" From layer %d on, a mixture of %d SwiGLU experts, %d a token, scored by the %s of the router.", c.DenseLead, c.Experts, c.ExpertsUsed, gate)
	}
	k := card.Decoder(c.Arch, summary, c)
	i := slices.IndexFunc(k.Hyper, func(h card.Hyper) bool { return h.Key == "heads" }) + 1
	k.Hyper = slices.Insert(k.Hyper, i, card.Hyper{Symbol: "H_kv^l", Value: kvList(c.KVHeads), Key: "kv_heads",
		Meaning: "key/value heads of layer l (H_kv in its shapes), in order; 0 makes l a convolution layer"})
	if c.Arch != "lfm2moe" {
		k.Drop("experts", "experts_used", "expert_ffn", "dense_lead", "sigmoid")
	}
	mask := "Mask"
	if c.Window > 0 {
		mask = "Mask_w"
	} else {
		k.Drop("window")
	}
	d := card.Col("d_e", c.Embed)
	layer := []card.Step{
		{Text: "X̃ ← RMSNorm(X | γ_a^l, ε)", Shape: d},
		{Text: "if H_kv^l = 0 then"},
		{Depth: 1, Text: "[B; C; H̃] ← W_in^l X̃;  U ← B ⊙ H̃", Shape: d + " each"},
		{Depth: 1, Text: "for t ∈ [ℓ]: Y[:, t] ← Σ_{j ∈ [k]} K^l[:, j] ⊙ U[:, t − k + j]   (U[:, s] = 0 for s < 1)", Shape: d},
		{Depth: 1, Text: "X ← X + W_out^l (C ⊙ Y)", Shape: d},
		{Text: "else"},
		{Depth: 1, Text: "Q ← W_q^l X̃;  K ← W_k^l X̃;  V ← W_v^l X̃", Shape: fmt.Sprintf("Q: %s, K, V: H_kv^l·d_h × ℓ", d)},
		{Depth: 1, Text: "for each head: Q_h ← RMSNorm(Q_h | γ_q^l, ε); K_g ← RMSNorm(K_g | γ_k^l, ε)", Shape: card.Col("d_h", dh)},
		{Depth: 1, Text: "Q, K ← RoPE(Q, K | d_h, θ_rope), rotating the pairs (i, i + d_h/2) of each head"},
		{Depth: 1, Text: "for h ∈ [H]: g ← ⌈h·H_kv^l/H⌉; Y_h ← V_g softmax(K_gᵀ Q_h / √d_h + " + mask + ")", Shape: card.Col("d_h", dh)},
		{Depth: 1, Text: "X ← X + W_o^l [Y_1; …; Y_H]", Shape: d},
		{Text: "end if"},
		{Text: "X̃ ← RMSNorm(X | γ_f^l, ε)", Shape: d},
		{Text: "X ← X + W_down^l (SiLU(W_gate^l X̃) ⊙ W_up^l X̃)" + map[bool]string{true: "   (l < l_0)", false: ""}[c.Arch == "lfm2moe"], Shape: d + " (inside: d_mlp × ℓ)"},
	}
	if c.Arch == "lfm2moe" {
		score := "softmax(W_r^l X̃[:, t])"
		if c.Sigmoid {
			score = "σ(W_r^l X̃[:, t])"
		}
		layer = append(layer, []card.Step{
			{Text: "for l ≥ l_0, t ∈ [ℓ]: s ← " + score + "; S ← the k_e experts of largest s + b_r^l", Shape: "E"},
			{Depth: 1, Text: "X[:, t] ← X[:, t] + Σ_{e ∈ S} (s_e / Σ_{e' ∈ S} s_e') W_down^{l,e} (SiLU(W_gate^{l,e} X̃[:, t]) ⊙ W_up^{l,e} X̃[:, t])", Shape: "d_e"},
		}...)
	}
	k.Stack(layer,
		card.Step{Text: "X ← RMSNorm(X | γ, ε)", Shape: d},
		card.Step{Text: "return P = softmax(W_u X), column by column (W_u = W_eᵀ when the file has no output head)", Shape: card.Col("N_V", c.VocabSize)})
	k.Notes = []string{"Mask[t', t] = 0 if t' ≤ t else −∞ (causal); softmax runs over each column."}
	if c.Window > 0 {
		k.Notes = append(k.Notes, "Mask_w = Mask, and also −∞ where t − t' ≥ w.")
	}
	return k
}

// kvList writes the per-layer key/value head counts as the card shows them.
func kvList(kv []int) string {
	s := make([]string, len(kv))
	for i, n := range kv {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ",")
}
