// The algorithm card of OLMo 2 and Olmo 3: Phuong & Hutter's DTransformer
// with norms after each sublayer, normalised queries and keys, RoPE, and
// Olmo 3's sliding windows.

package olmo2

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
		if a := m.Blocks[i].Attn; a.Q != nil {
			ws = append(ws, a.Q.W, a.K.W, a.V.W, a.O.W)
		}
		if f, ok := m.Blocks[i].FFN.(*nn.SwiGLU); ok && f.Gate != nil {
			ws = append(ws, f.Gate.W, f.Up.W, f.Down.W)
		}
	}
	c.Quant = card.DominantType(ws)
	return c
}

// Card returns the algorithm card of a model with configuration c.
func (c Config) Card() *card.Card {
	col := func(sym string, rows int) string { return fmt.Sprintf("%s × ℓ = %d × ℓ", sym, rows) }
	dh := 0
	if c.Heads > 0 {
		dh = c.HeadDim()
	}
	summary := "OLMo 2: a decoder-only transformer that RMS-normalises each sublayer's output and the whole query and key projections, with half-split RoPE and a SwiGLU MLP."
	if c.Window > 0 {
		summary = "Olmo 3: OLMo 2 with sliding-window attention in three of every four layers."
	}
	k := card.NewDecoder(Arch, summary,
		c.VocabSize, c.ContextLength, c.Embed, c.Layers)
	k.Hyper = append(k.Hyper, []card.Hyper{
		{Symbol: "d_mlp", Value: card.Int(c.FFN), Key: "ffn", Meaning: "feed-forward width"},
		{Symbol: "H", Value: card.Int(c.Heads), Key: "heads", Meaning: "query heads, each d_h = d_e/H wide"},
		{Symbol: "H_kv", Value: card.Int(c.KVHeads), Key: "kv_heads", Meaning: "key/value heads (grouped-query attention when < H)"},
		{Symbol: "θ_rope", Value: card.Float(c.RopeBase), Key: "rope_base", Meaning: "RoPE frequency base"},
		{Symbol: "ε", Value: card.Float(c.NormEps), Key: "norm_eps", Meaning: "RMSNorm epsilon"},
	}...)
	rope := "Q, K ← RoPE(Q, K | d_h, θ_rope), rotating half-split pairs (i, i + d_h/2)"
	mask := "Mask"
	if c.Window > 0 {
		k.Hyper = append(k.Hyper,
			card.Hyper{Symbol: "w", Value: card.Int(c.Window), Key: "window", Meaning: "the local layers' sliding window, in positions"},
			card.Hyper{Symbol: "p", Value: card.Int(c.SlidingPattern), Key: "sliding_pattern", Meaning: "layer l is local when l mod p < p − 1 (every layer when p = 0)"})
		mask = "Mask_l"
	}
	switch c.RopeScaling {
	case "linear":
		k.Hyper = append(k.Hyper,
			card.Hyper{Symbol: "scaling", Value: c.RopeScaling, Key: "rope_scaling", Meaning: "RoPE scaling of the global layers"},
			card.Hyper{Symbol: "s_rope", Value: card.Float(c.RopeScaleFactor), Key: "rope_scale", Meaning: "every global RoPE angle is divided by s_rope"},
			card.Hyper{Symbol: "ℓ_orig", Value: card.Int(c.RopeOrigContext), Key: "rope_orig_context", Meaning: "context before the stretch"})
		rope += "; in global layers every angle divided by s_rope"
	case "yarn":
		k.Hyper = append(k.Hyper,
			card.Hyper{Symbol: "scaling", Value: c.RopeScaling, Key: "rope_scaling", Meaning: "RoPE scaling of the global layers"},
			card.Hyper{Symbol: "s_rope", Value: card.Float(c.RopeScaleFactor), Key: "rope_scale", Meaning: "YaRN stretch factor"},
			card.Hyper{Symbol: "ℓ_orig", Value: card.Int(c.RopeOrigContext), Key: "rope_orig_context", Meaning: "context before the stretch"})
		rope += "; in global layers YaRN: pairs turning fewer than once over ℓ_orig positions divided by s_rope, more than 32 times kept, a linear ramp between; cos, sin × (1 + 0.1 ln s_rope)"
	}
	if c.RopeAttnFactor != 0 {
		k.Hyper = append(k.Hyper, card.Hyper{Symbol: "m_rope", Value: card.Float(c.RopeAttnFactor), Key: "rope_attn_factor", Meaning: "the global layers' RoPE cos and sin are multiplied by m_rope"})
		rope += "; cos, sin × m_rope"
	}
	per := func(sym, shape, meaning string) card.Param {
		return card.Param{Symbol: sym, Shape: shape, Meaning: meaning, PerLayer: true}
	}
	k.Params = []card.Param{
		{Symbol: "W_e", Shape: "d_e × N_V", Meaning: "token embedding"},
		per("W_q^l", "d_e × d_e", "query projection"),
		per("W_k^l", "H_kv·d_h × d_e", "key projection"),
		per("W_v^l", "H_kv·d_h × d_e", "value projection"),
		per("γq_l", "d_e", "query RMSNorm scale (over the whole projection)"),
		per("γk_l", "H_kv·d_h", "key RMSNorm scale (over the whole projection)"),
		per("W_o^l", "d_e × d_e", "attention output projection"),
		per("γ¹_l", "d_e", "attention output RMSNorm scale"),
		per("W_gate^l", "d_mlp × d_e", "MLP gate"),
		per("W_up^l", "d_mlp × d_e", "MLP up projection"),
		per("W_down^l", "d_e × d_mlp", "MLP down projection"),
		per("γ²_l", "d_e", "MLP output RMSNorm scale"),
		{Symbol: "γ", Shape: "d_e", Meaning: "final RMSNorm scale"},
		{Symbol: "W_u", Shape: "N_V × d_e", Meaning: "unembedding"},
	}
	kv := c.KVHeads * dh
	k.Steps = []card.Step{
		{Text: "ℓ ← length(x)"},
		{Text: "for t ∈ [ℓ]: X[:, t] ← W_e[:, x[t]]", Shape: col("d_e", c.Embed)},
		{Text: "for l = 1, 2, …, L do"},
		{Depth: 1, Text: "Q ← RMSNorm(W_q^l X | γq_l, ε);  K ← RMSNorm(W_k^l X | γk_l, ε);  V ← W_v^l X",
			Shape: fmt.Sprintf("Q: %s, K, V: %s", col("d_e", c.Embed), col("H_kv·d_h", kv))},
		{Depth: 1, Text: rope},
		{Depth: 1, Text: "for h ∈ [H]: g ← ⌈h·H_kv/H⌉; Y_h ← V_g softmax(K_gᵀ Q_h / √d_h + " + mask + ")", Shape: col("d_h", dh)},
		{Depth: 1, Text: "X ← X + RMSNorm(W_o^l [Y_1; …; Y_H] | γ¹_l, ε)", Shape: col("d_e", c.Embed)},
		{Depth: 1, Text: "X ← X + RMSNorm(W_down^l (SiLU(W_gate^l X) ⊙ W_up^l X) | γ²_l, ε)", Shape: col("d_e", c.Embed) + " (inside: d_mlp × ℓ)"},
		{Text: "end for"},
		{Text: "X ← RMSNorm(X | γ, ε)", Shape: col("d_e", c.Embed)},
		{Text: "return P = softmax(W_u X), column by column", Shape: col("N_V", c.VocabSize)},
	}
	k.Notes = []string{"Mask[t', t] = 0 if t' ≤ t else −∞ (causal); softmax runs over each column."}
	if c.Window > 0 {
		k.Notes = append(k.Notes, "Mask_l = Mask in global layers; in local layers also −∞ where t − t' ≥ w.")
	}
	k.ParamCount = c.ParamCount()
	return k
}

