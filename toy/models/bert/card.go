// The algorithm card of a BERT-family encoder (Phuong & Hutter's
// ETransformer, ending in a pooled embedding instead of token predictions).

package bert

import (
	"fmt"

	"github.com/toyml/toy/toy/card"
	"github.com/toyml/toy/toy/gguf"
	"github.com/toyml/toy/toy/models"
	"github.com/toyml/toy/toy/nn"
	"github.com/toyml/toy/toy/tensor"
)

// The family is registered for its card; its models are not language
// models, so the registry's Load says what to use instead.
func init() {
	models.Register(models.Family{
		Arch: Archs[0], Aliases: Archs[1:], Card: cardFromHeader, ConfigFromCard: ConfigFromCard,
		Load: func(f *gguf.File) (models.Model, error) {
			arch, _ := f.Architecture()
			return nil, fmt.Errorf("%w %q: a text encoder, not a language model (use toy.LoadEmbedder, toy embed, or toy serve --embed)", models.ErrUnknownArch, arch)
		},
	})
}

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
		for _, l := range []*nn.Linear{b.Attn.Q, b.Attn.K, b.Attn.V, b.Attn.QKV, b.Attn.O} {
			if l != nil {
				ws = append(ws, l.W)
			}
		}
		switch ffn := b.FFN.(type) {
		case *MLP:
			if ffn.Up != nil {
				ws = append(ws, ffn.Up.W, ffn.Down.W)
			}
		case *nn.SwiGLU:
			if ffn.Up != nil {
				ws = append(ws, ffn.Gate.W, ffn.Up.W, ffn.Down.W)
			}
		}
	}
	c.Quant = card.DominantType(ws)
	return c
}

