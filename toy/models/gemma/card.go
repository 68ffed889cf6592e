// The algorithm card of a Gemma model (Phuong & Hutter's DTransformer with
// GeGLU and, from Gemma 2 on, sandwich RMSNorms and sliding windows).

package gemma

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
		if f, ok := m.Blocks[i].FFN.(*nn.GeGLU); ok && f.Gate != nil {
			ws = append(ws, f.Gate.W, f.Up.W, f.Down.W)
		}
	}
	c.Quant = card.DominantType(ws)
	return c
}

// Card returns the algorithm card of a model with configuration c.
func (c Config) Card() *card.Card {
	q, kv := "H·d_h", "H_kv·d_h"
	qn, kvn := c.Heads*c.HeadDim, c.KVHeads*c.HeadDim
	col := func(sym string, rows int) string { return fmt.Sprintf("%s × ℓ = %d × ℓ", sym, rows) }
	summary := map[string]string{
		"gemma": "Gemma: a decoder-only transformer with pre-RMSNorm, rotary positions, multi-query or grouped attention, " +
			"a GeGLU MLP and embeddings scaled by √d_e.",
		"gemma2": "Gemma 2: the Gemma transformer with pre- and post-sublayer RMSNorms, soft-capped attention that alternates " +
			"a sliding window with the whole context, and soft-capped logits.",
		"gemma3": "Gemma 3: the Gemma transformer with pre- and post-sublayer RMSNorms, per-head query/key RMSNorms, and five " +
			"sliding-window layers (RoPE base 10000) to each global one.",
	}[c.Arch]
	k := card.NewDecoder(c.Arch, summary,
		c.VocabSize, c.ContextLength, c.Embed, c.Layers)
	k.Hyper = append(k.Hyper, []card.Hyper{
		{Symbol: "d_mlp", Value: card.Int(c.FFN), Key: "ffn", Meaning: "feed-forward width"},
		{Symbol: "H", Value: card.Int(c.Heads), Key: "heads", Meaning: "query heads"},
		{Symbol: "H_kv", Value: card.Int(c.KVHeads), Key: "kv_heads", Meaning: "key/value heads (grouped-query attention when < H)"},
		{Symbol: "d_h", Value: card.Int(c.HeadDim), Key: "head_dim", Meaning: "head width"},
		{Symbol: "θ_rope", Value: card.Float(c.RopeBase), Key: "rope_base", Meaning: "RoPE frequency base (half-split pairs)"},
		{Symbol: "ε", Value: card.Float(c.NormEps), Key: "norm_eps", Meaning: "RMSNorm epsilon"},
		{Symbol: "s_q", Value: card.Float(c.QueryScale), Key: "query_scale", Meaning: "score scale (1/√d_h, or 1/√(d_e/H))"},
		{Symbol: "tied", Value: card.Bool(c.TiedOutput), Key: "tied_output", Meaning: "the unembedding is the token embedding (W_u = W_eᵀ)"},
	}...)
	local := map[string]string{"gemma2": "l = 1, 3, 5, …", "gemma3": "l mod 6 ≠ 0"}[c.Arch]
	if c.SlidingPattern() > 0 {
		k.Hyper = append(k.Hyper, card.Hyper{Symbol: "w", Value: card.Int(c.Window), Key: "window", Meaning: "sliding window of the local layers " + local})
	}
	if c.Arch == "gemma2" {
		k.Hyper = append(k.Hyper,
			card.Hyper{Symbol: "c_attn", Value: card.Float(c.AttnSoftCap), Key: "attn_softcap", Meaning: "attention score soft cap (0: none)"},
			card.Hyper{Symbol: "c_out", Value: card.Float(c.FinalSoftCap), Key: "final_softcap", Meaning: "output logit soft cap (0: none)"})
	}
	if c.RopeScaleFactor > 0 {
		k.Hyper = append(k.Hyper, card.Hyper{Symbol: "s_rope", Value: card.Float(c.RopeScaleFactor), Key: "rope_scale", Meaning: "the global layers' RoPE angles are divided by s_rope"})
	}
	per := func(sym, shape, meaning string) card.Param {
		return card.Param{Symbol: sym, Shape: shape, Meaning: meaning, PerLayer: true}
	}
	k.Params = []card.Param{
		{Symbol: "W_e", Shape: "d_e × N_V", Meaning: "token embedding"},
		per("γ¹_l", "d_e", "attention input RMSNorm scale"),
		per("W_q^l", q+" × d_e", "query projection"),
		per("W_k^l", kv+" × d_e", "key projection"),
		per("W_v^l", kv+" × d_e", "value projection"),
	}
	if c.QKNorm() {
		k.Params = append(k.Params, per("γq_l", "d_h", "query head RMSNorm scale"), per("γk_l", "d_h", "key head RMSNorm scale"))
	}
	k.Params = append(k.Params, per("W_o^l", "d_e × "+q, "attention output projection"))
	if c.PostNorms() {
		k.Params = append(k.Params, per("γ²_l", "d_e", "attention output RMSNorm scale"))
	}
	k.Params = append(k.Params,
		per("γ³_l", "d_e", "MLP input RMSNorm scale"),
		per("W_gate^l", "d_mlp × d_e", "MLP gate"),
		per("W_up^l", "d_mlp × d_e", "MLP up projection"),
		per("W_down^l", "d_e × d_mlp", "MLP down projection"))
	if c.PostNorms() {
		k.Params = append(k.Params, per("γ⁴_l", "d_e", "MLP output RMSNorm scale"))
	}
	k.Params = append(k.Params, card.Param{Symbol: "γ", Shape: "d_e", Meaning: "final RMSNorm scale"})
	if c.TiedOutput {
		k.Params = append(k.Params, card.Param{Symbol: "W_u = W_eᵀ", Shape: "N_V × d_e", Meaning: "unembedding, tied to the token embedding"})
	} else {
		k.Params = append(k.Params, card.Param{Symbol: "W_u", Shape: "N_V × d_e", Meaning: "unembedding"})
	}
	rope := "Q, K ← RoPE(Q, K | d_h, θ_rope), rotating half-split pairs (i, i + d_h/2)"
	switch {
	case c.Arch == "gemma3" && c.RopeScaleFactor > 0:
		rope += "; base 10000 in the local layers, angles divided by s_rope in the global ones"
	case c.Arch == "gemma3":
		rope += "; base 10000 in the local layers"
	case c.RopeScaleFactor > 0:
		rope += "; angles divided by s_rope"
	}
	score := "S_h ← s_q K_gᵀ Q_h"
	if c.AttnSoftCap > 0 {
		score = "S_h ← c_attn·tanh(s_q K_gᵀ Q_h / c_attn)"
	}
	post := func(x, g string) string {
		if c.PostNorms() {
			return "RMSNorm(" + x + " | " + g + ", ε)"
		}
		return x
	}
	steps := []card.Step{
		{Text: "ℓ ← length(x)"},
		{Text: "for t ∈ [ℓ]: X[:, t] ← √d_e · W_e[:, x[t]]", Shape: col("d_e", c.Embed)},
		{Text: "for l = 1, 2, …, L do"},
		{Depth: 1, Text: "X̃ ← RMSNorm(X | γ¹_l, ε)", Shape: col("d_e", c.Embed)},
		{Depth: 1, Text: "Q ← W_q^l X̃;  K ← W_k^l X̃;  V ← W_v^l X̃", Shape: fmt.Sprintf("Q: %s, K, V: %s", col(q, qn), col(kv, kvn))},
	}
	if c.QKNorm() {
		steps = append(steps, card.Step{Depth: 1, Text: "for h ∈ [H]: Q_h ← RMSNorm(Q_h | γq_l, ε); for g ∈ [H_kv]: K_g ← RMSNorm(K_g | γk_l, ε)", Shape: col("d_h", c.HeadDim)})
	}
	steps = append(steps, []card.Step{
		{Depth: 1, Text: rope},
		{Depth: 1, Text: "for h ∈ [H]: g ← ⌈h·H_kv/H⌉; " + score + "; Y_h ← V_g softmax(S_h + Mask_l)", Shape: col("d_h", c.HeadDim)},
		{Depth: 1, Text: "X ← X + " + post("W_o^l [Y_1; …; Y_H]", "γ²_l"), Shape: col("d_e", c.Embed)},
		{Depth: 1, Text: "X̃ ← RMSNorm(X | γ³_l, ε)", Shape: col("d_e", c.Embed)},
		{Depth: 1, Text: "X ← X + " + post("W_down^l (GELU(W_gate^l X̃) ⊙ W_up^l X̃)", "γ⁴_l"), Shape: col("d_e", c.Embed) + " (inside: d_mlp × ℓ)"},
		{Text: "end for"},
		{Text: "X ← RMSNorm(X | γ, ε)", Shape: col("d_e", c.Embed)},
	}...)
	if c.FinalSoftCap > 0 {
		steps = append(steps, card.Step{Text: "return P = softmax(c_out·tanh(W_u X / c_out)), column by column", Shape: col("N_V", c.VocabSize)})
	} else {
		steps = append(steps, card.Step{Text: "return P = softmax(W_u X), column by column", Shape: col("N_V", c.VocabSize)})
	}
	k.Steps = steps
	mask := "Mask_l[t', t] = 0 if t' ≤ t else −∞ (causal); softmax runs over each column."
	if c.SlidingPattern() > 0 {
		mask = "Mask_l[t', t] = 0 if t' ≤ t (and, for the local layers " + local + ", t − t' < w) else −∞; softmax runs over each column."
	}
	k.Notes = []string{mask, "GELU is the tanh approximation; the RMSNorm scales are stored as 1 + w, as Gemma's norms use them."}
	k.ParamCount = c.ParamCount()
	return k
}

