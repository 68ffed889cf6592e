// The flat configuration of a ViT classifier, declared with its GGUF keys
// (under "vit.") and card symbols.

package vit

import (
	"fmt"

	"github.com/toyml/toy/toy/gguf"
	"github.com/toyml/toy/toy/models"
)

// Arch is the GGUF architecture this package loads.
const Arch = "vit"

// Config holds every hyperparameter of a ViT classifier. The image
// statistics and labels are GGUF arrays (vit.image_mean, vit.image_std,
// vit.labels), read and written by hand; a card does not carry them.
type Config struct {
	ImageSize int        `gguf:"image_size" range:"[1, 1<<14]" card:"R, image side, pixels"` // input images are R×R
	PatchSize int        `gguf:"patch_size" range:"[1, *]" card:"P, patch side, pixels"`     // R/P patches per side
	Embed     int        `gguf:"embedding_length" range:"[1, 1<<20]" card:"d_e, model width"`
	Layers    int        `gguf:"block_count" range:"[1, 1024]" card:"L, layers"`
	FFN       int        `gguf:"feed_forward_length" range:"[1, 1<<20]" card:"d_mlp, MLP width"`
	Heads     int        `gguf:"attention.head_count" range:"[1, *]" card:"H, attention heads"`
	NormEps   float32    `gguf:"attention.layer_norm_epsilon" range:"(0, 1)" card:"ε, LayerNorm epsilon"`
	ImageMean [3]float32 // per-channel mean of the rescaled pixels (x/255), subtracted
	ImageStd  [3]float32 // per-channel standard deviation, divided by
	Classes   int        `gguf:"class_count" range:"[1, 1<<24]" card:"N_C, classes"`
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
	if err := models.ReadConfig(f, Arch, &c); err != nil {
		return c, err
	}
	for _, k := range []struct {
		key string
		dst *[3]float32
	}{{"image_mean", &c.ImageMean}, {"image_std", &c.ImageStd}} {
		v, err := f.Float32s(Arch + "." + k.key)
		if err == nil && len(v) != Channels {
			err = fmt.Errorf("vit: %s.%s has %d values, want %d (RGB)", Arch, k.key, len(v), Channels)
		}
		if err != nil {
			return c, err
		}
		copy(k.dst[:], v)
	}
	if f.Has(Arch + ".labels") {
		var err error
		if c.Labels, err = f.Strings(Arch + ".labels"); err != nil {
			return c, err
		}
	}
	return c, c.Validate()
}

// SetMetadata writes the configuration as GGUF metadata (keys "vit.*"), key
// by key rather than by gguf.Writer.SetConfig: toy's ViT files keep their
// byte layout (tests/vit's golden records the gate file's SHA-256), whose key
// order is not the order of Config's fields (the card's) and interleaves the
// arrays.
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

// Validate checks that the numbers describe a buildable model: the declared
// ranges, then how they fit together.
func (c Config) Validate() error {
	if err := models.CheckRanges(Arch, c); err != nil {
		return err
	}
	switch {
	case c.ImageSize%c.PatchSize != 0:
		return fmt.Errorf("vit: image size %d is not a multiple of patch size %d", c.ImageSize, c.PatchSize)
	case c.Embed%c.Heads != 0:
		return fmt.Errorf("vit: %d heads for width %d", c.Heads, c.Embed)
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