// Card returns the algorithm card of a model with configuration c.
func (c Config) Card() *card.Card {
	col := func(sym string, rows int) string { return fmt.Sprintf("%s × ℓ = %d × ℓ", sym, rows) }
	D := c.Embed
	k := &card.Card{
		Arch: c.Arch, Title: "ETransformer (BERT)",
		Summary: "BERT: a bidirectional post-LayerNorm encoder whose final states, pooled, are the text's embedding " +
			"(all-MiniLM, bge, e5, gte).",
		Inputs:  []string{"x ∈ [N_V]^ℓ, a sequence of token ids ([CLS] … [SEP]), ℓ ≤ ℓ_max"},
		Outputs: []string{fmt.Sprintf("e ∈ ℝ^{d_e}, the embedding of x (pooling: %s)", c.Pooling)},
		Hyper: []card.Hyper{
			{Symbol: "N_V", Value: card.Int(c.VocabSize), Key: "vocab_size", Meaning: "vocabulary size"},
			{Symbol: "ℓ_max", Value: card.Int(c.ContextLength), Key: "context_length", Meaning: "positions"},
			{Symbol: "d_e", Value: card.Int(c.Embed), Key: "embed", Meaning: "model width"},
			{Symbol: "L", Value: card.Int(c.Layers), Key: "layers", Meaning: "layers"},
			{Symbol: "d_mlp", Value: card.Int(c.FFN), Key: "ffn", Meaning: "MLP width"},
			{Symbol: "H", Value: card.Int(c.Heads), Key: "heads", Meaning: "attention heads"},
			{Symbol: "N_T", Value: card.Int(c.TokenTypes), Key: "token_types", Meaning: "token types (segments); only type 0 is used"},
			{Symbol: "ε", Value: card.Float(c.NormEps), Key: "norm_eps", Meaning: "LayerNorm epsilon"},
			{Symbol: "pool", Value: c.Pooling.String(), Key: "pooling", Meaning: "pooling: none, mean, cls, last or rank"},
			{Symbol: "causal", Value: card.Bool(c.Causal), Key: "causal", Meaning: "causal mask (false for every BERT)"},
		},
	}
	if c.Pooling == PoolRank {
		k.Summary += " With rank pooling a reranker: a classification head on the [CLS] state scores a query and a document read together."
		k.Outputs = []string{fmt.Sprintf("s ∈ ℝ^{N_C}, the scores of x, a query and a document; s[1] is the relevance logit")}
		k.Hyper = append(k.Hyper,
			card.Hyper{Symbol: "N_C", Value: card.Int(c.Labels), Key: "labels", Meaning: "classifier outputs"},
			card.Hyper{Symbol: "pooler", Value: card.Bool(c.Pooler), Key: "pooler", Meaning: "the head has the pooler W_h (tensor cls)"},
			card.Hyper{Symbol: "classifier", Value: card.Bool(c.Classifier), Key: "classifier", Meaning: "the head has the classifier W_c (tensor cls.output)"})
	}
	if c.Nomic() {
		k.Title = "ETransformer (nomic-bert)"
		k.Summary = "nomic-bert: a bidirectional post-LayerNorm encoder with rotary positions, a fused QKV projection " +
			"and SwiGLU, whose final states, pooled, are the text's embedding (nomic-embed-text)."
		k.Hyper = append(k.Hyper, card.Hyper{Symbol: "θ_rope", Value: card.Float(c.RopeBase), Key: "rope_base", Meaning: "RoPE frequency base"})
	}
	per := func(sym, shape, meaning string) card.Param {
		return card.Param{Symbol: sym, Shape: shape, Meaning: meaning, PerLayer: true}
	}
	k.Params = []card.Param{{Symbol: "W_e", Shape: "d_e × N_V", Meaning: "token embedding"}}
	if c.TokenTypes > 0 {
		k.Params = append(k.Params, card.Param{Symbol: "W_t", Shape: "d_e × N_T", Meaning: "token type embedding"})
	}
	if !c.Nomic() {
		k.Params = append(k.Params, card.Param{Symbol: "W_p", Shape: "d_e × ℓ_max", Meaning: "position embedding"})
	}
	k.Params = append(k.Params, card.Param{Symbol: "γ_e, β_e", Shape: "d_e", Meaning: "embedding LayerNorm"})
	embed := "X[:, t] ← W_e[:, x[t]] + W_p[:, t]"
	if c.TokenTypes > 0 {
		embed = "X[:, t] ← W_e[:, x[t]] + W_t[:, 1] + W_p[:, t]"
	}
	attn := "X ← X + MHAttention(X | W^l, Mask ≡ 1)"
	if c.Causal {
		attn = "X ← X + MHAttention(X | W^l, Mask[t', t] = [[t' ≤ t]])"
	}
	ffn := "X ← X + W_down^l GELU(W_up^l X + b_up^l 1ᵀ) + b_down^l 1ᵀ"
	if c.Nomic() {
		embed = "X[:, t] ← W_e[:, x[t]]"
		if c.TokenTypes > 0 {
			embed = "X[:, t] ← W_e[:, x[t]] + W_t[:, 1]"
		}
		k.Params = append(k.Params,
			per("W_qkv^l", "3d_e × d_e", "fused query, key, value projection"),
			per("W_o^l", "d_e × d_e", "attention output projection"),
			per("γ¹_l, β¹_l", "d_e", "attention LayerNorm"),
			per("W_gate^l, W_up^l", "d_mlp × d_e", "SwiGLU gate and up projections"),
			per("W_down^l", "d_e × d_mlp", "SwiGLU down projection"),
			per("γ²_l, β²_l", "d_e", "output LayerNorm"))
		ffn = "X ← X + W_down^l (SiLU(W_gate^l X) ⊙ W_up^l X)"
	} else {
		k.Params = append(k.Params,
			per("W_q^l, W_k^l, W_v^l, b_q^l, b_k^l, b_v^l", "d_e × d_e, d_e", "query, key, value projections"),
			per("W_o^l, b_o^l", "d_e × d_e, d_e", "attention output projection"),
			per("γ¹_l, β¹_l", "d_e", "attention LayerNorm"),
			per("W_up^l, b_up^l", "d_mlp × d_e, d_mlp", "MLP up projection"),
			per("W_down^l, b_down^l", "d_e × d_mlp, d_e", "MLP down projection"),
			per("γ²_l, β²_l", "d_e", "output LayerNorm"))
	}
	if c.Pooler {
		k.Params = append(k.Params, card.Param{Symbol: "W_h, b_h", Shape: "d_e × d_e, d_e", Meaning: "reranker pooler"})
	}
	if c.Classifier {
		k.Params = append(k.Params, card.Param{Symbol: "W_c, b_c", Shape: "N_C × d_e, N_C", Meaning: "reranker classifier"})
	}
	k.Steps = []card.Step{
		{Text: "ℓ ← length(x)"},
		{Text: "for t ∈ [ℓ]: " + embed, Shape: col("d_e", D)},
		{Text: "X ← LayerNorm(X | γ_e, β_e)", Shape: col("d_e", D)},
		{Text: "for l = 1, 2, …, L do"},
	}
	if c.Nomic() {
		k.Steps = append(k.Steps, card.Step{Depth: 1, Text: "Q, K, V ← W_qkv^l X split in three; Q, K ← RoPE(Q, K | d_e/H, θ_rope), rotating half-split pairs",
			Shape: col("d_e", D) + " each"})
	}
	k.Steps = append(k.Steps,
		card.Step{Depth: 1, Text: attn, Shape: col("d_e", D)},
		card.Step{Depth: 1, Text: "X ← LayerNorm(X | γ¹_l, β¹_l)", Shape: col("d_e", D)},
		card.Step{Depth: 1, Text: ffn, Shape: col("d_e", D) + fmt.Sprintf(" (inside: d_mlp = %d)", c.FFN)},
		card.Step{Depth: 1, Text: "X ← LayerNorm(X | γ²_l, β²_l)", Shape: col("d_e", D)},
		card.Step{Text: "end for"},
	)
	switch c.Pooling {
	case PoolMean:
		k.Steps = append(k.Steps, card.Step{Text: "return e = (1/ℓ) Σ_{t ∈ [ℓ]} X[:, t]", Shape: fmt.Sprintf("d_e = %d", D)})
	case PoolCLS:
		k.Steps = append(k.Steps, card.Step{Text: "return e = X[:, 1], the [CLS] token's state", Shape: fmt.Sprintf("d_e = %d", D)})
	case PoolLast:
		k.Steps = append(k.Steps, card.Step{Text: "return e = X[:, ℓ]", Shape: fmt.Sprintf("d_e = %d", D)})
	case PoolRank:
		k.Steps = append(k.Steps, card.Step{Text: "s ← X[:, 1], the [CLS] token's state", Shape: fmt.Sprintf("d_e = %d", D)})
		if c.Pooler {
			k.Steps = append(k.Steps, card.Step{Text: "s ← tanh(W_h s + b_h)", Shape: fmt.Sprintf("d_e = %d", D)})
		}
		if c.Classifier {
			k.Steps = append(k.Steps, card.Step{Text: "s ← W_c s + b_c", Shape: fmt.Sprintf("N_C = %d", c.Labels)})
		}
		k.Steps = append(k.Steps, card.Step{Text: "return s[1 : N_C]", Shape: fmt.Sprintf("N_C = %d", c.Labels)})
	default:
		k.Steps = append(k.Steps, card.Step{Text: "return X, one state per token", Shape: col("d_e", D)})
	}
	k.Notes = []string{
		"MHAttention scores are scaled by 1/√(d_e/H); the LayerNorms come after each residual addition (post-norm).",
		"Only token type 0 is added (one text), as llama.cpp and Hugging Face do for a single sequence.",
	}
	if !c.Nomic() {
		k.Notes = append(k.Notes, "GELU is exact, x·Φ(x); llama.cpp uses the tanh approximation.")
	}
	k.ParamCount = c.ParamCount()
	return k
}