// ParamCount is the number of weights a model with configuration c holds.
func (c Config) ParamCount() int64 {
	V, D, F := int64(c.VocabSize), int64(c.Embed), int64(c.FFN)
	q, kv := int64(c.Heads*c.HeadDim), int64(c.KVHeads*c.HeadDim)
	layer := 2*D + D*q + 2*D*kv + q*D + 3*D*F
	if c.PostNorms() {
		layer += 2 * D
	}
	if c.QKNorm() {
		layer += 2 * int64(c.HeadDim)
	}
	n := V*D + int64(c.Layers)*layer + D
	if !c.TiedOutput {
		n += V * D
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
	r.Int("ffn", &c.FFN)
	r.Int("heads", &c.Heads)
	r.Int("kv_heads", &c.KVHeads)
	r.Int("head_dim", &c.HeadDim)
	r.Float("rope_base", &c.RopeBase)
	r.Float("norm_eps", &c.NormEps)
	r.Float("query_scale", &c.QueryScale)
	r.Bool("tied_output", &c.TiedOutput)
	if c.SlidingPattern() > 0 {
		r.Int("window", &c.Window)
	}
	if c.Arch == "gemma2" {
		r.Float("attn_softcap", &c.AttnSoftCap)
		r.Float("final_softcap", &c.FinalSoftCap)
	}
	if r.Has("rope_scale") {
		r.Float("rope_scale", &c.RopeScaleFactor)
	}
	return r.Config(c, c.Validate())
}

// cardFromHeader makes the card from metadata alone.
func cardFromHeader(h *gguf.File) (*card.Card, error) {
	c, err := ConfigFromGGUF(h)
	if err != nil {
		return nil, err
	}
	return c.Card(), nil
}
