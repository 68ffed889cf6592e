// The algorithm card of Command R, Command R+ and Command R7B: Phuong &
// Hutter's DTransformer with parallel blocks.

package cohere

import (
	"fmt"

	"github.com/toyml/toy/toy/card"
	"github.com/toyml/toy/toy/gguf"
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
		if b.Attn.Q != nil {
			ws = append(ws, b.Attn.Q.W, b.Attn.K.W, b.Attn.V.W, b.Attn.O.W)
		}
		if b.FFN.Gate != nil {
			ws = append(ws, b.FFN.Gate.W, b.FFN.Up.W, b.FFN.Down.W)
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
	summary := "Command R: a decoder whose blocks run attention and a SwiGLU side by side on one LayerNorm, with RoPE and a tied, scaled output head."
	if c.Arch == "cohere2" {
		summary = "Command R7B: Command R with three of every four layers attending within a sliding window, with RoPE, and the fourth to everything, without positions."
	}
	if c.QKNorm {
		summary = "Command R+: Command R whose queries and keys are LayerNormed head by head, each head with its own scale, before RoPE."
	}
	k := card.NewDecoder(c.Arch, summary, c.VocabSize, c.ContextLength, c.Embed, c.Layers)
	k.Hyper = append(k.Hyper, []card.Hyper{
		{Symbol: "d_mlp", Value: card.Int(c.FFN), Key: "ffn", Meaning: "feed-forward width"},
		{Symbol: "H", Value: card.Int(c.Heads), Key: "heads", Meaning: "query heads, each d_h = d_e/H wide"},
		{Symbol: "H_kv", Value: card.Int(c.KVHeads), Key: "kv_heads", Meaning: "key/value heads (grouped-query attention when < H)"},
		{Symbol: "θ_rope", Value: card.Float(c.RopeBase), Key: "rope_base", Meaning: "RoPE frequency base"},
		{Symbol: "ε", Value: card.Float(c.NormEps), Key: "norm_eps", Meaning: "LayerNorm epsilon"},
		{Symbol: "s_u", Value: card.Float(c.LogitScale), Key: "logit_scale", Meaning: "the logits are multiplied by s_u (0: 1)"},
	}...)
	if c.QKNorm {
		k.Hyper = append(k.Hyper, card.Hyper{Symbol: "qk_norm", Value: card.Bool(true), Key: "qk_norm", Meaning: "each query and key head is LayerNormed before RoPE"})
	}
	rope, mask := "Q, K ← RoPE(Q, K | d_h, θ_rope), rotating adjacent pairs (2i, 2i+1)", "Mask"
	if c.Window > 0 {
		k.Hyper = append(k.Hyper,
			card.Hyper{Symbol: "w", Value: card.Int(c.Window), Key: "window", Meaning: "the local layers' sliding window, in positions"},
			card.Hyper{Symbol: "p", Value: card.Int(c.SlidingPattern), Key: "sliding_pattern", Meaning: "layer l is local when l mod p < p − 1 (every layer when p = 0)"})
		rope, mask = "in local layers only: "+rope, "Mask_l"
	}
	per := func(sym, shape, meaning string) card.Param {
		return card.Param{Symbol: sym, Shape: shape, Meaning: meaning, PerLayer: true}
	}
	k.Params = []card.Param{
		{Symbol: "W_e", Shape: "d_e × N_V", Meaning: "token embedding"},
		per("γ_l", "d_e", "LayerNorm scale (no offset)"),
		per("W_q^l", "d_e × d_e", "query projection"),
		per("W_k^l", "H_kv·d_h × d_e", "key projection"),
		per("W_v^l", "H_kv·d_h × d_e", "value projection"),
	}
	if c.QKNorm {
		k.Params = append(k.Params,
			per("γq_l", "H × d_h", "query head LayerNorm scales, row h for head h (no offset)"),
			per("γk_l", "H_kv × d_h", "key head LayerNorm scales, row g for head g (no offset)"))
	}
	k.Params = append(k.Params,
		per("W_o^l", "d_e × d_e", "attention output projection"),
		per("W_gate^l", "d_mlp × d_e", "MLP gate"),
		per("W_up^l", "d_mlp × d_e", "MLP up projection"),
		per("W_down^l", "d_e × d_mlp", "MLP down projection"),
		card.Param{Symbol: "γ", Shape: "d_e", Meaning: "final LayerNorm scale (no offset)"},
		card.Param{Symbol: "W_u = W_eᵀ", Shape: "N_V × d_e", Meaning: "unembedding, tied to the token embedding"},
	)
	k.Steps = []card.Step{
		{Text: "ℓ ← length(x)"},
		{Text: "for t ∈ [ℓ]: X[:, t] ← W_e[:, x[t]]", Shape: col("d_e", c.Embed)},
		{Text: "for l = 1, 2, …, L do"},
		{Depth: 1, Text: "X̃ ← LayerNorm(X | γ_l, 0, ε)", Shape: col("d_e", c.Embed)},
		{Depth: 1, Text: "Q ← W_q^l X̃;  K ← W_k^l X̃;  V ← W_v^l X̃", Shape: fmt.Sprintf("Q: %s, K, V: %s", col("d_e", c.Embed), col("H_kv·d_h", c.KVHeads*dh))},
	}
	if c.QKNorm {
		k.Steps = append(k.Steps, card.Step{Depth: 1, Text: "for h ∈ [H]: Q_h ← LayerNorm(Q_h | γq_l[h], 0, ε); for g ∈ [H_kv]: K_g ← LayerNorm(K_g | γk_l[g], 0, ε)", Shape: col("d_h", dh)})
	}
	k.Steps = append(k.Steps, []card.Step{
		{Depth: 1, Text: rope},
		{Depth: 1, Text: "for h ∈ [H]: g ← ⌈h·H_kv/H⌉; Y_h ← V_g softmax(K_gᵀ Q_h / √d_h + " + mask + ")", Shape: col("d_h", dh)},
		{Depth: 1, Text: "X ← X + W_down^l (SiLU(W_gate^l X̃) ⊙ W_up^l X̃) + W_o^l [Y_1; …; Y_H]", Shape: col("d_e", c.Embed) + " (inside: d_mlp × ℓ)"},
		{Text: "end for"},
		{Text: "X ← LayerNorm(X | γ, 0, ε)", Shape: col("d_e", c.Embed)},
		{Text: "return P = softmax(s_u W_u X), column by column", Shape: col("N_V", c.VocabSize)},
	}...)
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
	layer := D + 2*D*D + 2*D*kv + 3*D*F
	if c.QKNorm {
		layer += D + kv // γq [H, d_h], γk [H_kv, d_h]
	}
	return V*D + int64(c.Layers)*layer + D
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
	r.Int("kv_heads", &c.KVHeads)
	r.Float("rope_base", &c.RopeBase)
	r.Float("norm_eps", &c.NormEps)
	r.Float("logit_scale", &c.LogitScale)
	if r.Has("qk_norm") {
		r.Bool("qk_norm", &c.QKNorm)
	}
	if r.Has("window") {
		r.Int("window", &c.Window)
		r.Int("sliding_pattern", &c.SlidingPattern)
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