// ConfigFromCard reads a Config from a card's hyperparameters.
func ConfigFromCard(k *card.Card) (any, error) {
	c := Config{Arch: k.Arch}
	var pool string
	r := k.Reader()
	r.Int("vocab_size", &c.VocabSize)
	r.Int("context_length", &c.ContextLength)
	r.Int("embed", &c.Embed)
	r.Int("layers", &c.Layers)
	r.Int("ffn", &c.FFN)
	r.Int("heads", &c.Heads)
	r.Int("token_types", &c.TokenTypes)
	r.Float("norm_eps", &c.NormEps)
	r.String("pooling", &pool)
	r.Bool("causal", &c.Causal)
	if c.Nomic() {
		r.Float("rope_base", &c.RopeBase)
	}
	p, err := ParsePooling(pool)
	if r.Err() == nil && err != nil {
		return nil, fmt.Errorf("%w: %w", card.ErrSyntax, err)
	}
	c.Pooling = p
	if p == PoolRank {
		r.Int("labels", &c.Labels)
		r.Bool("pooler", &c.Pooler)
		r.Bool("classifier", &c.Classifier)
	}
	return r.Config(c, c.Validate())
}

// cardFromHeader makes the card from metadata alone; features toy cannot run
// become notes instead of errors, so that every file of the family can be
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
