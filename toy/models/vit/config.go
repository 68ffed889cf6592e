// The flat configuration of a ViT classifier, read from GGUF metadata.

package vit

import (
	"fmt"

	"github.com/toyml/toy/toy/gguf"
)

// Arch is the GGUF architecture this package loads.
const Arch = "vit"

// Config holds every hyperparameter of a ViT classifier.
type Config struct {
	ImageSize int        // R: input images are R×R pixels
	PatchSize int        // P: patches are P×P pixels, R/P per side
	Embed     int        // D
	Layers    int        // L
	FFN       int        // F
	Heads     int        // H
	NormEps   float32    // LayerNorm ε
	ImageMean [3]float32 // per-channel mean of the rescaled pixels (x/255), subtracted
	ImageStd  [3]float32 // per-channel standard deviation, divided by
	Classes   int        // K
	Labels    []string   // K class names; nil: "LABEL_0", "LABEL_1", …
}

// Channels is C: toy's ViT reads RGB images.
const Channels = 3

// Patches returns N, the number of patches of an image.
func (c Config) Patches() int { return (c.ImageSize / c.PatchSize) * (c.ImageSize / c.PatchSize) }

// Tokens returns S = N + 1: the patches and the [CLS] token.
func (c Config) Tokens() int { return c.Patches() + 1 }

// Label returns the name of class k.
func (c Config) Label(k int) string {
	if k >= 0 && k < len(c.Labels) {
		return c.Labels[k]
	}
	return fmt.Sprintf("LABEL_%d", k)
}

// ConfigFromGGUF reads the configuration from f's metadata (keys "vit.*").
func ConfigFromGGUF(f *gguf.File) (Config, error) {
	var c Config
	arch, err := f.Architecture()
	if err != nil {
		return c, err
	}
	if arch != Arch {
		return c, fmt.Errorf("vit: architecture %q is not vit", arch)
	}
	for _, k := range []struct {
		key string
		dst *int
	}{
		{"image_size", &c.ImageSize},
		{"patch_size", &c.PatchSize},
		{"embedding_length", &c.Embed},
		{"feed_forward_length", &c.FFN},
		{"block_count", &c.Layers},
		{"attention.head_count", &c.Heads},
		{"class_count", &c.Classes},
	} {
		v, err := f.Uint32(Arch + "." + k.key)
		if err != nil {
			return c, err
		}
		*k.dst = int(v)
	}
	if c.NormEps, err = f.Float32(Arch + ".attention.layer_norm_epsilon"); err != nil {
		return c, err
	}
	for _, k := range []struct {
		key string
		dst *[3]float32
	}{{"image_mean", &c.ImageMean}, {"image_std", &c.ImageStd}} {
		v, err := f.Float32s(Arch + "." + k.key)
		if err != nil {
			return c, err
		}
		if len(v) != Channels {
			return c, fmt.Errorf("vit: %s.%s has %d values, want %d (RGB)", Arch, k.key, len(v), Channels)
		}
		copy(k.dst[:], v)
	}
	if f.Has(Arch + ".labels") {
		if c.Labels, err = f.Strings(Arch + ".labels"); err != nil {
			return c, err
		}
	}
	return c, c.Validate()
}

// Validate checks that the numbers describe a buildable model.
func (c Config) Validate() error {
	const big = 1 << 20
	switch {
	case c.PatchSize <= 0 || c.ImageSize <= 0 || c.ImageSize%c.PatchSize != 0 || c.ImageSize > 1<<14:
		return fmt.Errorf("vit: image size %d is not a multiple of patch size %d", c.ImageSize, c.PatchSize)
	case c.Embed <= 0 || c.Embed > big || c.FFN <= 0 || c.FFN > big:
		return fmt.Errorf("vit: width %d, MLP width %d", c.Embed, c.FFN)
	case c.Layers <= 0 || c.Layers > 1024:
		return fmt.Errorf("vit: %d layers", c.Layers)
	case c.Heads <= 0 || c.Embed%c.Heads != 0:
		return fmt.Errorf("vit: %d heads for width %d", c.Heads, c.Embed)
	case !(c.NormEps > 0 && c.NormEps < 1):
		return fmt.Errorf("vit: LayerNorm epsilon %g", c.NormEps)
	case c.Classes <= 0 || c.Classes > 1<<24:
		return fmt.Errorf("vit: %d classes", c.Classes)
	case c.Labels != nil && len(c.Labels) != c.Classes:
		return fmt.Errorf("vit: %d labels for %d classes", len(c.Labels), c.Classes)
	}
	for i, s := range c.ImageStd {
		if !(s > 0) {
			return fmt.Errorf("vit: image standard deviation %g for channel %d", s, i)
		}
	}
	return nil
}

// SetMetadata writes the configuration as GGUF metadata (keys "vit.*").
func (c Config) SetMetadata(w *gguf.Writer) {
	a := Arch + "."
	w.SetString("general.architecture", Arch)
	w.SetUint32(a+"image_size", uint32(c.ImageSize))
	w.SetUint32(a+"patch_size", uint32(c.PatchSize))
	w.SetUint32(a+"embedding_length", uint32(c.Embed))
	w.SetUint32(a+"feed_forward_length", uint32(c.FFN))
	w.SetUint32(a+"block_count", uint32(c.Layers))
	w.SetUint32(a+"attention.head_count", uint32(c.Heads))
	w.SetFloat32(a+"attention.layer_norm_epsilon", c.NormEps)
	w.SetFloat32s(a+"image_mean", c.ImageMean[:])
	w.SetFloat32s(a+"image_std", c.ImageStd[:])
	w.SetUint32(a+"class_count", uint32(c.Classes))
	if c.Labels != nil {
		w.SetStrings(a+"labels", c.Labels)
	}
}

// ParamCount is the number of weights a model with configuration c holds.
func (c Config) ParamCount() int64 {
	D, F, K := int64(c.Embed), int64(c.FFN), int64(c.Classes)
	patch := D*Channels*int64(c.PatchSize*c.PatchSize) + D
	layer := 4*(D*D+D) + (F*D + F) + (D*F + D) + 4*D
	return patch + D + int64(c.Tokens())*D + int64(c.Layers)*layer + 2*D + K*D + K
}
