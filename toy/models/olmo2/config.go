// The flat configuration of an OLMo 2 or Olmo 3 model, read from GGUF
// metadata.

package olmo2

import (
	"errors"
	"fmt"

	"github.com/toyml/toy/toy/gguf"
	"github.com/toyml/toy/toy/models"
	"github.com/toyml/toy/toy/tensor"
)

// Arch is the GGUF architecture this package loads.
const Arch = "olmo2"

// ErrUnsupported marks files of this family that use features toy lacks.
var ErrUnsupported = errors.New("olmo2: unsupported model feature")

// Config holds every hyperparameter of an OLMo 2 or Olmo 3 model. Absent
// from a file, KVHeads is H, RopeBase 10000 and RopeOrigContext the context
// length.
type Config struct {
	VocabSize     int     `card:"N_V, vocabulary size"`
	ContextLength int     `gguf:"context_length" card:"ℓ_max, trained context length"`
	Embed         int     `gguf:"embedding_length" card:"d_e, model width"`
	Layers        int     `gguf:"block_count" card:"L, layers"`
	FFN           int     `gguf:"feed_forward_length" card:"d_mlp, feed-forward width"`
	Heads         int     `gguf:"attention.head_count" card:"H, query heads, each d_h = d_e/H wide"`
	KVHeads       int     `gguf:"attention.head_count_kv,optional" card:"H_kv, key/value heads (grouped-query attention when < H)"`
	RopeBase      float32 `gguf:"rope.freq_base,optional" card:"θ_rope, RoPE frequency base"` // of the global layers
	NormEps       float32 `gguf:"attention.layer_norm_rms_epsilon" card:"ε, RMSNorm epsilon"`

	// Olmo 3's local layers: with Window > 0, layer l attends within the
	// last Window positions when l mod SlidingPattern < SlidingPattern − 1
	// (every layer when SlidingPattern is 0), and turns unscaled.
	Window         int `gguf:"attention.sliding_window,optional" card:"w, the local layers' sliding window, in positions"`
	SlidingPattern int `card:"p, layer l is local when l mod p < p − 1 (every layer when p = 0)"` // GGUF attention.sliding_window_pattern, or 4

	// RoPE scaling of the global layers: "" (none), "linear" or "yarn" (over
	// RopeOrigContext positions); RopeAttnFactor multiplies cos and sin (0
	// means 1).
	RopeScaling     string  `gguf:"rope.scaling.type,optional" card:"scaling, RoPE scaling of the global layers"`
	RopeScale       float32 `gguf:"rope.scaling.factor,optional" card:"s_rope, the stretch factor (linear: every global RoPE angle is divided by s_rope)"`
	RopeOrigContext int     `gguf:"rope.scaling.original_context_length,optional" card:"ℓ_orig, context before the stretch"`
	RopeAttnFactor  float32 `gguf:"rope.scaling.attn_factor,optional" card:"m_rope, the global layers' RoPE cos and sin are multiplied by m_rope"`
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
	if err == nil && len(lacking) > 0 {
		err = fmt.Errorf("%w: %s", ErrUnsupported, lacking[0])
	}
	return c, err
}

// readConfig reads the configuration, listing the features the file uses
// that toy does not run yet (describing a model needs no more).
func readConfig(f *gguf.File) (Config, []string, error) {
	c := Config{RopeBase: 10000, RopeScaling: "linear"}
	if arch, err := f.Architecture(); err != nil {
		return c, nil, err
	} else if arch != Arch {
		return c, nil, fmt.Errorf("olmo2: architecture %q, want %q", arch, Arch)
	}
	if err := models.ReadConfig(f, Arch, &c); err != nil {
		return c, nil, err
	}
	m := f.Meta(Arch)
	if !m.Has("attention.head_count_kv") {
		c.KVHeads = c.Heads
	}
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
	dh := c.Embed / max(c.Heads, 1)
	rot := m.UintOr("rope.dimension_count", dh)
	if err := m.Err(); err != nil {
		return c, nil, err
	}
	if rot != dh {
		return c, nil, fmt.Errorf("olmo2: RoPE over %d features of heads %d wide (they must be equal)", rot, dh)
	}
	return c, lacking, c.Validate()
}

// Validate checks that the numbers describe a buildable model.
func (c Config) Validate() error {
	const big = 1 << 20
	switch {
	case c.VocabSize <= 0 || c.VocabSize > 1<<24:
		return fmt.Errorf("olmo2: vocabulary size %d", c.VocabSize)
	case c.Embed <= 0 || c.Embed > big || c.FFN <= 0 || c.FFN > big:
		return fmt.Errorf("olmo2: width %d, feed-forward width %d", c.Embed, c.FFN)
	case c.Layers <= 0 || c.Layers > 1024:
		return fmt.Errorf("olmo2: %d layers", c.Layers)
	case c.Heads <= 0 || c.KVHeads <= 0 || c.Heads%c.KVHeads != 0 || c.Embed%c.Heads != 0 || c.HeadDim()%2 != 0:
		return fmt.Errorf("olmo2: %d heads with %d KV heads, width %d", c.Heads, c.KVHeads, c.Embed)
	case c.ContextLength <= 0:
		return fmt.Errorf("olmo2: context length %d", c.ContextLength)
	case !(c.NormEps > 0 && c.NormEps < 1):
		return fmt.Errorf("olmo2: RMSNorm epsilon %g", c.NormEps)
	case !(c.RopeBase > 1 && c.RopeBase < 1e12):
		return fmt.Errorf("olmo2: RoPE base %g", c.RopeBase)
	case c.Window < 0 || c.Window > 1<<24 || c.SlidingPattern < 0 || c.SlidingPattern > 1024:
		return fmt.Errorf("olmo2: window %d every %d layers", c.Window, c.SlidingPattern)
	case c.RopeScaling != "" && c.RopeScaling != "linear" && c.RopeScaling != "yarn":
		return fmt.Errorf("olmo2: RoPE scaling %q (toy runs linear and yarn)", c.RopeScaling)
	case c.RopeScaling != "" && !(c.RopeScale > 0 && c.RopeScale < 1e6) || c.RopeScaling == "" && c.RopeScale != 0:
		return fmt.Errorf("olmo2: RoPE scaling factor %g", c.RopeScale)
	case c.RopeScaling == "yarn" && c.RopeOrigContext <= 0:
		return fmt.Errorf("olmo2: YaRN over an original context of %d", c.RopeOrigContext)
	case !(c.RopeAttnFactor >= 0 && c.RopeAttnFactor < 100):
		return fmt.Errorf("olmo2: RoPE attention factor %g", c.RopeAttnFactor)
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
