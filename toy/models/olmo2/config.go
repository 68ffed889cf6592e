// The flat configuration of an OLMo 2 or Olmo 3 model, read from GGUF
// metadata.

package olmo2

import (
	"cmp"
	"fmt"

	"github.com/toyml/toy/toy/gguf"
	"github.com/toyml/toy/toy/models"
	"github.com/toyml/toy/toy/tensor"
)

// Arch is the GGUF architecture this package loads.
const Arch = "olmo2"

// ErrUnsupported marks files of this family that use features toy lacks.
var ErrUnsupported = models.ErrUnsupported

// Config holds every hyperparameter of an OLMo 2 or Olmo 3 model. Absent
// from a file, KVHeads is H, RopeBase 10000 and RopeOrigContext the context
// length.
type Config struct {
	VocabSize     int     `range:"[1, 1<<24]" card:"N_V, vocabulary size"`
	ContextLength int     `gguf:"context_length" range:"[1, *]" card:"ℓ_max, trained context length"`
	Embed         int     `gguf:"embedding_length" range:"[1, 1<<20]" multiple:"2*Heads" card:"d_e, model width"`
	Layers        int     `gguf:"block_count" range:"[1, 1024]" card:"L, layers"`
	FFN           int     `gguf:"feed_forward_length" range:"[1, 1<<20]" card:"d_mlp, feed-forward width"`
	Heads         int     `gguf:"attention.head_count" range:"[1, 1<<10]" multiple:"KVHeads" card:"H, query heads, each d_h = d_e/H wide"`
	KVHeads       int     `gguf:"attention.head_count_kv,optional" default:"Heads" range:"[1, 1<<10]" card:"H_kv, key/value heads (grouped-query attention when < H)"`
	RopeBase      float32 `gguf:"rope.freq_base,optional" range:"(1, 1e12)" card:"θ_rope, RoPE frequency base"` // of the global layers
	NormEps       float32 `gguf:"attention.layer_norm_rms_epsilon" range:"(0, 1)" card:"ε, RMSNorm epsilon"`

	// Olmo 3's local layers: with Window > 0, layer l attends within the
	// last Window positions when l mod SlidingPattern < SlidingPattern − 1
	// (every layer when SlidingPattern is 0), and turns unscaled.
	Window         int `gguf:"attention.sliding_window,optional" range:"[0, 1<<24]" card:"w, the local layers' sliding window, in positions"`
	SlidingPattern int `range:"[0, 1024]" card:"p, layer l is local when l mod p < p − 1 (every layer when p = 0)"` // GGUF attention.sliding_window_pattern, or 4

	// RoPE scaling of the global layers: "" (none), "linear" or "yarn" (over
	// RopeOrigContext positions); RopeAttnFactor multiplies cos and sin (0
	// means 1).
	RopeScaling     string  `gguf:"rope.scaling.type,optional" card:"scaling, RoPE scaling of the global layers"`
	RopeScale       float32 `gguf:"rope.scaling.factor,optional" range:"[0, 1e6)" card:"s_rope, the stretch factor (linear: every global RoPE angle is divided by s_rope)"`
	RopeOrigContext int     `gguf:"rope.scaling.original_context_length,optional" range:"[0, *]" card:"ℓ_orig, context before the stretch"`
	RopeAttnFactor  float32 `gguf:"rope.scaling.attn_factor,optional" range:"[0, 100)" card:"m_rope, the global layers' RoPE cos and sin are multiplied by m_rope"`
}

// HeadDim returns Dh = D/H.
func (c Config) HeadDim() int { return c.Embed / c.Heads }

// Sliding reports whether layer i is local (attends within Window).
func (c Config) Sliding(i int) bool {
	return c.Window > 0 && (c.SlidingPattern == 0 || i%c.SlidingPattern < c.SlidingPattern-1)
}

