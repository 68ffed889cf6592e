// The algorithm card of StarCoder2: Phuong & Hutter's DTransformer with
// GPT-2's pre-LayerNorm blocks, grouped-query attention and rotary positions.

package starcoder2

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
		if f, ok := m.Blocks[i].FFN.(*nn.MLP); ok && f.Up != nil {
			ws = append(ws, f.Up.W, f.Down.W)
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
	k := card.NewDecoder(Arch, "StarCoder2: GPT-2's pre-LayerNorm blocks and GELU MLP with grouped-query attention and half-split rotary positions, every projection with a bias.",
		c.VocabSize, c.ContextLength, c.Embed, c.Layers)
	k.Hyper = append(k.Hyper, []card.Hyper{
		{Symbol: "d_mlp", Value: card.Int(c.FFN), Key: "ffn", Meaning: "feed-forward width"},
		{Symbol: "H", Value: card.Int(c.Heads), Key: "heads", Meaning: "query heads, each d_h = d_e/H wide"},
		{Symbol: "H_kv", Value: card.Int(c.KVHeads), Key: "kv_heads", Meaning: "key/value heads (grouped-query attention when < H)"},
		{Symbol: "θ_rope", Value: card.Float(c.RopeBase), Key: "rope_base", Meaning: "RoPE frequency base"},
		{Symbol: "ε", Value: card.Float(c.NormEps), Key: "norm_eps", Meaning: "LayerNorm epsilon"},
		{Symbol: "tied", Value: card.Bool(c.TiedOutput), Key: "tied_output", Meaning: "the unembedding is the token embedding (W_u = W_eᵀ)"},
	}...)
	per := func(sym, shape, meaning string) card.Param {
		return card.Param{Symbol: sym, Shape: shape, Meaning: meaning, PerLayer: true}
	}
	k.Params = []card.Param{
		{Symbol: "W_e", Shape: "d_e × N_V", Meaning: "token embedding"},
		per("γ¹_l, β¹_l", "d_e", "attention LayerNorm scale and offset"),
		per("W_q^l, b_q^l", "d_e × d_e, d_e", "query projection and bias"),
		per("W_k^l, b_k^l", "H_kv·d_h × d_e, H_kv·d_h", "key projection and bias"),
		per("W_v^l, b_v^l", "H_kv·d_h × d_e, H_kv·d_h", "value projection and bias"),
		per("W_o^l, b_o^l", "d_e × d_e, d_e", "attention output projection and bias"),
		per("γ²_l, β²_l", "d_e", "MLP LayerNorm scale and offset"),
		per("W_mlp1^l, b_mlp1^l", "d_mlp × d_e, d_mlp", "MLP up projection and bias"),
		per("W_mlp2^l, b_mlp2^l", "d_e × d_mlp, d_e", "MLP down projection and bias"),
		{Symbol: "γ, β", Shape: "d_e", Meaning: "final LayerNorm scale and offset"},
	}
	if c.TiedOutput {
		k.Params = append(k.Params, card.Param{Symbol: "W_u = W_eᵀ", Shape: "N_V × d_e", Meaning: "unembedding, tied to the token embedding"})
	} else {
		k.Params = append(k.Params, card.Param{Symbol: "W_u", Shape: "N_V × d_e", Meaning: "unembedding"})
	}
	kv := c.KVHeads * dh
	k.Steps = []card.Step{
		{Text: "ℓ ← length(x)"},
		{Text: "for t ∈ [ℓ]: X[:, t] ← W_e[:, x[t]]", Shape: col("d_e", c.Embed)},
		{Text: "for l = 1, 2, …, L do"},
		{Depth: 1, Text: "X̃ ← LayerNorm(X | γ¹_l, β¹_l, ε)", Shape: col("d_e", c.Embed)},
		{Depth: 1, Text: "Q ← W_q^l X̃ + b_q^l 1ᵀ;  K ← W_k^l X̃ + b_k^l 1ᵀ;  V ← W_v^l X̃ + b_v^l 1ᵀ",
			Shape: fmt.Sprintf("Q: %s, K, V: %s", col("d_e", c.Embed), col("H_kv·d_h", kv))},
		{Depth: 1, Text: "Q, K ← RoPE(Q, K | d_h, θ_rope), rotating half-split pairs (i, i + d_h/2)"},
		{Depth: 1, Text: "for h ∈ [H]: g ← ⌈h·H_kv/H⌉; Y_h ← V_g softmax(K_gᵀ Q_h / √d_h + Mask)", Shape: col("d_h", dh)},
		{Depth: 1, Text: "X ← X + W_o^l [Y_1; …; Y_H] + b_o^l 1ᵀ", Shape: col("d_e", c.Embed)},
		{Depth: 1, Text: "X̃ ← LayerNorm(X | γ²_l, β²_l, ε)", Shape: col("d_e", c.Embed)},
		{Depth: 1, Text: "X ← X + W_mlp2^l GELU(W_mlp1^l X̃ + b_mlp1^l 1ᵀ) + b_mlp2^l 1ᵀ", Shape: col("d_e", c.Embed) + " (inside: d_mlp × ℓ)"},
		{Text: "end for"},
		{Text: "X ← LayerNorm(X | γ, β, ε)", Shape: col("d_e", c.Embed)},
		{Text: "return P = softmax(W_u X), column by column", Shape: col("N_V", c.VocabSize)},
	}
	k.Notes = []string{"Mask[t', t] = 0 if t' ≤ t else −∞ (causal); softmax runs over each column."}
	k.ParamCount = c.ParamCount()
	return k
}

// ParamCount is the number of weights a model with configuration c holds.
func (c Config) ParamCount() int64 {
	V, D, F := int64(c.VocabSize), int64(c.Embed), int64(c.FFN)
	kv := int64(c.KVHeads) * int64(c.Embed/max(c.Heads, 1))
	layer := 4*D + (D*D + D) + 2*(D*kv+kv) + (D*D + D) + (F*D + F) + (D*F + D)
	n := V*D + int64(c.Layers)*layer + 2*D
	if !c.TiedOutput {
		n += V * D
	}
	return n
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
	r.Bool("tied_output", &c.TiedOutput)
	return r.Config(c, c.Validate())
}

// cardFromHeader makes the card from GGUF metadata alone.
func cardFromHeader(h *gguf.File) (*card.Card, error) {
	c, err := ConfigFromGGUF(h)
	if err != nil {
		return nil, err
	}
	return c.Card(), nil
}
