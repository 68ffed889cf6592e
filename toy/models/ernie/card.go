// The algorithm card of ERNIE 4.5: Phuong & Hutter's DTransformer with
// Llama's pre-norm blocks, and in ernie4_5-moe softmax-routed experts with
// a choice bias and a shared expert.

package ernie

import (
	"fmt"
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
	d := card.Col("d_e", c.Embed)
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
		k.Drop("dense_layers", "moe_step", "experts", "experts_used", "expert_ffn", "shared_ffn", "expert_bias")
	}

	qkv := "Q ← W_q^l X̃;  K ← W_k^l X̃;  V ← W_v^l X̃"
	if c.QKVBias {
		qkv = "Q ← W_q^l X̃ + b_q^l;  K ← W_k^l X̃ + b_k^l;  V ← W_v^l X̃ + b_v^l"
	}
	dense := card.Step{Text: "X ← X + W_down^l (SiLU(W_gate^l X̃) ⊙ W_up^l X̃)", Shape: d + " (inside: d_mlp × ℓ)"}
	layer := []card.Step{
		{Text: "X̃ ← RMSNorm(X | γ_a^l, ε)", Shape: d},
		{Text: qkv, Shape: fmt.Sprintf("Q: %s, K, V: %s", card.Col("H·d_h", c.Heads*c.HeadDim), card.Col("H_kv·d_h", c.KVHeads*c.HeadDim))},
		{Text: "Q, K ← RoPE(Q, K | θ_rope), rotating the adjacent pairs (2i, 2i + 1) of each head"},
		{Text: "for h ∈ [H]: g ← ⌈h·H_kv/H⌉; Y_h ← V_g softmax(K_gᵀ Q_h / √d_h + Mask)", Shape: card.Col("d_h", c.HeadDim)},
		{Text: "X ← X + W_o^l [Y_1; …; Y_H]", Shape: d},
		{Text: "X̃ ← RMSNorm(X | γ_f^l, ε)", Shape: d},
	}
	if moe {
		choice := "S ← the k_e experts e of largest p_e"
		if c.ExpertBias {
			choice = "S ← the k_e experts e of largest p_e + b_r^l[e]"
		}
		dense.Depth = 1
		layer = append(layer, []card.Step{
			{Text: "if l ≤ L_d or l mod s ≠ 0 then"},
			dense,
			{Text: "else for t ∈ [ℓ]:"},
			{Depth: 1, Text: "p ← softmax(W_r^l X̃[:, t]);  " + choice, Shape: "E"},
			{Depth: 1, Text: "for e ∈ S: w_e ← p_e / Σ_{e' ∈ S} p_e'"},
			{Depth: 1, Text: "X[:, t] ← X[:, t] + Σ_{e ∈ S} w_e W_down^{l,e} (SiLU(W_gate^{l,e} X̃[:, t]) ⊙ W_up^{l,e} X̃[:, t])", Shape: "d_e"},
		}...)
		if c.SharedFFN > 0 {
			layer = append(layer, card.Step{Depth: 1, Text: "X[:, t] ← X[:, t] + W_down^{l,s} (SiLU(W_gate^{l,s} X̃[:, t]) ⊙ W_up^{l,s} X̃[:, t])", Shape: "d_e"})
		}
		layer = append(layer, card.Step{Text: "end if"})
	} else {
		layer = append(layer, dense)
	}
	k.Stack(layer,
		card.Step{Text: "X ← RMSNorm(X | γ, ε)", Shape: d},
		card.Step{Text: "return P = softmax(W_u X), column by column (W_u = W_eᵀ when tied)", Shape: card.Col("N_V", c.VocabSize)})
	k.Notes = []string{"Mask[t', t] = 0 if t' ≤ t else −∞ (causal); softmax runs over each column."}
	return k
}
