// The algorithm card of a ViT classifier (Phuong & Hutter's ETransformer,
// with patches for tokens and a [CLS] token for the class).

package vit

import (
	"fmt"

	"github.com/toyml/toy/toy/card"
	"github.com/toyml/toy/toy/gguf"
	"github.com/toyml/toy/toy/models"
	"github.com/toyml/toy/toy/tensor"
)

// The family is registered for its card; its models are not language
// models, so the registry's Load says what to use instead.
func init() {
	models.Register(models.Family{
		Arch: Arch, Card: cardFromHeader, ConfigFromCard: ConfigFromCard,
		Load: func(f *gguf.File) (models.Model, error) {
			arch, _ := f.Architecture()
			return nil, fmt.Errorf("%w %q: an image classifier, not a language model (use toy.LoadImageClassifier, or toy classify)", models.ErrUnknownArch, arch)
		},
	})
}

// Card returns the model's algorithm card: its parameters and their count
// are the weights it holds (none for a model made by New), in the shapes
// of a file, its quantization the most common type of its matrices; the
// loaded model's card is its file's. (models.CardFromModel, written out: it
// takes a language model, and the shapes the model holds.)
func (m *Model) Card() *card.Card {
	k := m.Config.card()
	have := map[string][]int{}
	var mats []*tensor.Tensor
	for _, w := range m.Weights() {
		if have[w.Name] = m.Config.fileShape(w); len(w.T.Shape()) > 1 {
			mats = append(mats, w.T)
		}
	}
	k.Params, k.ParamCount = models.CardParams(m, m.Config, have)
	k.Quant = card.DominantType(mats)
	return k
}

// card returns the card's hyperparameters and steps for configuration c.
func (c Config) card() *card.Card {
	col := func(sym string, rows int) string { return fmt.Sprintf("%s × S = %d × %d", sym, rows, c.Tokens()) }
	return &card.Card{
		Arch: Arch, Title: "ETransformer (ViT)",
		Summary: "Vision Transformer: an image cut into patches, each patch a token, a bidirectional pre-LayerNorm " +
			"encoder, and a classifier on the [CLS] token.",
		Inputs:  []string{fmt.Sprintf("x ∈ ℝ^{C × R × R}, an RGB image resized and normalised (C = %d)", Channels)},
		Outputs: []string{"P ∈ (0, 1)^{N_C}, the distribution over the classes"},
		Hyper:   card.Hypers(c),
		Steps: []card.Step{
			{Text: "N ← (R/P)²; for n ∈ [N]: p_n ← the n-th P×P patch of x, row by row, flattened", Shape: fmt.Sprintf("C·P² = %d", Channels*c.PatchSize*c.PatchSize)},
			{Text: "X[:, 1] ← e_cls + W_pos[:, 1]; for n ∈ [N]: X[:, n+1] ← W_p p_n + b_p + W_pos[:, n+1]", Shape: col("d_e", c.Embed)},
			{Text: "for l = 1, 2, …, L do"},
			{Depth: 1, Text: "X̃ ← LayerNorm(X | γ_a^l, β_a^l)", Shape: col("d_e", c.Embed)},
			{Depth: 1, Text: "X ← X + MHAttention(X̃ | W^l, Mask ≡ 1)", Shape: col("d_e", c.Embed)},
			{Depth: 1, Text: "X̃ ← LayerNorm(X | γ_f^l, β_f^l)", Shape: col("d_e", c.Embed)},
			{Depth: 1, Text: "X ← X + W_down^l GELU(W_up^l X̃ + b_up^l 1ᵀ) + b_down^l 1ᵀ", Shape: col("d_e", c.Embed) + " (inside: d_mlp × S)"},
			{Text: "end for"},
			{Text: "x ← LayerNorm(X[:, 1] | γ, β)", Shape: fmt.Sprintf("d_e = %d", c.Embed)},
			{Text: "return P = softmax(W_c x + b_c)", Shape: fmt.Sprintf("N_C = %d", c.Classes)},
		},
		Notes: []string{
			"MHAttention scores are scaled by 1/√(d_e/H) and unmasked: every token attends to every token.",
			"GELU is exact, x·Φ(x), not the tanh approximation.",
		},
	}
}

// ConfigFromCard reads a Config from a card's hyperparameters. The image
// statistics and labels are not on the card: mean and std take
// ViTImageProcessor's default 0.5, and labels are none.
func ConfigFromCard(k *card.Card) (any, error) {
	half := [3]float32{0.5, 0.5, 0.5}
	return card.FromCard(k, &Config{ImageMean: half, ImageStd: half})
}

// cardFromHeader makes the card from metadata alone.
func cardFromHeader(h *gguf.File) (*card.Card, error) {
	c, err := ConfigFromGGUF(h)
	if err != nil {
		return nil, err
	}
	return models.CardFromFile(c.card(), h, New(c), c), nil
}
