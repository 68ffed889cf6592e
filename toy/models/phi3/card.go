// The algorithm card of a Phi-3-family model (Phuong & Hutter's DTransformer
// with RMSNorm, fused projections, partial half-split RoPE with LongRoPE
// factors, grouped-query attention and SwiGLU).

package phi3

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
	k := card.Decoder(Arch, "Phi-3: the Llama transformer (pre-RMSNorm, grouped-query attention, SwiGLU) with fused query/key/value and gate/up projections, "+
		"half-split RoPE on the first d_rope features of each head, and LongRoPE frequency factors for long contexts.", c)
	rope := "Q, K ← RoPE(Q, K | d_rope, θ_rope), rotating half-split pairs (i, i + d_rope/2) by angles pos·θ_rope^(−2i/d_rope)"
	if c.RopeFactors {
		rope += "/f[i], f = f_l if n_ctx > ℓ_orig else f_s"
	}
	if c.RopeAttnFactor != 0 {
		rope += "; cos, sin × m_rope"
	}
	d := card.Col("d_e", c.Embed)
	k.Stack([]card.Step{
		{Text: "X̃ ← RMSNorm(X | γ_a^l, ε)", Shape: d},
		{Text: "[Q; K; V] ← W_qkv^l X̃", Shape: fmt.Sprintf("Q: %s, K, V: %s", card.Col("H·d_h", c.Heads*c.HeadDim), card.Col("H_kv·d_h", c.KVHeads*c.HeadDim))},
		{Text: rope},
		{Text: "for h ∈ [H]: g ← ⌈h·H_kv/H⌉; Y_h ← V_g softmax(K_gᵀ Q_h / √d_h + Mask)", Shape: card.Col("d_h", c.HeadDim)},
		{Text: "X ← X + W_o^l [Y_1; …; Y_H]", Shape: d},
		{Text: "X̃ ← RMSNorm(X | γ_f^l, ε)", Shape: d},
		{Text: "[G; U] ← W_up^l X̃", Shape: "G, U: " + card.Col("d_mlp", c.FFN)},
		{Text: "X ← X + W_down^l (SiLU(G) ⊙ U)", Shape: d},
	},
		card.Step{Text: "X ← RMSNorm(X | γ, ε)", Shape: d},
		card.Step{Text: "return P = softmax(W_u X), column by column (W_u = W_eᵀ when tied)", Shape: card.Col("N_V", c.VocabSize)})
	k.Notes = []string{"Mask[t', t] = 0 if t' ≤ t else −∞ (causal); softmax runs over each column."}
	if c.RopeFactors {
		k.Notes = append(k.Notes, "n_ctx is the context the model runs with (toy: the KV cache's capacity), not ℓ.")
	}
	return k
}
