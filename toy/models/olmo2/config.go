// The flat configuration of an OLMo 2 or Olmo 3 model, read from GGUF
// metadata.

package olmo2

import (
	"errors"
	"fmt"

	"github.com/toyml/toy/toy/gguf"
	"github.com/toyml/toy/toy/tensor"
)

// Arch is the GGUF architecture this package loads.
const Arch = "olmo2"

// ErrUnsupported marks files of this family that use features toy lacks.
var ErrUnsupported = errors.New("olmo2: unsupported model feature")

// Config holds every hyperparameter of an OLMo 2 or Olmo 3 model.
type Config struct {
	VocabSize     int     // V
	ContextLength int     // trained context length
	Embed         int     // D
	Layers        int     // L
	FFN           int     // F
	Heads         int     // H
	KVHeads       int     // KV
	RopeBase      float32 // θ base (of the global layers)
	NormEps       float32 // RMSNorm ε

	// Olmo 3's local layers: with Window > 0, layer l attends within the
	// last Window positions when l mod SlidingPattern < SlidingPattern − 1
	// (every layer when SlidingPattern is 0), and turns unscaled.
	Window, SlidingPattern int

	// RoPE scaling of the global layers: "" (none), "linear" or "yarn" (over
	// RopeOrigContext positions); RopeAttnFactor multiplies cos and sin (0
	// means 1).
	RopeScaling     string
	RopeScaleFactor float32
	RopeOrigContext int
	RopeAttnFactor  float32
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
		s.FreqScale = 1 / c.RopeScaleFactor
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
	var c Config
	arch, err := f.Architecture()
	if err != nil {
		return c, nil, err
	}
	if arch != Arch {
		return c, nil, fmt.Errorf("olmo2: architecture %q, want %q", arch, Arch)
	}
	m := f.Meta(arch)
	d, err := m.Decoder()
	if err != nil {
		return c, nil, err
	}
	c.ContextLength, c.Embed, c.Layers, c.FFN, c.Heads, c.KVHeads = d.Context, d.Embed, d.Layers, d.FFN, d.Heads, d.KVHeads
	c.NormEps = m.Float("attention.layer_norm_rms_epsilon")
	c.RopeBase = m.FloatOr("rope.freq_base", 10000)
	rot := m.UintOr("rope.dimension_count", c.HeadDim())
	c.Window = m.UintOr("attention.sliding_window", 0)
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
	typ := m.StringOr("rope.scaling.type", "linear")
	factor := m.FloatOr("rope.scaling.factor", 0)
	c.RopeAttnFactor = m.FloatOr("rope.scaling.attn_factor", 0)
	switch {
	case typ == "none" || factor == 0 || factor == 1:
	case typ == "linear" || typ == "yarn":
		c.RopeScaling, c.RopeScaleFactor = typ, factor
		c.RopeOrigContext = m.UintOr("rope.scaling.original_context_length", c.ContextLength)
	default:
		lacking = append(lacking, fmt.Sprintf("RoPE scaling %q", typ))
	}
	if err := m.Err(); err != nil {
		return c, nil, err
	}
	if rot != c.HeadDim() {
		return c, nil, fmt.Errorf("olmo2: RoPE over %d features of heads %d wide (they must be equal)", rot, c.HeadDim())
	}
	emb, err := f.Info("token_embd.weight")
	if err != nil {
		return c, nil, err
	}
	c.VocabSize = emb.Shape()[0]
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
	case c.RopeScaling != "" && !(c.RopeScaleFactor > 0 && c.RopeScaleFactor < 1e6):
		return fmt.Errorf("olmo2: RoPE scaling factor %g", c.RopeScaleFactor)
	case c.RopeScaling == "yarn" && c.RopeOrigContext <= 0:
		return fmt.Errorf("olmo2: YaRN over an original context of %d", c.RopeOrigContext)
	case !(c.RopeAttnFactor >= 0 && c.RopeAttnFactor < 100):
		return fmt.Errorf("olmo2: RoPE attention factor %g", c.RopeAttnFactor)
	}
	return nil
}

// SetMetadata writes the configuration as GGUF metadata, in llama.cpp's keys.
func (c Config) SetMetadata(w *gguf.Writer) {
	a := Arch
	w.SetString("general.architecture", a)
	w.SetUint32(a+".context_length", uint32(c.ContextLength))
	w.SetUint32(a+".embedding_length", uint32(c.Embed))
	w.SetUint32(a+".block_count", uint32(c.Layers))
	w.SetUint32(a+".feed_forward_length", uint32(c.FFN))
	w.SetUint32(a+".attention.head_count", uint32(c.Heads))
	w.SetUint32(a+".attention.head_count_kv", uint32(c.KVHeads))
	w.SetFloat32(a+".attention.layer_norm_rms_epsilon", c.NormEps)
	w.SetUint32(a+".rope.dimension_count", uint32(c.HeadDim()))
	w.SetFloat32(a+".rope.freq_base", c.RopeBase)
	if c.Window > 0 {
		w.SetUint32(a+".attention.sliding_window", uint32(c.Window))
		w.SetUint32(a+".attention.sliding_window_pattern", uint32(c.SlidingPattern))
	}
	if c.RopeScaling != "" {
		w.SetString(a+".rope.scaling.type", c.RopeScaling)
		w.SetFloat32(a+".rope.scaling.factor", c.RopeScaleFactor)
		w.SetUint32(a+".rope.scaling.original_context_length", uint32(c.RopeOrigContext))
	}
	if c.RopeAttnFactor != 0 {
		w.SetFloat32(a+".rope.scaling.attn_factor", c.RopeAttnFactor)
	}
}
