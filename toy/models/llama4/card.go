// The algorithm card of a Llama 4 model (Phuong & Hutter's DTransformer with
// RMSNorm, RoPE and NoPE layers interleaved, chunked local attention,
// attention temperature, an L2 norm of queries and keys, and a mixture of
// experts weighted before they run, beside a shared expert).

package llama4

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
		b := &m.Blocks[i]
		if a := b.Attn; a.Q != nil {
			ws = append(ws, a.Q.W, a.K.W, a.V.W, a.O.W)
		}
		switch f := b.FFN.(type) {
		case *nn.SwiGLU:
			if f.Gate != nil {
				ws = append(ws, f.Gate.W, f.Up.W, f.Down.W)
			}
		case *nn.MoE:
			if f.Gate != nil {
				ws = append(ws, f.Gate, f.Up, f.Down)
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
	k := card.NewDecoder(Arch, "Llama 4: a decoder-only transformer with pre-RMSNorm and grouped-query attention whose layers "+
		"interleave RoPE, chunked local attention and an L2 norm of queries and keys with global NoPE layers that sharpen "+
		"far queries by a temperature, and a SwiGLU MLP or, every P_moe layers, a mixture of SwiGLU experts run on inputs "+
		"weighted by the sigmoid of their router logits, plus a shared expert.",
		c.VocabSize, c.ContextLength, c.Embed, c.Layers)
	k.Hyper = append(k.Hyper, []card.Hyper{
		{Symbol: "d_mlp", Value: card.Int(c.FFN), Key: "ffn", Meaning: "width of the dense layers' MLP"},
		{Symbol: "d_exp", Value: card.Int(c.ExpertFFN), Key: "expert_ffn", Meaning: "width of each expert and of the shared expert"},
		{Symbol: "N_E", Value: card.Int(c.Experts), Key: "experts", Meaning: "experts per mixture layer"},
		{Symbol: "k", Value: card.Int(c.ExpertsUsed), Key: "experts_used", Meaning: "experts run per token"},
		{Symbol: "P_moe", Value: card.Int(c.MoEPeriod), Key: "moe_period", Meaning: "layer l is a mixture when l mod P_moe = 0 (0: none)"},
		{Symbol: "H", Value: card.Int(c.Heads), Key: "heads", Meaning: "query heads"},
		{Symbol: "H_kv", Value: card.Int(c.KVHeads), Key: "kv_heads", Meaning: "key/value heads"},
		{Symbol: "d_h", Value: card.Int(c.HeadDim), Key: "head_dim", Meaning: "head width, all of it rotated"},
		{Symbol: "θ_rope", Value: card.Float(c.RopeBase), Key: "rope_base", Meaning: "RoPE frequency base"},
		{Symbol: "θ_c", Value: card.Float(c.RopeBaseChunked), Key: "chunk_rope_base", Meaning: "RoPE base of the chunked layers (0: θ_rope)"},
		{Symbol: "s_rope", Value: card.Float(c.RopeScale), Key: "rope_scale", Meaning: "every RoPE angle is divided by s_rope (0: none)"},
		{Symbol: "f_rope", Value: card.Bool(c.RopeFreqs), Key: "rope_freqs", Meaning: "pair i's RoPE angle is divided by the frequency factor f[i]"},
		{Symbol: "P_nope", Value: card.Int(c.NoRoPEPeriod), Key: "no_rope_period", Meaning: "layer l has no RoPE when l mod P_nope = 0 (0: no layer has RoPE)"},
		{Symbol: "c", Value: card.Int(c.Chunk), Key: "chunk", Meaning: "the chunked layers attend within chunks of c positions (0: none)"},
		{Symbol: "P_c", Value: card.Int(c.ChunkPeriod), Key: "chunk_period", Meaning: "layer l is chunked when (l − 1) mod P_c < P_c − 1 (0: every layer)"},
		{Symbol: "τ", Value: card.Float(c.TempScale), Key: "temp_scale", Meaning: "the NoPE layers' attention temperature (0: none)"},
		{Symbol: "n_τ", Value: card.Int(c.TempFloor), Key: "temp_floor", Meaning: "the temperature's step, in positions"},
		{Symbol: "o_τ", Value: card.Float(c.TempOffset), Key: "temp_offset", Meaning: "the temperature counts positions from o_τ"},
		{Symbol: "l2", Value: card.Bool(c.L2Norm), Key: "l2_norm", Meaning: "the RoPE layers RMS-normalise each query and key head after RoPE"},
		{Symbol: "ε", Value: card.Float(c.NormEps), Key: "norm_eps", Meaning: "RMSNorm epsilon"},
		{Symbol: "tied", Value: card.Bool(c.TiedOutput), Key: "tied_output", Meaning: "the unembedding is the token embedding (W_u = W_eᵀ)"},
	}...)
	per := func(sym, shape, meaning string) card.Param {
		return card.Param{Symbol: sym, Shape: shape, Meaning: meaning, PerLayer: true}
	}
	k.Params = []card.Param{{Symbol: "W_e", Shape: "d_e × N_V", Meaning: "token embedding"}}
	if c.RopeFreqs {
		k.Params = append(k.Params, card.Param{Symbol: "f", Shape: "d_h/2", Meaning: "RoPE frequency factors (a constant, not trained)"})
	}
	k.Params = append(k.Params,
		per("γ¹_l", "d_e", "attention RMSNorm scale"),
		per("W_q^l", q+" × d_e", "query projection"),
		per("W_k^l", kv+" × d_e", "key projection"),
		per("W_v^l", kv+" × d_e", "value projection"),
		per("W_o^l", "d_e × "+q, "attention output projection"),
		per("γ²_l", "d_e", "MLP RMSNorm scale"),
		per("W_gate^l, W_up^l", "d_mlp × d_e", "MLP gate and up projection (dense layers)"),
		per("W_down^l", "d_e × d_mlp", "MLP down projection (dense layers)"),
		per("W_r^l", "N_E × d_e", "router (mixture layers)"),
		per("W_gate^{l,e}, W_up^{l,e}", "d_exp × d_e", "expert e's gate and up projection, e ∈ [N_E]"),
		per("W_down^{l,e}", "d_e × d_exp", "expert e's down projection"),
		per("W_gate^{l,s}, W_up^{l,s}", "d_exp × d_e", "shared expert's gate and up projection"),
		per("W_down^{l,s}", "d_e × d_exp", "shared expert's down projection"),
		card.Param{Symbol: "γ", Shape: "d_e", Meaning: "final RMSNorm scale"})
	if c.TiedOutput {
		k.Params = append(k.Params, card.Param{Symbol: "W_u = W_eᵀ", Shape: "N_V × d_e", Meaning: "unembedding, tied to the token embedding"})
	} else {
		k.Params = append(k.Params, card.Param{Symbol: "W_u", Shape: "N_V × d_e", Meaning: "unembedding"})
	}
	rope := "Q, K ← RoPE(Q, K | d_h, θ_rope or, chunked, θ_c), rotating adjacent pairs (2i, 2i+1) by angles pos·θ^(−2i/d_h)"
	if c.RopeFreqs {
		rope += "/f[i]"
	}
	if c.RopeScale != 0 {
		rope += "/s_rope"
	}
	steps := []card.Step{
		{Text: "ℓ ← length(x)"},
		{Text: "for t ∈ [ℓ]: X[:, t] ← W_e[:, x[t]]", Shape: col("d_e", c.Embed)},
		{Text: "for l = 1, 2, …, L do"},
		{Depth: 1, Text: "X̃ ← RMSNorm(X | γ¹_l, ε)", Shape: col("d_e", c.Embed)},
		{Depth: 1, Text: "Q ← W_q^l X̃;  K ← W_k^l X̃;  V ← W_v^l X̃", Shape: fmt.Sprintf("Q: %s, K, V: %s", col(q, qn), col(kv, kvn))},
		{Depth: 1, Text: "if l mod P_nope ≠ 0 then"},
		{Depth: 2, Text: rope},
	}
	if c.L2Norm {
		steps = append(steps, card.Step{Depth: 2, Text: "for h ∈ [H]: Q_h ← Q_h / √(mean(Q_h²) + ε); for g ∈ [H_kv]: K_g ← K_g / √(mean(K_g²) + ε)",
			Shape: col("d_h", c.HeadDim)})
	}
	steps = append(steps, []card.Step{
		{Depth: 1, Text: "else"},
		{Depth: 2, Text: "for t ∈ [ℓ]: Q[:, t] ← (1 + τ·ln(⌊(t − 1 + o_τ)/n_τ⌋ + 1)) Q[:, t]  (position t − 1)"},
		{Depth: 1, Text: "end if"},
		{Depth: 1, Text: "Mask[t', t] ← 0 if t' ≤ t and, when (l − 1) mod P_c < P_c − 1, ⌊(t' − 1)/c⌋ = ⌊(t − 1)/c⌋; else −∞"},
		{Depth: 1, Text: "for h ∈ [H]: g ← ⌈h·H_kv/H⌉; Y_h ← V_g softmax(K_gᵀ Q_h / √d_h + Mask)", Shape: col("d_h", c.HeadDim)},
		{Depth: 1, Text: "X ← X + W_o^l [Y_1; …; Y_H]", Shape: col("d_e", c.Embed)},
		{Depth: 1, Text: "X̃ ← RMSNorm(X | γ²_l, ε)", Shape: col("d_e", c.Embed)},
		{Depth: 1, Text: "if l mod P_moe ≠ 0 then X ← X + W_down^l (SiLU(W_gate^l X̃) ⊙ W_up^l X̃)", Shape: col("d_e", c.Embed) + " (inside: d_mlp × ℓ)"},
		{Depth: 1, Text: "else for t ∈ [ℓ]: r ← W_r^l X̃[:, t]; S ← the k largest r_e; x̃_e ← σ(r_e) X̃[:, t]"},
		{Depth: 2, Text: "X[:, t] ← X[:, t] + Σ_{e ∈ S} W_down^{l,e} (SiLU(W_gate^{l,e} x̃_e) ⊙ W_up^{l,e} x̃_e) + W_down^{l,s} (SiLU(W_gate^{l,s} X̃[:, t]) ⊙ W_up^{l,s} X̃[:, t])",
			Shape: "d_e (inside: d_exp × (k + 1))"},
		{Text: "end for"},
		{Text: "X ← RMSNorm(X | γ, ε)", Shape: col("d_e", c.Embed)},
		{Text: "return P = softmax(W_u X), column by column", Shape: col("N_V", c.VocabSize)},
	}...)
	k.Steps = steps
	k.Notes = []string{
		"Layers count from 1 here: llama.cpp's NoPE layers are 3, 7, 11, … (P_nope = 4), its chunked layers 0, 1, 2, 4, … (P_c = 4), its mixtures 0, 1, 2, … (P_moe = 1) or 1, 3, 5, … (P_moe = 2).",
		"The experts' inputs, not their outputs, carry the router's weights σ(r_e); the k experts are the largest logits r_e.",
	}
	k.ParamCount = c.ParamCount()
	return k
}

// ParamCount is the number of weights a model with configuration c holds
// (all experts, not only the k a token uses).
func (c Config) ParamCount() int64 {
	V, D, F, FE, E := int64(c.VocabSize), int64(c.Embed), int64(c.FFN), int64(c.ExpertFFN), int64(c.Experts)
	q, kv := int64(c.Heads*c.HeadDim), int64(c.KVHeads*c.HeadDim)
	n := V*D + D
	if !c.TiedOutput {
		n += V * D
	}
	if c.RopeFreqs {
		n += int64(c.HeadDim / 2)
	}
	for l := range c.Layers {
		n += 2*D + D*q + 2*D*kv + q*D
		if c.MoE(l) {
			n += E*D + 3*E*D*FE + 3*D*FE
		} else {
			n += 3 * D * F
		}
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
	r.Int("expert_ffn", &c.ExpertFFN)
	r.Int("experts", &c.Experts)
	r.Int("experts_used", &c.ExpertsUsed)
	r.Int("moe_period", &c.MoEPeriod)
	r.Int("heads", &c.Heads)
	r.Int("kv_heads", &c.KVHeads)
	r.Int("head_dim", &c.HeadDim)
	r.Float("rope_base", &c.RopeBase)
	r.Float("chunk_rope_base", &c.RopeBaseChunked)
	r.Float("rope_scale", &c.RopeScale)
	r.Bool("rope_freqs", &c.RopeFreqs)
	r.Int("no_rope_period", &c.NoRoPEPeriod)
	r.Int("chunk", &c.Chunk)
	r.Int("chunk_period", &c.ChunkPeriod)
	r.Float("temp_scale", &c.TempScale)
	r.Int("temp_floor", &c.TempFloor)
	r.Float("temp_offset", &c.TempOffset)
	r.Bool("l2_norm", &c.L2Norm)
	r.Float("norm_eps", &c.NormEps)
	r.Bool("tied_output", &c.TiedOutput)
	return r.Config(c, c.Validate())
}

// cardFromHeader makes the card from metadata alone; features toy cannot run
// yet become notes instead of errors, so that every llama4 file can be
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
