// The algorithm card of a Phi-3-family model (Phuong & Hutter's DTransformer
// with RMSNorm, fused projections, partial half-split RoPE with LongRoPE
// factors, grouped-query attention and SwiGLU).

package phi3

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
		a := m.Blocks[i].Attn
		for _, l := range []*nn.Linear{a.QKV, a.Q, a.K, a.V, a.O, m.Blocks[i].FFN.(*MLP).GateUp, m.Blocks[i].FFN.(*MLP).Down} {
			if l != nil {
				ws = append(ws, l.W)
			}
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
	k := card.NewDecoder(Arch, "Phi-3: the Llama transformer (pre-RMSNorm, grouped-query attention, SwiGLU) with fused query/key/value and gate/up projections, "+
		"half-split RoPE on the first d_rope features of each head, and LongRoPE frequency factors for long contexts.",
		c.VocabSize, c.ContextLength, c.Embed, c.Layers)
	k.Hyper = append(k.Hyper, []card.Hyper{
		{Symbol: "d_mlp", Value: card.Int(c.FFN), Key: "ffn", Meaning: "feed-forward width"},
		{Symbol: "H", Value: card.Int(c.Heads), Key: "heads", Meaning: "query heads"},
		{Symbol: "H_kv", Value: card.Int(c.KVHeads), Key: "kv_heads", Meaning: "key/value heads (grouped-query attention when < H)"},
		{Symbol: "d_h", Value: card.Int(c.HeadDim), Key: "head_dim", Meaning: "head width"},
		{Symbol: "d_rope", Value: card.Int(c.RopeDim), Key: "rope_dim", Meaning: "features rotated per head, from the first"},
		{Symbol: "θ_rope", Value: card.Float(c.RopeBase), Key: "rope_base", Meaning: "RoPE frequency base"},
		{Symbol: "ε", Value: card.Float(c.NormEps), Key: "norm_eps", Meaning: "RMSNorm epsilon"},
		{Symbol: "tied", Value: card.Bool(c.TiedOutput), Key: "tied_output", Meaning: "the unembedding is the token embedding (W_u = W_eᵀ)"},
		{Symbol: "longrope", Value: card.Bool(c.RopeFactors), Key: "rope_factors", Meaning: "LongRoPE: pair i's angle is divided by f_s[i] or f_l[i]"},
		{Symbol: "ℓ_orig", Value: card.Int(c.RopeOrigContext), Key: "rope_orig_context", Meaning: "original context: a longer context n_ctx runs with f_l"},
		{Symbol: "m_rope", Value: card.Float(c.RopeAttnFactor), Key: "rope_attn_factor", Meaning: "RoPE's cos and sin are multiplied by m_rope (0: by 1)"},
	}...)
	per := func(sym, shape, meaning string) card.Param {
		return card.Param{Symbol: sym, Shape: shape, Meaning: meaning, PerLayer: true}
	}
	k.Params = []card.Param{{Symbol: "W_e", Shape: "d_e × N_V", Meaning: "token embedding"}}
	if c.RopeFactors {
		k.Params = append(k.Params,
			card.Param{Symbol: "f_s", Shape: "d_rope/2", Meaning: "LongRoPE's short factors (a constant, not trained)"},
			card.Param{Symbol: "f_l", Shape: "d_rope/2", Meaning: "LongRoPE's long factors (a constant, not trained)"})
	}
	k.Params = append(k.Params,
		per("γ¹_l", "d_e", "attention RMSNorm scale"),
		per("W_qkv^l", "("+q+" + 2·"+kv+") × d_e", "fused query, key and value projections"),
		per("W_o^l", "d_e × "+q, "attention output projection"),
		per("γ²_l", "d_e", "MLP RMSNorm scale"),
		per("W_up^l", "2·d_mlp × d_e", "fused gate (first d_mlp rows) and up projections"),
		per("W_down^l", "d_e × d_mlp", "MLP down projection"),
		card.Param{Symbol: "γ", Shape: "d_e", Meaning: "final RMSNorm scale"})
	if c.TiedOutput {
		k.Params = append(k.Params, card.Param{Symbol: "W_u = W_eᵀ", Shape: "N_V × d_e", Meaning: "unembedding, tied to the token embedding"})
	} else {
		k.Params = append(k.Params, card.Param{Symbol: "W_u", Shape: "N_V × d_e", Meaning: "unembedding"})
	}
	rope := "Q, K ← RoPE(Q, K | d_rope, θ_rope), rotating half-split pairs (i, i + d_rope/2) by angles pos·θ_rope^(−2i/d_rope)"
	if c.RopeFactors {
		rope += "/f[i], f = f_l if n_ctx > ℓ_orig else f_s"
	}
	if c.RopeAttnFactor != 0 {
		rope += "; cos, sin × m_rope"
	}
	k.Steps = []card.Step{
		{Text: "ℓ ← length(x)"},
		{Text: "for t ∈ [ℓ]: X[:, t] ← W_e[:, x[t]]", Shape: col("d_e", c.Embed)},
		{Text: "for l = 1, 2, …, L do"},
		{Depth: 1, Text: "X̃ ← RMSNorm(X | γ¹_l, ε)", Shape: col("d_e", c.Embed)},
		{Depth: 1, Text: "[Q; K; V] ← W_qkv^l X̃", Shape: fmt.Sprintf("Q: %s, K, V: %s", col(q, qn), col(kv, kvn))},
		{Depth: 1, Text: rope},
		{Depth: 1, Text: "for h ∈ [H]: g ← ⌈h·H_kv/H⌉; Y_h ← V_g softmax(K_gᵀ Q_h / √d_h + Mask)", Shape: col("d_h", c.HeadDim)},
		{Depth: 1, Text: "X ← X + W_o^l [Y_1; …; Y_H]", Shape: col("d_e", c.Embed)},
		{Depth: 1, Text: "X̃ ← RMSNorm(X | γ²_l, ε)", Shape: col("d_e", c.Embed)},
		{Depth: 1, Text: "[G; U] ← W_up^l X̃", Shape: "G, U: " + col("d_mlp", c.FFN)},
		{Depth: 1, Text: "X ← X + W_down^l (SiLU(G) ⊙ U)", Shape: col("d_e", c.Embed)},
		{Text: "end for"},
		{Text: "X ← RMSNorm(X | γ, ε)", Shape: col("d_e", c.Embed)},
		{Text: "return P = softmax(W_u X), column by column", Shape: col("N_V", c.VocabSize)},
	}
	k.Notes = []string{"Mask[t', t] = 0 if t' ≤ t else −∞ (causal); softmax runs over each column."}
	if c.RopeFactors {
		k.Notes = append(k.Notes, "n_ctx is the context the model runs with (toy: the KV cache's capacity), not ℓ.")
	}
	k.ParamCount = c.ParamCount()
	return k
}

// ParamCount is the number of weights a model with configuration c holds
// (LongRoPE's factors included).
func (c Config) ParamCount() int64 {
	V, D, F := int64(c.VocabSize), int64(c.Embed), int64(c.FFN)
	q, kv := int64(c.Heads*c.HeadDim), int64(c.KVHeads*c.HeadDim)
	layer := 2*D + D*(q+2*kv) + q*D + 3*D*F
	n := V*D + int64(c.Layers)*layer + D
	if !c.TiedOutput {
		n += V * D
	}
	if c.RopeFactors {
		n += int64(c.RopeDim)
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
	r.Int("head_dim", &c.HeadDim)
	r.Int("rope_dim", &c.RopeDim)
	r.Float("rope_base", &c.RopeBase)
	r.Float("norm_eps", &c.NormEps)
	r.Bool("tied_output", &c.TiedOutput)
	r.Bool("rope_factors", &c.RopeFactors)
	r.Int("rope_orig_context", &c.RopeOrigContext)
	r.Float("rope_attn_factor", &c.RopeAttnFactor)
	return r.Config(c, c.Validate())
}

// cardFromHeader makes the card from metadata alone; features toy cannot run
// yet become notes instead of errors, so that every Phi-3 file can be
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
