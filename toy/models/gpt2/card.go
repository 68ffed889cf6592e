// The algorithm card of GPT-2: Phuong & Hutter's DTransformer (their
// Algorithm 10), with pre-LayerNorm as in GPT-2.

package gpt2

import (
	"fmt"

	"github.com/toyml/toy/toy/card"
	"github.com/toyml/toy/toy/gguf"
	"github.com/toyml/toy/toy/nn"
	"github.com/toyml/toy/toy/tensor"
)

// Card returns the model's algorithm card. The output head counts as tied
// when the model shares the token embedding (or, with no weights yet, when
// the Config says so), and the quantization is that of the loaded weights.
func (m *Model) Card() *card.Card {
	tied := m.Config.TiedOutput
	if m.Output != nil && m.Embed != nil {
		tied = m.Output.W == m.Embed.W
	}
	c := m.Config.card(tied)
	var ws []*tensor.Tensor
	if m.Embed != nil {
		ws = append(ws, m.Embed.W)
	}
	for i := range m.Blocks {
		b := &m.Blocks[i]
		if b.Attn.QKV != nil {
			ws = append(ws, b.Attn.QKV.W, b.Attn.O.W)
		}
		if f, ok := b.FFN.(*nn.MLP); ok && f.Up != nil {
			ws = append(ws, f.Up.W, f.Down.W)
		}
	}
	c.Quant = card.DominantType(ws)
	return c
}

// Card returns the algorithm card of a GPT-2 with configuration c.
func (c Config) Card() *card.Card { return c.card(c.TiedOutput) }

func (c Config) card(tied bool) *card.Card {
	col := func(sym string, rows int) string { return fmt.Sprintf("%s × ℓ = %d × ℓ", sym, rows) }
	k := card.NewDecoder("gpt2", "GPT-2: a decoder-only transformer with learned positions, pre-LayerNorm, multi-head attention and a GELU MLP, all with biases.",
		c.VocabSize, c.ContextLength, c.Embed, c.Layers)
	k.Hyper[1].Meaning = "context length (learned positions)"
	k.Hyper = append(k.Hyper, []card.Hyper{
		{Symbol: "d_mlp", Value: card.Int(c.FFN), Key: "ffn", Meaning: "feed-forward width"},
		{Symbol: "H", Value: card.Int(c.Heads), Key: "heads", Meaning: "attention heads, each d_e/H wide"},
		{Symbol: "ε", Value: card.Float(c.NormEps), Key: "norm_eps", Meaning: "LayerNorm epsilon"},
		{Symbol: "tied", Value: card.Bool(tied), Key: "tied_output", Meaning: "the unembedding is the token embedding (W_u = W_eᵀ)"},
	}...)
	per := func(sym, shape, meaning string) card.Param {
		return card.Param{Symbol: sym, Shape: shape, Meaning: meaning, PerLayer: true}
	}
	k.Params = []card.Param{
		{Symbol: "W_e", Shape: "d_e × N_V", Meaning: "token embedding"},
		{Symbol: "W_p", Shape: "d_e × ℓ_max", Meaning: "position embedding"},
		per("γ¹_l, β¹_l", "d_e", "attention LayerNorm scale and offset"),
		per("W_qkv^l", "3d_e × d_e", "query, key and value projections, stacked"),
		per("b_qkv^l", "3d_e", "their biases"),
		per("W_o^l", "d_e × d_e", "attention output projection"),
		per("b_o^l", "d_e", "its bias"),
		per("γ²_l, β²_l", "d_e", "MLP LayerNorm scale and offset"),
		per("W_mlp1^l", "d_mlp × d_e", "MLP up projection"),
		per("b_mlp1^l", "d_mlp", "its bias"),
		per("W_mlp2^l", "d_e × d_mlp", "MLP down projection"),
		per("b_mlp2^l", "d_e", "its bias"),
		{Symbol: "γ, β", Shape: "d_e", Meaning: "final LayerNorm scale and offset"},
	}
	if tied {
		k.Params = append(k.Params, card.Param{Symbol: "W_u = W_eᵀ", Shape: "N_V × d_e", Meaning: "unembedding, tied to the token embedding"})
	} else {
		k.Params = append(k.Params, card.Param{Symbol: "W_u", Shape: "N_V × d_e", Meaning: "unembedding"})
	}
	dh := 0
	if c.Heads > 0 {
		dh = c.Embed / c.Heads
	}
	k.Steps = []card.Step{
		{Text: "ℓ ← length(x)"},
		{Text: "for t ∈ [ℓ]: X[:, t] ← W_e[:, x[t]] + W_p[:, t]", Shape: col("d_e", c.Embed)},
		{Text: "for l = 1, 2, …, L do"},
		{Depth: 1, Text: "X̃ ← LayerNorm(X | γ¹_l, β¹_l, ε)", Shape: col("d_e", c.Embed)},
		{Depth: 1, Text: "[Q; K; V] ← W_qkv^l X̃ + b_qkv^l 1ᵀ", Shape: col("3d_e", 3*c.Embed)},
		{Depth: 1, Text: "for h ∈ [H]: Y_h ← V_h softmax(K_hᵀ Q_h / √(d_e/H) + Mask)", Shape: col("d_e/H", dh)},
		{Depth: 1, Text: "X ← X + W_o^l [Y_1; …; Y_H] + b_o^l 1ᵀ", Shape: col("d_e", c.Embed)},
		{Depth: 1, Text: "X̃ ← LayerNorm(X | γ²_l, β²_l, ε)", Shape: col("d_e", c.Embed)},
		{Depth: 1, Text: "X ← X + W_mlp2^l GELU(W_mlp1^l X̃ + b_mlp1^l 1ᵀ) + b_mlp2^l 1ᵀ", Shape: col("d_e", c.Embed) + " (inside: d_mlp × ℓ)"},
		{Text: "end for"},
		{Text: "X ← LayerNorm(X | γ, β, ε)", Shape: col("d_e", c.Embed)},
		{Text: "return P = softmax(W_u X), column by column", Shape: col("N_V", c.VocabSize)},
	}
	k.Notes = []string{"Mask[t', t] = 0 if t' ≤ t else −∞ (causal); softmax runs over each column."}
	k.ParamCount = c.paramCount(tied)
	return k
}

// paramCount is the number of weights of a GPT-2 with configuration c.
func (c Config) paramCount(tied bool) int64 {
	V, P, D, F := int64(c.VocabSize), int64(c.ContextLength), int64(c.Embed), int64(c.FFN)
	layer := 4*D + (3*D*D + 3*D) + (D*D + D) + (F*D + F) + (D*F + D)
	n := V*D + P*D + int64(c.Layers)*layer + 2*D
	if !tied {
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
	k := c.Card()
	return k, nil
}
