// The algorithm card of a BERT-family encoder (Phuong & Hutter's
// ETransformer, ending in a pooled embedding instead of token predictions).

package bert

import (
	"fmt"
	"slices"

	"github.com/toyml/toy/toy/card"
	"github.com/toyml/toy/toy/gguf"
	"github.com/toyml/toy/toy/models"
	"github.com/toyml/toy/toy/models/internal/builtin"
)

// The family is registered for its card; its models are not language
// models, so the registry's Load says what to use instead.
func init() {
	models.Register(models.Family{
		Arch: Archs[0], Aliases: Archs[1:], Card: builtin.Card(readConfig, Config.card, New), ConfigFromCard: ConfigFromCard,
		Load: func(f *gguf.File) (models.Model, error) {
			arch, _ := f.Architecture()
			return nil, fmt.Errorf("%w %q: a text encoder, not a language model (use toy.LoadEmbedder, toy embed, or toy serve --embed)", models.ErrUnknownArch, arch)
		},
	})
}

// Card returns the model's algorithm card: its parameters and their count
// are the weights it holds (none for a model made by New), its quantization
// the most common type of its matrices. (models.CardFromModel, written out:
// it takes a language model.)
func (m *Model) Card() *card.Card { return models.CardFromModel(m.Config.card(), m, m.Config) }

// card returns the card's hyperparameters and steps for configuration c.
func (c Config) card() *card.Card {
	d := card.Col("d_e", c.Embed)
	k := &card.Card{
		Arch: c.Arch, Title: "ETransformer (BERT)",
		Summary: "BERT: a bidirectional post-LayerNorm encoder whose final states, pooled, are the text's embedding " +
			"(all-MiniLM, bge, e5, gte).",
		Inputs:  []string{"x ∈ [N_V]^ℓ, a sequence of token ids ([CLS] … [SEP]), ℓ ≤ ℓ_max"},
		Outputs: []string{fmt.Sprintf("e ∈ ℝ^{d_e}, the embedding of x (pooling: %s)", c.Pooling)},
		Hyper:   c.hypers(),
		Notes: []string{
			"MHAttention scores are scaled by 1/√(d_e/H); the LayerNorms come after each residual addition (post-norm).",
			"Only token type 0 is added (one text), as llama.cpp and Hugging Face do for a single sequence.",
		},
	}
	if c.Pooling == PoolRank {
		k.Summary += " With rank pooling a reranker: a classification head on the [CLS] state scores a query and a document read together."
		k.Outputs = []string{"s ∈ ℝ^{N_C}, the scores of x, a query and a document; s[1] is the relevance logit"}
	}
	embed := "X[:, t] ← W_e[:, x[t]]"
	if c.TokenTypes > 0 {
		embed += " + W_t[:, 1]"
	}
	attn := "X ← X + MHAttention(X | W^l, Mask ≡ 1)"
	if c.Causal {
		attn = "X ← X + MHAttention(X | W^l, Mask[t', t] = [[t' ≤ t]])"
	}
	ffn := "X ← X + W_down^l GELU(W_up^l X + b_up^l 1ᵀ) + b_down^l 1ᵀ"
	var rope []card.Step
	if c.Nomic() {
		k.Title = "ETransformer (nomic-bert)"
		k.Summary = "nomic-bert: a bidirectional post-LayerNorm encoder with rotary positions, a fused QKV projection " +
			"and SwiGLU, whose final states, pooled, are the text's embedding (nomic-embed-text)."
		rope = []card.Step{{Depth: 1, Text: "Q, K, V ← W_qkv^l X split in three; Q, K ← RoPE(Q, K | d_e/H, θ_rope), rotating half-split pairs",
			Shape: d + " each"}}
		ffn = "X ← X + W_down^l (SiLU(W_gate^l X) ⊙ W_up^l X)"
	} else {
		embed += " + W_p[:, t]"
		k.Notes = append(k.Notes, "GELU is exact, x·Φ(x); llama.cpp uses the tanh approximation.")
	}
	k.Steps = slices.Concat([]card.Step{
		{Text: "ℓ ← length(x)"},
		{Text: "for t ∈ [ℓ]: " + embed, Shape: d},
		{Text: "X ← LayerNorm(X | γ_e, β_e)", Shape: d},
		{Text: "for l = 1, 2, …, L do"},
	}, rope, []card.Step{
		{Depth: 1, Text: attn, Shape: d},
		{Depth: 1, Text: "X ← LayerNorm(X | γ_a^l, β_a^l)", Shape: d},
		{Depth: 1, Text: ffn, Shape: d + fmt.Sprintf(" (inside: d_mlp = %d)", c.FFN)},
		{Depth: 1, Text: "X ← LayerNorm(X | γ_f^l, β_f^l)", Shape: d},
		{Text: "end for"},
	}, c.poolSteps())
	return k
}

// poolSteps are the card's last lines: the pooling, or a reranker's head.
func (c Config) poolSteps() []card.Step {
	d, n := fmt.Sprintf("d_e = %d", c.Embed), fmt.Sprintf("N_C = %d", c.Labels)
	switch c.Pooling {
	case PoolMean:
		return []card.Step{{Text: "return e = (1/ℓ) Σ_{t ∈ [ℓ]} X[:, t]", Shape: d}}
	case PoolCLS:
		return []card.Step{{Text: "return e = X[:, 1], the [CLS] token's state", Shape: d}}
	case PoolLast:
		return []card.Step{{Text: "return e = X[:, ℓ]", Shape: d}}
	case PoolRank:
		s := []card.Step{{Text: "s ← X[:, 1], the [CLS] token's state", Shape: d}}
		if c.Pooler {
			s = append(s, card.Step{Text: "s ← tanh(W_h s + b_h)", Shape: d})
		}
		if c.Classifier {
			s = append(s, card.Step{Text: "s ← W_c s + b_c", Shape: n})
		}
		return append(s, card.Step{Text: "return s[1 : N_C]", Shape: n})
	}
	return []card.Step{{Text: "return X, one state per token", Shape: card.Col("d_e", c.Embed)}}
}

// hypers are the card's hyperparameters: the declared ones, the pooling by
// name, a reranker head's only with rank pooling and RoPE's only for
// nomic-bert.
func (c Config) hypers() []card.Hyper {
	hs := slices.DeleteFunc(card.Hypers(c), func(h card.Hyper) bool {
		switch h.Key {
		case "labels", "pooler", "classifier":
			return c.Pooling != PoolRank
		case "rope_base":
			return !c.Nomic()
		}
		return false
	})
	pool := card.Hyper{Symbol: "pool", Value: c.Pooling.String(), Key: "pooling", Meaning: "pooling: none, mean, cls, last or rank"}
	return slices.Insert(hs, slices.IndexFunc(hs, func(h card.Hyper) bool { return h.Key == "causal" }), pool)
}

// ConfigFromCard reads a Config from a card's hyperparameters.
func ConfigFromCard(k *card.Card) (any, error) {
	s, err := k.Value("pooling")
	if err != nil {
		return nil, err
	}
	p, err := ParsePooling(s)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", card.ErrSyntax, err)
	}
	return card.FromCard(k, &Config{Pooling: p})
}
