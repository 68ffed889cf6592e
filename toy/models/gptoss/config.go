// The flat configuration of a gpt-oss model, read from GGUF metadata.

package gptoss

import (
	"cmp"
	"fmt"
	"math"

	"github.com/toyml/toy/toy/gguf"
	"github.com/toyml/toy/toy/models"
	"github.com/toyml/toy/toy/tensor"
)

// Config holds every hyperparameter of a gpt-oss model, declared with its
// GGUF key (under "gpt-oss.") and its card symbol. The fields without a key
// are read by hand (readConfig): with defaults that depend on other keys,
// or only under YaRN.
type Config struct {
	VocabSize     int     `range:"[1, 1<<24]" card:"N_V, vocabulary size"`
	ContextLength int     `gguf:"context_length" range:"[1, *]" card:"ℓ_max, trained context length"`
	Embed         int     `gguf:"embedding_length" range:"[1, 1<<20]" card:"d_e, model width"`
	Layers        int     `gguf:"block_count" range:"[1, 1024]" card:"L, layers"`
	FFN           int     `gguf:"expert_feed_forward_length" range:"[1, 1<<20]" card:"d_mlp, width of each expert"`
	Experts       int     `gguf:"expert_count" range:"[1, 1024]" card:"N_E, experts per layer"` // at most tensor.MaxExperts
	ExpertsUsed   int     `gguf:"expert_used_count" range:"[1, Experts]" card:"k, experts run per token"`
	Heads         int     `gguf:"attention.head_count" range:"[1, *]" multiple:"KVHeads" card:"H, query heads"`
	KVHeads       int     `range:"[1, *]" card:"H_kv, key/value heads"`
	HeadDim       int     `range:"[1, 1<<20]" card:"d_h, head width"`
	RopeDim       int     `range:"[1, HeadDim]" multiple:"2" card:"d_rope, features rotated per head"`
	RopeBase      float32 `gguf:"rope.freq_base,optional" card:"θ_rope, RoPE frequency base"`
	// YaRN (Peng et al. 2023) stretches RoPE RopeScale times past
	// RopeOrigContext (RopeScale 0: none), its ramp from YarnBetaFast down
	// to YarnBetaSlow rotations over RopeOrigContext (0: llama.cpp's 32 and
	// 1, gpt-oss's own).
	RopeScale       float32 `range:"[0, 1e6)" card:"s_rope, YaRN's stretch (0: none)"`
	RopeOrigContext int     `card:"ℓ_orig, the context YaRN stretches"`
	RopeAttnFactor  float32 `gguf:"rope.scaling.attn_factor,optional" card:"m_rope, factor on cos and sin (0: 1)"`
	YarnBetaFast    float32 `gguf:"rope.scaling.yarn_beta_fast,optional" range:"[0, 1e6)" card:"β_fast, YaRN keeps pairs turning more than β_fast times over ℓ_orig (0: 32)"`
	YarnBetaSlow    float32 `gguf:"rope.scaling.yarn_beta_slow,optional" range:"[0, 1e6)" card:"β_slow, YaRN divides pairs turning fewer than β_slow times by s_rope (0: 1)"`
	// Layer l attends over a sliding window of Window positions when
	// l mod WindowPeriod < WindowPeriod−1 (2: the even layers).
	Window       int     `gguf:"attention.sliding_window" range:"[0, *]" card:"W, sliding window of the windowed layers"`
	WindowPeriod int     `range:"[0, 1024]" card:"P, layer l is windowed when l mod P < P − 1"`
	NormEps      float32 `gguf:"attention.layer_norm_rms_epsilon" range:"(0, 1)" card:"ε, RMSNorm epsilon"`
}

// The gated activation's constants (llama.cpp's, gpt-oss's).
const (
	Alpha = 1.702
	Limit = 7.0
)

// Arch is the GGUF architecture this package loads.
const Arch = "gpt-oss"

// ErrUnsupported marks gpt-oss files that use features toy lacks.
var ErrUnsupported = models.ErrUnsupported

// ConfigFromGGUF reads the configuration from f's metadata and tensor
// shapes.
func ConfigFromGGUF(f *gguf.File) (Config, error) {
	c, lacking, err := readConfig(f)
	return c, cmp.Or(err, models.Unsupported(Arch, lacking))
}

