// Converting Hugging Face ViT checkpoints: config.json, model.safetensors
// (or shards with model.safetensors.index.json) and preprocessor_config.json.

package vit

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/toyml/toy/toy/models"
	"github.com/toyml/toy/toy/nn"
	"github.com/toyml/toy/toy/safetensors"
	"github.com/toyml/toy/toy/tensor"
)

// ErrUnsupported marks checkpoints this converter cannot read: they use
// features toy's ViT does not run.
var ErrUnsupported = models.ErrUnsupported

// hfConfig is what FromHF reads of config.json.
type hfConfig struct {
	ModelType   string            `json:"model_type"`
	Hidden      int               `json:"hidden_size"`
	Layers      int               `json:"num_hidden_layers"`
	Heads       int               `json:"num_attention_heads"`
	FFN         int               `json:"intermediate_size"`
	Act         string            `json:"hidden_act"`
	NormEps     float64           `json:"layer_norm_eps"`
	ImageSize   int               `json:"image_size"`
	PatchSize   int               `json:"patch_size"`
	NumChannels int               `json:"num_channels"`
	QKVBias     *bool             `json:"qkv_bias"`
	ID2Label    map[string]string `json:"id2label"`
}

// hfPreprocessor is what FromHF reads of preprocessor_config.json.
type hfPreprocessor struct {
	Mean        []float32 `json:"image_mean"`
	Std         []float32 `json:"image_std"`
	DoNormalize *bool     `json:"do_normalize"`
	Resample    *int      `json:"resample"`
}

// FromHF reads the Hugging Face ViTForImageClassification checkpoint in dir
// and returns it as a Model with F32 weights (WriteGGUF writes it):
//
//	config.json               sizes, hidden_act ("gelu": exact), layer_norm_eps, id2label
//	model.safetensors         F32, F16 or BF16 tensors (or shards listed in model.safetensors.index.json)
//	preprocessor_config.json  image_mean, image_std (optional: 0.5 each, ViTImageProcessor's default)
//
// A configuration toy does not run is refused with ErrUnsupported, weights
// it cannot read (pytorch_model.bin alone, other types) with
// safetensors.ErrUnsupported.
func FromHF(dir string) (*Model, error) {
	var hc hfConfig
	if err := readJSON(filepath.Join(dir, "config.json"), &hc); err != nil {
		return nil, fmt.Errorf("convert %s: %w (want a Hugging Face model directory)", dir, err)
	}
	if hc.ModelType != "" && hc.ModelType != "vit" {
		return nil, fmt.Errorf("vit: %w: model_type %q (toy converts \"vit\")", ErrUnsupported, hc.ModelType)
	}
	if hc.Act != "gelu" {
		return nil, fmt.Errorf("vit: %w: hidden_act %q (toy's ViT uses the exact GELU, \"gelu\")", ErrUnsupported, hc.Act)
	}
	if hc.NumChannels != 0 && hc.NumChannels != Channels {
		return nil, fmt.Errorf("vit: %w: %d image channels (toy reads RGB)", ErrUnsupported, hc.NumChannels)
	}
	if hc.QKVBias != nil && !*hc.QKVBias {
		return nil, fmt.Errorf("vit: %w: qkv_bias false", ErrUnsupported)
	}
	c := Config{ImageSize: hc.ImageSize, PatchSize: hc.PatchSize, Embed: hc.Hidden, Layers: hc.Layers, FFN: hc.FFN,
		Heads: hc.Heads, NormEps: float32(hc.NormEps), ImageMean: [3]float32{0.5, 0.5, 0.5}, ImageStd: [3]float32{0.5, 0.5, 0.5}}
	if c.NormEps == 0 {
		c.NormEps = 1e-12 // ViTConfig's default
	}
	labels, err := labelList(hc.ID2Label)
	if err != nil {
		return nil, err
	}
	var pp hfPreprocessor
	if err := readJSON(filepath.Join(dir, "preprocessor_config.json"), &pp); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	if pp.Resample != nil && *pp.Resample != 2 {
		return nil, fmt.Errorf("vit: %w: preprocessor resample %d (toy resizes with PIL's bilinear filter, 2)", ErrUnsupported, *pp.Resample)
	}
	if len(pp.Mean) == Channels && len(pp.Std) == Channels {
		copy(c.ImageMean[:], pp.Mean)
		copy(c.ImageStd[:], pp.Std)
	}
	if pp.DoNormalize != nil && !*pp.DoNormalize {
		c.ImageMean, c.ImageStd = [3]float32{}, [3]float32{1, 1, 1}
	}

	st, err := safetensors.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	// A ViTModel checkpoint names its tensors without the "vit." prefix.
	get := func(name string) (*tensor.Tensor, error) {
		if !st.Has(name) {
			name = strings.TrimPrefix(name, "vit.")
		}
		return st.Tensor(name)
	}
	head, err := get("classifier.weight")
	if err != nil {
		return nil, fmt.Errorf("vit: %w: no classifier head (a ViTModel, not ViTForImageClassification?): %w", ErrUnsupported, err)
	}
	c.Classes = head.Dim(0)
	if len(labels) == c.Classes {
		c.Labels = labels
	}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	m, err := fromTensors(c, get)
	if err != nil {
		return nil, fmt.Errorf("convert %s: %w", dir, err)
	}
	return m, nil
}