// ParamCount is the number of weights a model with configuration c holds.
func (c Config) ParamCount() int64 {
	V, D, F := int64(c.VocabSize), int64(c.Embed), int64(c.FFN)
	kv := int64(c.KVHeads) * int64(c.Embed/max(c.Heads, 1))
	layer := 2*D*D + 2*D*kv + D + kv + 2*D + 3*D*F
	return 2*V*D + int64(c.Layers)*layer + D
}

// ConfigFromCard reads a Config from a card's hyperparameters.
func ConfigFromCard(k *card.Card) (any, error) {
	var c Config
	r := k.Reader()
	r.Int("vocab_size", &c.VocabSize)
	r.Int("context_length", &c.ContextLength)
	r.Int("embed", &c.Embed)
	r.Int("layers", &c.Layers)
	r.Int("ffn", &c.FFN)
	r.Int("heads", &c.Heads)
	r.Int("kv_heads", &c.KVHeads)
	r.Float("rope_base", &c.RopeBase)
	r.Float("norm_eps", &c.NormEps)
	if r.Has("window") {
		r.Int("window", &c.Window)
		r.Int("sliding_pattern", &c.SlidingPattern)
	}
	if r.Has("rope_scaling") {
		r.String("rope_scaling", &c.RopeScaling)
		r.Float("rope_scale", &c.RopeScaleFactor)
		r.Int("rope_orig_context", &c.RopeOrigContext)
	}
	if r.Has("rope_attn_factor") {
		r.Float("rope_attn_factor", &c.RopeAttnFactor)
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
