// The algorithm card of an OLMoE model (Phuong & Hutter's DTransformer with
// RMSNorm, normalised queries and keys, RoPE, and a mixture of SwiGLU
// experts).

package olmoe

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
		if a := m.Blocks[i].Attn; a.Q != nil {
			ws = append(ws, a.Q.W, a.K.W, a.V.W, a.O.W)
		}
		if moe := m.MoE(i); moe.Gate != nil {
			ws = append(ws, moe.Gate, moe.Up, moe.Down)
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
	k := card.NewDecoder(Arch, "OLMoE: a decoder-only transformer with pre-RMSNorm, queries and keys RMS-normalised whole before half-split RoPE, "+
		"and a sparse mixture of SwiGLU experts in place of the MLP (the k most probable of N_E per token, weighted by their router probabilities).",
		c.VocabSize, c.ContextLength, c.Embed, c.Layers)
	k.Hyper = append(k.Hyper, []card.Hyper{
		{Symbol: "d_mlp", Value: card.Int(c.FFN), Key: "ffn", Meaning: "width of each expert"},
		{Symbol: "N_E", Value: card.Int(c.Experts), Key: "experts", Meaning: "experts per layer"},
		{Symbol: "k", Value: card.Int(c.ExpertsUsed), Key: "experts_used", Meaning: "experts run per token"},
		{Symbol: "H", Value: card.Int(c.Heads), Key: "heads", Meaning: "query heads"},
		{Symbol: "H_kv", Value: card.Int(c.KVHeads), Key: "kv_heads", Meaning: "key/value heads (grouped-query attention when < H)"},
		{Symbol: "d_h", Value: card.Int(c.HeadDim), Key: "head_dim", Meaning: "head width"},
		{Symbol: "d_rope", Value: card.Int(c.RopeDim), Key: "rope_dim", Meaning: "features rotated per head"},
		{Symbol: "θ_rope", Value: card.Float(c.RopeBase), Key: "rope_base", Meaning: "RoPE frequency base"},
		{Symbol: "ε", Value: card.Float(c.NormEps), Key: "norm_eps", Meaning: "RMSNorm epsilon"},
	}...)
	per := func(sym, shape, meaning string) card.Param {
		return card.Param{Symbol: sym, Shape: shape, Meaning: meaning, PerLayer: true}
	}
	k.Params = []card.Param{
		{Symbol: "W_e", Shape: "d_e × N_V", Meaning: "token embedding"},
		per("γ¹_l", "d_e", "attention RMSNorm scale"),
		per("W_q^l", q+" × d_e", "query projection"),
		per("W_k^l", kv+" × d_e", "key projection"),
		per("W_v^l", kv+" × d_e", "value projection"),
		per("γq_l", q, "query RMSNorm scale"),
		per("γk_l", kv, "key RMSNorm scale"),
		per("W_o^l", "d_e × "+q, "attention output projection"),
		per("γ²_l", "d_e", "MoE RMSNorm scale"),
		per("W_r^l", "N_E × d_e", "router"),
		per("W_gate^l", "N_E × d_mlp × d_e", "experts' gates; expert e's is W_gate^{l,e} = W_gate^l[e]"),
		per("W_up^l", "N_E × d_mlp × d_e", "experts' up projections, W_up^{l,e} = W_up^l[e]"),
		per("W_down^l", "N_E × d_e × d_mlp", "experts' down projections, W_down^{l,e} = W_down^l[e]"),
		{Symbol: "γ", Shape: "d_e", Meaning: "final RMSNorm scale"},
		{Symbol: "W_u", Shape: "N_V × d_e", Meaning: "unembedding"},
	}
	k.Steps = []card.Step{
		{Text: "ℓ ← length(x)"},
		{Text: "for t ∈ [ℓ]: X[:, t] ← W_e[:, x[t]]", Shape: col("d_e", c.Embed)},
		{Text: "for l = 1, 2, …, L do"},
		{Depth: 1, Text: "X̃ ← RMSNorm(X | γ¹_l, ε)", Shape: col("d_e", c.Embed)},
		{Depth: 1, Text: "Q ← W_q^l X̃;  K ← W_k^l X̃;  V ← W_v^l X̃", Shape: fmt.Sprintf("Q: %s, K, V: %s", col(q, qn), col(kv, kvn))},
		{Depth: 1, Text: "Q ← RMSNorm(Q | γq_l, ε);  K ← RMSNorm(K | γk_l, ε)", Shape: fmt.Sprintf("Q: %s, K: %s", col(q, qn), col(kv, kvn))},
		{Depth: 1, Text: "Q, K ← RoPE(Q, K | d_rope, θ_rope), rotating half-split pairs (i, i + d_rope/2)"},
		{Depth: 1, Text: "for h ∈ [H]: g ← ⌈h·H_kv/H⌉; Y_h ← V_g softmax(K_gᵀ Q_h / √d_h + Mask)", Shape: col("d_h", c.HeadDim)},
		{Depth: 1, Text: "X ← X + W_o^l [Y_1; …; Y_H]", Shape: col("d_e", c.Embed)},
		{Depth: 1, Text: "X̃ ← RMSNorm(X | γ²_l, ε)", Shape: col("d_e", c.Embed)},
		{Depth: 1, Text: "P_r ← softmax(W_r^l X̃), column by column", Shape: col("N_E", c.Experts)},
		{Depth: 1, Text: "for t ∈ [ℓ]: S_t ← the k rows e of largest P_r[e, t]"},
		{Depth: 1, Text: "for t ∈ [ℓ]: X[:, t] ← X[:, t] + Σ_{e ∈ S_t} P_r[e, t] · W_down^{l,e} (SiLU(W_gate^{l,e} X̃[:, t]) ⊙ W_up^{l,e} X̃[:, t])",
			Shape: "d_e (inside: d_mlp)"},
		{Text: "end for"},
		{Text: "X ← RMSNorm(X | γ, ε)", Shape: col("d_e", c.Embed)},
		{Text: "return P = softmax(W_u X), column by column", Shape: col("N_V", c.VocabSize)},
	}
	k.Notes = []string{
		"Mask[t', t] = 0 if t' ≤ t else −∞ (causal); softmax runs over each column.",
		"The k routing weights P_r[e, t] are not renormalised over S_t.",
	}
	k.ParamCount = c.ParamCount()
	return k
}

// ParamCount is the number of weights a model with configuration c holds
// (all experts, not only the k a token uses).
func (c Config) ParamCount() int64 {
	V, D, F, E := int64(c.VocabSize), int64(c.Embed), int64(c.FFN), int64(c.Experts)
	q, kv := int64(c.Heads*c.HeadDim), int64(c.KVHeads*c.HeadDim)
	layer := 2*D + D*q + 2*D*kv + q + kv + q*D + E*D + 3*E*D*F
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
	r.Int("experts", &c.Experts)
	r.Int("experts_used", &c.ExpertsUsed)
	r.Int("heads", &c.Heads)
	r.Int("kv_heads", &c.KVHeads)
	r.Int("head_dim", &c.HeadDim)
	r.Int("rope_dim", &c.RopeDim)
	r.Float("rope_base", &c.RopeBase)
	r.Float("norm_eps", &c.NormEps)
	return r.Config(c, c.Validate())
}

// cardFromHeader makes the card from metadata alone; features toy cannot run
// yet become notes instead of errors, so that every OLMoE file can be
// described.
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