// RoPE returns layer i's RoPE scaling: none in the local layers, the
// file's in the global ones. (llama.cpp reads rope.freq_base_swa for these
// files but turns every layer with rope.freq_base; so does toy.)
func (c Config) RoPE(i int) (s tensor.RoPEScaling) {
	if c.Sliding(i) {
		return s
	}
	s.AttnFactor = c.RopeAttnFactor
	if c.RopeScaling != "" {
		s.FreqScale = 1 / c.RopeScale
	}
	if c.RopeScaling == "yarn" {
		s.ExtFactor, s.BetaFast, s.BetaSlow, s.OrigContext = 1, 32, 1, c.RopeOrigContext
	}
	return s
}

// ConfigFromGGUF reads the configuration from f's metadata and tensor
// shapes. Files that need features toy lacks are refused with
// ErrUnsupported.
func ConfigFromGGUF(f *gguf.File) (Config, error) {
	c, lacking, err := readConfig(f)
	return c, cmp.Or(err, models.Unsupported(Arch, lacking))
}

// readConfig reads the configuration, listing the features the file uses
// that toy does not run yet (describing a model needs no more).
func readConfig(f *gguf.File) (Config, []string, error) {
	c := Config{RopeBase: 10000, RopeScaling: "linear"}
	if err := models.ReadConfig(f, Arch, &c); err != nil {
		return c, nil, err
	}
	m := f.Meta(Arch)
	var lacking []string
	if c.Window > 0 {
		c.SlidingPattern = 4 // llama.cpp's default
		if m.Has("attention.sliding_window_pattern") {
			if p, err := f.Uint32(m.Key("attention.sliding_window_pattern")); err == nil {
				c.SlidingPattern = int(p)
			} else {
				lacking = append(lacking, "a per-layer sliding-window pattern")
			}
		}
	}
	switch typ := c.RopeScaling; {
	case typ == "none" || c.RopeScale == 0 || c.RopeScale == 1: // the identity
		c.RopeScaling, c.RopeScale, c.RopeOrigContext = "", 0, 0
	case typ != "linear" && typ != "yarn":
		lacking = append(lacking, fmt.Sprintf("RoPE scaling %q", typ))
		c.RopeScaling, c.RopeScale, c.RopeOrigContext = "", 0, 0
	case !m.Has("rope.scaling.original_context_length"):
		c.RopeOrigContext = c.ContextLength
	}
	return c, lacking, cmp.Or(models.WholeHeadRoPE(m, "olmo2", c.Embed/max(c.Heads, 1)), c.Validate())
}

// Validate checks that the numbers describe a buildable model: the declared
// ranges, then how they fit together.
func (c Config) Validate() error {
	if err := models.CheckRanges(Arch, c); err != nil {
		return err
	}
	switch {
	case c.RopeScaling != "" && c.RopeScaling != "linear" && c.RopeScaling != "yarn":
		return fmt.Errorf("olmo2: RoPE scaling %q (toy runs linear and yarn)", c.RopeScaling)
	case c.RopeScaling != "" && c.RopeScale == 0 || c.RopeScaling == "" && c.RopeScale != 0:
		return fmt.Errorf("olmo2: RoPE scaling factor %g", c.RopeScale)
	case c.RopeScaling == "yarn" && c.RopeOrigContext <= 0:
		return fmt.Errorf("olmo2: YaRN over an original context of %d", c.RopeOrigContext)
	}
	return nil
}

// SetMetadata writes the configuration as GGUF metadata, in llama.cpp's
// keys; the RoPE width (all of each head) and, with a window, its pattern
// (0 included) too.
func (c Config) SetMetadata(w *gguf.Writer) {
	w.SetConfig(Arch, c)
	w.SetUint32(Arch+".rope.dimension_count", uint32(c.HeadDim()))
	if c.Window > 0 {
		w.SetUint32(Arch+".attention.sliding_window_pattern", uint32(c.SlidingPattern))
	}
}
