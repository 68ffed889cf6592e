// The algorithm card of OLMo 2 and Olmo 3: Phuong & Hutter's DTransformer
// with norms after each sublayer, normalised queries and keys, RoPE, and
// Olmo 3's sliding windows.

package olmo2

import (
	"fmt"

	"github.com/toyml/toy/toy/card"
	"github.com/toyml/toy/toy/models"
)

// Card returns the model's algorithm card: its parameters and their count
// are the weights it holds (none for a model made by New).
func (m *Model) Card() *card.Card { return models.CardFromModel(m.Config.card(), m, m.Config) }

// card returns the card's hyperparameters and steps for configuration c.
func (c Config) card() *card.Card {
	d := card.Col("d_e", c.Embed)
	dh := c.Embed / max(c.Heads, 1)
	summary := "OLMo 2: a decoder-only transformer that RMS-normalises each sublayer's output and the whole query and key projections, with half-split RoPE and a SwiGLU MLP."
	if c.Window > 0 {
		summary = "Olmo 3: OLMo 2 with sliding-window attention in three of every four layers."
	}
	k := card.Decoder(Arch, summary, c)
	k.DropZero("window", "sliding_pattern", "rope_scaling", "rope_scale", "rope_orig_context", "rope_attn_factor") // the features c lacks
	rope := "Q, K ← RoPE(Q, K | d_h, θ_rope), rotating half-split pairs (i, i + d_h/2)"
	rope += map[string]string{
		"linear": "; in global layers every angle divided by s_rope",
		"yarn":   "; in global layers YaRN: pairs turning fewer than once over ℓ_orig positions divided by s_rope, more than 32 times kept, a linear ramp between; cos, sin × (1 + 0.1 ln s_rope)",
	}[c.RopeScaling]
	if c.RopeAttnFactor != 0 {
		rope += "; cos, sin × m_rope"
	}
	mask := "Mask"
	k.Notes = []string{"Mask[t', t] = 0 if t' ≤ t else −∞ (causal); softmax runs over each column."}
	if c.Window > 0 {
		mask = "Mask_l"
		k.Notes = append(k.Notes, "Mask_l = Mask in global layers; in local layers also −∞ where t − t' ≥ w.")
	}
	k.Stack([]card.Step{
		{Text: "Q ← RMSNorm(W_q^l X | γ_q^l, ε);  K ← RMSNorm(W_k^l X | γ_k^l, ε);  V ← W_v^l X",
			Shape: fmt.Sprintf("Q: %s, K, V: %s", d, card.Col("H_kv·d_h", c.KVHeads*dh))},
		{Text: rope},
		{Text: "for h ∈ [H]: g ← ⌈h·H_kv/H⌉; Y_h ← V_g softmax(K_gᵀ Q_h / √d_h + " + mask + ")", Shape: card.Col("d_h", dh)},
		{Text: "X ← X + RMSNorm(W_o^l [Y_1; …; Y_H] | γ̂_a^l, ε)", Shape: d},
		{Text: "X ← X + RMSNorm(W_down^l (SiLU(W_gate^l X) ⊙ W_up^l X) | γ̂_f^l, ε)", Shape: d + " (inside: d_mlp × ℓ)"},
	},
		card.Step{Text: "X ← RMSNorm(X | γ, ε)", Shape: d},
		card.Step{Text: "return P = softmax(W_u X), column by column", Shape: card.Col("N_V", c.VocabSize)})
	return k
}
