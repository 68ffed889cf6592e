// The algorithm card of ERNIE 4.5: Phuong & Hutter's DTransformer with
// Llama's pre-norm blocks, and in ernie4_5-moe softmax-routed experts with
// a choice bias and a shared expert.

package ernie

import (
	"fmt"
	"slices"
	"strings"

	"github.com/toyml/toy/toy/card"
	"github.com/toyml/toy/toy/gguf"
	"github.com/toyml/toy/toy/models"
)

// Card returns the model's algorithm card: its parameters and their count
// are the weights it holds (none for a model made by New).
func (m *Model) Card() *card.Card {
	c := m.Config
	if m.Output != nil && m.Embed != nil {
		c.TiedOutput = m.Output.W == m.Embed.W
	}
	return models.CardFromModel(c.card(), m, c)
}

// cardFromHeader makes the card from metadata alone; features toy cannot run
// yet become notes instead of errors.
func cardFromHeader(h *gguf.File) (*card.Card, error) {
	c, lacking, err := readConfig(h)
	if err != nil {
		return nil, err
	}
	k := c.card()
	have := map[string][]int{}
	for _, t := range h.Tensors {
		have[t.Name] = t.Shape()
		if s := t.Shape(); strings.HasSuffix(t.Name, ".exp_probs_b.bias") && len(s) == 2 && s[0] == 1 {
			have[t.Name] = s[1:] // [1, E], read as [E] (see Load)
		}
	}
	k.Params, k.ParamCount = models.CardParams(New(c), c, have)
	k.Quant = h.Quant()
	return models.Lacking(k, lacking), nil
}

// ConfigFromCard reads a Config from a card's hyperparameters (its Arch
// from the card's architecture).
func ConfigFromCard(k *card.Card) (any, error) { return card.FromCard(k, &Config{}) }

// card returns the card's hyperparameters and steps for configuration c.
func (c Config) card() *card.Card {
	col := func(sym string, rows int) string { return fmt.Sprintf("%s × ℓ = %d × ℓ", sym, rows) }
	moe := c.MoE()
	summary := "ERNIE 4.5: a pre-norm decoder (Llama's block) with RoPE over each whole head in adjacent pairs and a SwiGLU MLP."
	if moe {
		summary = fmt.Sprintf("ERNIE 4.5 MoE: Llama's pre-norm block with RoPE over each whole head in adjacent pairs; the layers "+
			"l > L_d = %d with l mod s = 0 (s = %d) have a mixture of %d SwiGLU experts, %d a token, chosen by softmax probability plus "+
			"a bias and weighted by the probabilities renormalised, beside a shared SwiGLU added ungated; the others a dense SwiGLU.",
			c.DenseLayers, c.MoeStep, c.Experts, c.ExpertsUsed)
	}
	k := card.Decoder(c.Arch, summary, c)
	if !moe { // the mixture's hyperparameters are ernie4_5-moe's
		k.Hyper = slices.DeleteFunc(k.Hyper, func(h card.Hyper) bool { return h.Value == "0" || h.Key == "expert_bias" })
	}

	qkv := "Q ← W_q^l X̃;  K ← W_k^l X̃;  V ← W_v^l X̃"
	if c.QKVBias {
		qkv = "Q ← W_q^l X̃ + b_q^l;  K ← W_k^l X̃ + b_k^l;  V ← W_v^l X̃ + b_v^l"
	}
	dense := "X ← X + W_down^l (SiLU(W_gate^l X̃) ⊙ W_up^l X̃)"
	k.Steps = []card.Step{
		{Text: "ℓ ← length(x)"},
		{Text: "for t ∈ [ℓ]: X[:, t] ← W_e[:, x[t]]", Shape: col("d_e", c.Embed)},
		{Text: "for l = 1, 2, …, L do"},
		{Depth: 1, Text: "X̃ ← RMSNorm(X | γ_a^l, ε)", Shape: col("d_e", c.Embed)},
		{Depth: 1, Text: qkv, Shape: fmt.Sprintf("Q: %s, K, V: %s", col("H·d_h", c.Heads*c.HeadDim), col("H_kv·d_h", c.KVHeads*c.HeadDim))},
		{Depth: 1, Text: "Q, K ← RoPE(Q, K | θ_rope), rotating the adjacent pairs (2i, 2i + 1) of each head"},
		{Depth: 1, Text: "for h ∈ [H]: g ← ⌈h·H_kv/H⌉; Y_h ← V_g softmax(K_gᵀ Q_h / √d_h + Mask)", Shape: col("d_h", c.HeadDim)},
		{Depth: 1, Text: "X ← X + W_o^l [Y_1; …; Y_H]", Shape: col("d_e", c.Embed)},
		{Depth: 1, Text: "X̃ ← RMSNorm(X | γ_f^l, ε)", Shape: col("d_e", c.Embed)},
	}
	if moe {
		choice := "S ← the k_e experts e of largest p_e"
		if c.ExpertBias {
			choice = "S ← the k_e experts e of largest p_e + b_r^l[e]"
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
		{Text: "return P = softmax(W_u X), column by column (W_u = W_eᵀ when tied)", Shape: col("N_V", c.VocabSize)},
	}...)
	k.Notes = []string{"Mask[t', t] = 0 if t' ≤ t else −∞ (causal); softmax runs over each column."}
	return k
}