// readConfig reads the configuration, listing the features the file uses
// that toy does not run yet (describing a model needs no more).
func readConfig(f *gguf.File) (Config, []string, error) {
	c := Config{RopeBase: 10000, WindowPeriod: 2}
	if err := models.ReadConfig(f, Arch, &c); err != nil {
		return c, nil, err
	}
	m := f.Meta(Arch)
	m.Uint("feed_forward_length") // required, though the experts' width is expert_feed_forward_length
	c.KVHeads = m.UintOr("attention.head_count_kv", c.Heads)
	c.HeadDim = m.UintOr("attention.key_length", c.Embed/max(c.Heads, 1))
	c.RopeDim = m.UintOr("rope.dimension_count", c.HeadDim)
	var lacking []string
	if m.Has("attention.sliding_window_pattern") {
		if p, err := f.Int(m.Key("attention.sliding_window_pattern")); err == nil {
			c.WindowPeriod = p
		} else {
			lacking = append(lacking, "a per-layer sliding window pattern")
		}
	}
	switch typ := m.StringOr("rope.scaling.type", "none"); {
	case typ == "yarn":
		if factor := m.FloatOr("rope.scaling.factor", 0); factor != 0 && factor != 1 {
			c.RopeScale = factor
			c.RopeOrigContext = m.UintOr("rope.scaling.original_context_length", c.ContextLength)
		}
	case typ != "none":
		lacking = append(lacking, fmt.Sprintf("RoPE scaling %q", typ))
	}
	if m.FloatOr("rope.freq_base_swa", c.RopeBase) != c.RopeBase {
		lacking = append(lacking, "a RoPE base of its own for the windowed layers")
	}
	return c, lacking, cmp.Or(m.Err(), c.Validate())
}

// Validate checks that the numbers describe a buildable model: the declared
// ranges, then how they fit together.
func (c Config) Validate() error {
	if err := models.CheckRanges(Arch, c); err != nil {
		return err
	}
	if c.RopeScale != 0 && c.RopeOrigContext <= 0 {
		return fmt.Errorf("gptoss: YaRN factor %g over %d positions", c.RopeScale, c.RopeOrigContext)
	}
	return nil
}

// Windowed reports whether layer l attends over a sliding window (llama.cpp:
// l mod P < P − 1 for the pattern P; P 0 windows every layer).
func (c Config) Windowed(l int) bool {
	return c.Window > 0 && (c.WindowPeriod == 0 || l%c.WindowPeriod < c.WindowPeriod-1)
}

// RoPEScaling returns YaRN's scaling as llama.cpp applies it: the ramp from
// 32 down to 1 rotations, and cos and sin multiplied by its attention
// factor, mscale(s)/(1 + 0.1 ln s) (which the ramp's own 1 + 0.1 ln s then
// makes YaRN's magnitude), in float32.
func (c Config) RoPEScaling() tensor.RoPEScaling {
	s := tensor.RoPEScaling{AttnFactor: c.RopeAttnFactor}
	if c.RopeScale == 0 {
		return s
	}
	s.FreqScale = 1 / c.RopeScale
	s.ExtFactor, s.BetaFast, s.BetaSlow, s.OrigContext = 1, 32, 1, c.RopeOrigContext
	if c.YarnBetaFast != 0 {
		s.BetaFast = c.YarnBetaFast
	}
	if c.YarnBetaSlow != 0 {
		s.BetaSlow = c.YarnBetaSlow
	}
	factor := 1 / s.FreqScale
	if factor > 1 {
		ln := float32(math.Log(float64(factor)))
		f := (0.1*ln + 1) * (1 / (1 + 0.1*ln))
		if c.RopeAttnFactor != 0 {
			f *= c.RopeAttnFactor
		}
		s.AttnFactor = f
	}
	return s
}

// SetMetadata writes the configuration as GGUF metadata, in llama.cpp's keys
// and types (counts uint32, epsilon and RoPE base float32).
func (c Config) SetMetadata(w *gguf.Writer) {
	a := Arch + "."
	w.SetConfig(Arch, c)
	w.SetUint32(a+"feed_forward_length", uint32(c.FFN))
	w.SetUint32(a+"attention.head_count_kv", uint32(c.KVHeads))
	w.SetUint32(a+"attention.key_length", uint32(c.HeadDim))
	w.SetUint32(a+"attention.value_length", uint32(c.HeadDim))
	if c.WindowPeriod != 2 {
		w.SetUint32(a+"attention.sliding_window_pattern", uint32(c.WindowPeriod))
	}
	w.SetUint32(a+"rope.dimension_count", uint32(c.RopeDim))
	if c.RopeScale != 0 {
		w.SetString(a+"rope.scaling.type", "yarn")
		w.SetFloat32(a+"rope.scaling.factor", c.RopeScale)
		w.SetUint32(a+"rope.scaling.original_context_length", uint32(c.RopeOrigContext))
	}
}
