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

// Card returns the model's algorithm card; the quantization is that of the
// loaded weights (none for a model made by New).
func (m *Model) Card() *card.Card {
	c := m.Config.Card()
	var ws []*tensor.Tensor
	for i := range m.Blocks {
		if b := &m.Blocks[i]; b.Attn.Q != nil {
			ws = append(ws, b.Attn.Q.W, b.Attn.K.W, b.Attn.V.W, b.Attn.Out.W, b.MLP.Up.W, b.MLP.Down.W)
		}
	}
	c.Quant = card.DominantType(ws)
	return c
}

// Card returns the algorithm card of a model with configuration c.
func (c Config) Card() *card.Card {
	col := func(sym string, rows int) string { return fmt.Sprintf("%s × S = %d × %d", sym, rows, c.Tokens()) }
	k := &card.Card{
		Arch: Arch, Title: "ETransformer (ViT)",
		Summary: "Vision Transformer: an image cut into patches, each patch a token, a bidirectional pre-LayerNorm " +
			"encoder, and a classifier on the [CLS] token.",
		Inputs:  []string{fmt.Sprintf("x ∈ ℝ^{C × R × R}, an RGB image resized and normalised (C = %d)", Channels)},
		Outputs: []string{"P ∈ (0, 1)^{N_C}, the distribution over the classes"},
		Hyper: []card.Hyper{
			{Symbol: "R", Value: card.Int(c.ImageSize), Key: "image_size", Meaning: "image side, pixels"},
			{Symbol: "P", Value: card.Int(c.PatchSize), Key: "patch_size", Meaning: "patch side, pixels"},
			{Symbol: "d_e", Value: card.Int(c.Embed), Key: "embed", Meaning: "model width"},
			{Symbol: "L", Value: card.Int(c.Layers), Key: "layers", Meaning: "layers"},
			{Symbol: "d_mlp", Value: card.Int(c.FFN), Key: "ffn", Meaning: "MLP width"},
			{Symbol: "H", Value: card.Int(c.Heads), Key: "heads", Meaning: "attention heads"},
			{Symbol: "ε", Value: card.Float(c.NormEps), Key: "norm_eps", Meaning: "LayerNorm epsilon"},
			{Symbol: "N_C", Value: card.Int(c.Classes), Key: "classes", Meaning: "classes"},
		},
	}
	per := func(sym, shape, meaning string) card.Param {
		return card.Param{Symbol: sym, Shape: shape, Meaning: meaning, PerLayer: true}
	}
	k.Params = []card.Param{
		{Symbol: "W_p, b_p", Shape: "d_e × C·P², d_e", Meaning: "patch embedding (a convolution with stride P)"},
		{Symbol: "e_cls", Shape: "d_e", Meaning: "the [CLS] token"},
		{Symbol: "W_pos", Shape: "d_e × S", Meaning: "position embeddings, S = (R/P)² + 1"},
		per("γ¹_l, β¹_l", "d_e", "attention LayerNorm"),
		per("W_q^l, W_k^l, W_v^l, b_q^l, b_k^l, b_v^l", "d_e × d_e, d_e", "query, key, value projections"),
		per("W_o^l, b_o^l", "d_e × d_e, d_e", "attention output projection"),
		per("γ²_l, β²_l", "d_e", "MLP LayerNorm"),
		per("W_up^l, b_up^l", "d_mlp × d_e, d_mlp", "MLP up projection"),
		per("W_down^l, b_down^l", "d_e × d_mlp, d_e", "MLP down projection"),
		{Symbol: "γ, β", Shape: "d_e", Meaning: "final LayerNorm"},
		{Symbol: "W_c, b_c", Shape: "N_C × d_e, N_C", Meaning: "classifier"},
	}
	k.Steps = []card.Step{
		{Text: "N ← (R/P)²; for n ∈ [N]: p_n ← the n-th P×P patch of x, row by row, flattened", Shape: fmt.Sprintf("C·P² = %d", Channels*c.PatchSize*c.PatchSize)},
		{Text: "X[:, 1] ← e_cls + W_pos[:, 1]; for n ∈ [N]: X[:, n+1] ← W_p p_n + b_p + W_pos[:, n+1]", Shape: col("d_e", c.Embed)},
		{Text: "for l = 1, 2, …, L do"},
		{Depth: 1, Text: "X̃ ← LayerNorm(X | γ¹_l, β¹_l)", Shape: col("d_e", c.Embed)},
		{Depth: 1, Text: "X ← X + MHAttention(X̃ | W^l, Mask ≡ 1)", Shape: col("d_e", c.Embed)},
		{Depth: 1, Text: "X̃ ← LayerNorm(X | γ²_l, β²_l)", Shape: col("d_e", c.Embed)},
		{Depth: 1, Text: "X ← X + W_down^l GELU(W_up^l X̃ + b_up^l 1ᵀ) + b_down^l 1ᵀ", Shape: col("d_e", c.Embed) + " (inside: d_mlp × S)"},
		{Text: "end for"},
		{Text: "x ← LayerNorm(X[:, 1] | γ, β)", Shape: fmt.Sprintf("d_e = %d", c.Embed)},
		{Text: "return P = softmax(W_c x + b_c)", Shape: fmt.Sprintf("N_C = %d", c.Classes)},
	}
	k.Notes = []string{
		"MHAttention scores are scaled by 1/√(d_e/H) and unmasked: every token attends to every token.",
		"GELU is exact, x·Φ(x), not the tanh approximation.",
	}
	k.ParamCount = c.ParamCount()
	return k
}

// ConfigFromCard reads a Config from a card's hyperparameters. The image
// statistics and labels are not on the card: mean and std take
// ViTImageProcessor's default 0.5, and labels are none.
func ConfigFromCard(k *card.Card) (any, error) {
	c := Config{ImageMean: [3]float32{0.5, 0.5, 0.5}, ImageStd: [3]float32{0.5, 0.5, 0.5}}
	r := k.Reader()
	r.Int("image_size", &c.ImageSize)
	r.Int("patch_size", &c.PatchSize)
	r.Int("embed", &c.Embed)
	r.Int("layers", &c.Layers)
	r.Int("ffn", &c.FFN)
	r.Int("heads", &c.Heads)
	r.Int("classes", &c.Classes)
	r.Float("norm_eps", &c.NormEps)
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
