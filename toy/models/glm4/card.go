// The algorithm card of GLM-4 and GLM-4.5: Phuong & Hutter's DTransformer
// with sandwich norms (glm4) or a sigmoid-routed mixture of experts
// (glm4moe), biased projections and partial RoPE.

package glm4

import (
	"fmt"
	"slices"

	"github.com/toyml/toy/toy/card"
	"github.com/toyml/toy/toy/models"
)

// Card returns the model's algorithm card: its parameters and their count
// are the weights it holds (none for a model made by New).
func (m *Model) Card() *card.Card { return models.CardFromModel(m.Config.card(), m, m.Config) }

// ConfigFromCard reads a Config from a card's hyperparameters (its Arch
// from the card's architecture).
func ConfigFromCard(k *card.Card) (any, error) { return card.FromCard(k, &Config{}) }

// card returns the card's hyperparameters and steps for configuration c.
// The hyperparameters of glm4moe's experts are left off when zero (glm4's).
func (c Config) card() *card.Card {
	moe := c.MoE()
	summary := pick(moe, fmt.Sprintf("GLM-4.5: a pre-norm decoder with biased query, key and value projections and RoPE over part of each head in "+
		"half-split pairs; the first L_d = %d layers with a dense SwiGLU, the others with mixtures of %d SwiGLU experts, %d a token, chosen "+
		"by sigmoid scores plus a bias and weighted by the unbiased scores, beside shared experts added ungated.", c.DenseLayers, c.Experts, c.ExpertsUsed),
		"GLM-4: a decoder-only transformer with RMSNorms before and after each sublayer, biased query, key and value projections, "+
			"RoPE over part of each head in adjacent pairs, and a SwiGLU MLP whose gate and up projections are one matrix.")
	k := card.Decoder(c.Arch, summary, c)
	k.DropZero("qk_norm", "dense_layers", "experts", "experts_used", "expert_ffn", "shared_experts", // what glm4 lacks
		"expert_weights_norm", "expert_weights_scale", "mtp_layers")

	d := card.Col("d_e", c.Embed)
	step := func(depth int, text, shape string) []card.Step {
		return []card.Step{{Depth: depth, Text: text, Shape: shape}}
	}
	qkv := pick(c.QKVBias, "Q ← W_q^l X̃ + b_q^l;  K ← W_k^l X̃ + b_k^l;  V ← W_v^l X̃ + b_v^l", "Q ← W_q^l X̃;  K ← W_k^l X̃;  V ← W_v^l X̃")
	pairs := pick(moe, "the pairs (i, i + d_rope/2)", "the adjacent pairs (2i, 2i + 1)")
	k.Stack(slices.Concat(
		[]card.Step{
			{Text: "X̃ ← RMSNorm(X | γ_a^l, ε)", Shape: d},
			{Text: qkv, Shape: fmt.Sprintf("Q: %s, K, V: %s", card.Col("H·d_h", c.Heads*c.HeadDim), card.Col("H_kv·d_h", c.KVHeads*c.HeadDim))},
		},
		pick(c.QKNorm, step(0, "for each head: Q_h ← RMSNorm(Q_h | γ_q^l, ε); K_g ← RMSNorm(K_g | γ_k^l, ε)", card.Col("d_h", c.HeadDim)), nil),
		[]card.Step{
			{Text: "Q, K ← RoPE(Q, K | d_rope, θ_rope), rotating " + pairs + " of each head's first d_rope features"},
			{Text: "for h ∈ [H]: g ← ⌈h·H_kv/H⌉; Y_h ← V_g softmax(K_gᵀ Q_h / √d_h + Mask)", Shape: card.Col("d_h", c.HeadDim)},
		},
		pick(moe, []card.Step{
			{Text: "X ← X + W_o^l [Y_1; …; Y_H]", Shape: d},
			{Text: "X̃ ← RMSNorm(X | γ_f^l, ε)", Shape: d},
			{Text: "if l ≤ L_d then"},
			{Depth: 1, Text: "X ← X + W_down^l (SiLU(W_gate^l X̃) ⊙ W_up^l X̃)", Shape: d + " (inside: d_mlp × ℓ)"},
			{Text: "else for t ∈ [ℓ]:"},
			{Depth: 1, Text: "s ← σ(W_r^l X̃[:, t]);  S ← the k_e experts e of largest s_e + b_r^l[e]", Shape: "E"},
			{Depth: 1, Text: "for e ∈ S: w_e ← λ · s_e / Σ_{e' ∈ S} s_e' if norm_w, else λ · s_e"},
			{Depth: 1, Text: "X[:, t] ← X[:, t] + Σ_{e ∈ S} w_e W_down^{l,e} (SiLU(W_gate^{l,e} X̃[:, t]) ⊙ W_up^{l,e} X̃[:, t])", Shape: "d_e"},
		}, []card.Step{
			{Text: "X ← X + RMSNorm(W_o^l [Y_1; …; Y_H] | γ̂_a^l, ε)", Shape: d},
			{Text: "X̃ ← RMSNorm(X | γ_f^l, ε);  [G; U] ← W_up^l X̃", Shape: "G, U: " + card.Col("d_mlp", c.FFN)},
			{Text: "X ← X + RMSNorm(W_down^l (SiLU(G) ⊙ U) | γ̂_f^l, ε)", Shape: d},
		}),
		pick(moe && c.SharedExperts > 0, step(1, "X[:, t] ← X[:, t] + W_down^{l,s} (SiLU(W_gate^{l,s} X̃[:, t]) ⊙ W_up^{l,s} X̃[:, t])", "d_e"), nil),
		pick(moe, step(0, "end if", ""), nil),
	),
		card.Step{Text: "X ← RMSNorm(X | γ, ε)", Shape: d},
		card.Step{Text: "return P = softmax(W_u X), column by column (W_u = W_eᵀ when tied)", Shape: card.Col("N_V", c.VocabSize)})
	k.Notes = []string{"Mask[t', t] = 0 if t' ≤ t else −∞ (causal); softmax runs over each column."}
	return k
}

// pick returns a if ok, else b.
func pick[T any](ok bool, a, b T) T {
	if ok {
		return a
	}
	return b
}