// fromTensors fills a model from Hugging Face's tensor names.
func fromTensors(c Config, get func(name string) (*tensor.Tensor, error)) (*Model, error) {
	var errs []error
	t := func(name string, shape ...int) *tensor.Tensor {
		x, err := get(name)
		if err == nil && x.Len() != tensor.New(shape...).Len() {
			err = fmt.Errorf("tensor %s has shape %v, want %v", name, x.Shape(), shape)
		}
		if err != nil {
			errs = append(errs, err)
			return tensor.New(shape...)
		}
		return x.Reshape(shape...)
	}
	D, F, P, S := c.Embed, c.FFN, c.PatchSize, c.Tokens()
	lin := func(name string, out, in int) *nn.Linear {
		return &nn.Linear{W: t(name+".weight", out, in), B: t(name+".bias", out)}
	}
	norm := func(name string) *nn.LayerNorm {
		return &nn.LayerNorm{W: t(name+".weight", D), B: t(name+".bias", D), Eps: c.NormEps}
	}
	m := New(c)
	m.PatchEmbed = lin("vit.embeddings.patch_embeddings.projection", D, Channels*P*P) // [D, C, P, P] as [D, C·P·P]
	m.Class = t("vit.embeddings.cls_token", D)                                        // [1, 1, D]
	m.Pos = &nn.Embedding{W: t("vit.embeddings.position_embeddings", S, D)}           // [1, S, D]
	for i := range m.Blocks {
		b, p := &m.Blocks[i], fmt.Sprintf("vit.encoder.layer.%d.", i)
		b.Norm1, b.Norm2 = norm(p+"layernorm_before"), norm(p+"layernorm_after")
		b.Attn.Q = lin(p+"attention.attention.query", D, D)
		b.Attn.K = lin(p+"attention.attention.key", D, D)
		b.Attn.V = lin(p+"attention.attention.value", D, D)
		b.Attn.Out = lin(p+"attention.output.dense", D, D)
		b.MLP.Up = lin(p+"intermediate.dense", F, D)
		b.MLP.Down = lin(p+"output.dense", D, F)
	}
	m.PostNorm = norm("vit.layernorm")
	m.Head = lin("classifier", c.Classes, D)
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return m, m.check()
}

// labelList orders id2label by id; ids must be 0 … K−1.
func labelList(id2label map[string]string) ([]string, error) {
	if len(id2label) == 0 {
		return nil, nil
	}
	out := make([]string, len(id2label))
	for k, v := range id2label {
		i, err := strconv.Atoi(k)
		if err != nil || i < 0 || i >= len(out) {
			return nil, fmt.Errorf("vit: %w: id2label key %q is not an id in 0 … %d", ErrUnsupported, k, len(out)-1)
		}
		out[i] = v
	}
	return out, nil
}

func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("read %s: %w", path, err)
	}
	return nil
}
