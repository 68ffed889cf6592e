// The flat configuration of a gpt-oss model, read from GGUF metadata.

package gptoss

import (
	"errors"
	"fmt"
	"math"

	"github.com/toyml/toy/toy/gguf"
	"github.com/toyml/toy/toy/tensor"
)

// Config holds every hyperparameter of a gpt-oss model.
type Config struct {
	VocabSize     int     // V
	ContextLength int     // trained context length
	Embed         int     // D
	Layers        int     // L
	FFN           int     // F: the width of each expert
	Experts       int     // E: experts per layer
	ExpertsUsed   int     // k: experts run per token
	Heads         int     // H
	KVHeads       int     // KV
	HeadDim       int     // Dh
	RopeDim       int     // features rotated per head (Dh)
	RopeBase      float32 // θ base
	NormEps       float32 // RMSNorm ε
	Window        int     // W: the sliding window of the windowed layers
	WindowPeriod  int     // layer l is windowed when l mod WindowPeriod < WindowPeriod−1 (2: the even layers)

	// YaRN (Peng et al. 2023) stretches RoPE RopeScaleFactor times past
	// RopeOrigContext; RopeScaleFactor 0 is none.
	RopeScaleFactor float32
	RopeOrigContext int
	RopeAttnFactor  float32 // GGUF rope.scaling.attn_factor; 0 means 1
	// YaRN's ramp, from YarnBetaFast down to YarnBetaSlow rotations over
	// RopeOrigContext (0: llama.cpp's 32 and 1, gpt-oss's own).
	YarnBetaFast, YarnBetaSlow float32
}

// The gated activation's constants (llama.cpp's, gpt-oss's).
const (
	Alpha = 1.702
	Limit = 7.0
)

// Arch is the GGUF architecture this package loads.
const Arch = "gpt-oss"

// ErrUnsupported marks gpt-oss files that use features toy lacks.
var ErrUnsupported = errors.New("gptoss: unsupported model feature")

// ConfigFromGGUF reads the configuration from f's metadata and tensor
// shapes.
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
		return c, nil, fmt.Errorf("gptoss: architecture %q is not gpt-oss", arch)
	}
	m := f.Meta(Arch)
	d, err := m.Decoder()
	if err != nil {
		return c, nil, err
	}
	c.ContextLength, c.Embed, c.Layers, c.Heads, c.KVHeads = d.Context, d.Embed, d.Layers, d.Heads, d.KVHeads
	c.Experts = m.Uint("expert_count")
	c.ExpertsUsed = m.Uint("expert_used_count")
	c.FFN = m.Uint("expert_feed_forward_length")
	c.HeadDim = m.UintOr("attention.key_length", c.Embed/max(c.Heads, 1))
	c.RopeDim = m.UintOr("rope.dimension_count", c.HeadDim)
	c.NormEps = m.Float("attention.layer_norm_rms_epsilon")
	c.RopeBase = m.FloatOr("rope.freq_base", 10000)
	c.Window = m.Uint("attention.sliding_window")
	var lacking []string
	c.WindowPeriod = 2
	if f.Has(Arch + ".attention.sliding_window_pattern") {
		if p, err := f.Int(Arch + ".attention.sliding_window_pattern"); err == nil {
			c.WindowPeriod = p
		} else {
			lacking = append(lacking, "a per-layer sliding window pattern")
		}
	}
	switch typ := m.StringOr("rope.scaling.type", "none"); {
	case typ == "yarn":
		if factor := m.FloatOr("rope.scaling.factor", 0); factor != 0 && factor != 1 {
			c.RopeScaleFactor = factor
			c.RopeOrigContext = m.UintOr("rope.scaling.original_context_length", c.ContextLength)
			c.YarnBetaFast = m.FloatOr("rope.scaling.yarn_beta_fast", 0)
			c.YarnBetaSlow = m.FloatOr("rope.scaling.yarn_beta_slow", 0)
		}
	case typ != "none":
		lacking = append(lacking, fmt.Sprintf("RoPE scaling %q", typ))
	}
	c.RopeAttnFactor = m.FloatOr("rope.scaling.attn_factor", 0)
	if m.FloatOr("rope.freq_base_swa", c.RopeBase) != c.RopeBase {
		lacking = append(lacking, "a RoPE base of its own for the windowed layers")
	}
	if err := m.Err(); err != nil {
		return c, nil, err
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
		return fmt.Errorf("gptoss: vocabulary size %d", c.VocabSize)
	case c.Embed <= 0 || c.Embed > big || c.FFN <= 0 || c.FFN > big:
		return fmt.Errorf("gptoss: width %d, expert width %d", c.Embed, c.FFN)
	case c.Experts <= 0 || c.Experts > tensor.MaxExperts || c.ExpertsUsed <= 0 || c.ExpertsUsed > c.Experts:
		return fmt.Errorf("gptoss: %d experts used of %d", c.ExpertsUsed, c.Experts)
	case c.Layers <= 0 || c.Layers > 1024:
		return fmt.Errorf("gptoss: %d layers", c.Layers)
	case c.Heads <= 0 || c.KVHeads <= 0 || c.Heads%c.KVHeads != 0:
		return fmt.Errorf("gptoss: %d heads with %d KV heads", c.Heads, c.KVHeads)
	case c.HeadDim <= 0 || c.HeadDim > big || c.RopeDim <= 0 || c.RopeDim > c.HeadDim || c.RopeDim%2 != 0:
		return fmt.Errorf("gptoss: head width %d, RoPE width %d", c.HeadDim, c.RopeDim)
	case c.ContextLength <= 0:
		return fmt.Errorf("gptoss: context length %d", c.ContextLength)
	case !(c.NormEps > 0 && c.NormEps < 1):
		return fmt.Errorf("gptoss: RMSNorm epsilon %g", c.NormEps)
	case c.Window < 0 || c.WindowPeriod < 0 || c.WindowPeriod > 1024:
		return fmt.Errorf("gptoss: sliding window %d every %d layers", c.Window, c.WindowPeriod)
	case !(c.RopeScaleFactor >= 0 && c.RopeScaleFactor < 1e6) || (c.RopeScaleFactor != 0 && c.RopeOrigContext <= 0) ||
		!(c.YarnBetaFast >= 0 && c.YarnBetaFast < 1e6) || !(c.YarnBetaSlow >= 0 && c.YarnBetaSlow < 1e6):
		return fmt.Errorf("gptoss: YaRN factor %g over %d positions", c.RopeScaleFactor, c.RopeOrigContext)
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
	if c.RopeScaleFactor == 0 {
		return s
	}
	s.FreqScale = 1 / c.RopeScaleFactor
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
	a := Arch
	w.SetString("general.architecture", a)
	w.SetUint32(a+".context_length", uint32(c.ContextLength))
	w.SetUint32(a+".embedding_length", uint32(c.Embed))
	w.SetUint32(a+".block_count", uint32(c.Layers))
	w.SetUint32(a+".feed_forward_length", uint32(c.FFN))
	w.SetUint32(a+".expert_feed_forward_length", uint32(c.FFN))
	w.SetUint32(a+".expert_count", uint32(c.Experts))
	w.SetUint32(a+".expert_used_count", uint32(c.ExpertsUsed))
	w.SetUint32(a+".attention.head_count", uint32(c.Heads))
	w.SetUint32(a+".attention.head_count_kv", uint32(c.KVHeads))
	w.SetUint32(a+".attention.key_length", uint32(c.HeadDim))
	w.SetUint32(a+".attention.value_length", uint32(c.HeadDim))
	w.SetFloat32(a+".attention.layer_norm_rms_epsilon", c.NormEps)
	w.SetUint32(a+".attention.sliding_window", uint32(c.Window))
	if c.WindowPeriod != 2 {
		w.SetUint32(a+".attention.sliding_window_pattern", uint32(c.WindowPeriod))
	}
	w.SetUint32(a+".rope.dimension_count", uint32(c.RopeDim))
	w.SetFloat32(a+".rope.freq_base", c.RopeBase)
	if c.RopeScaleFactor != 0 {
		w.SetString(a+".rope.scaling.type", "yarn")
		w.SetFloat32(a+".rope.scaling.factor", c.RopeScaleFactor)
		w.SetUint32(a+".rope.scaling.original_context_length", uint32(c.RopeOrigContext))
	}
	if c.RopeAttnFactor != 0 {
		w.SetFloat32(a+".rope.scaling.attn_factor", c.RopeAttnFactor)
	}
	if c.YarnBetaFast != 0 {
		w.SetFloat32(a+".rope.scaling.yarn_beta_fast", c.YarnBetaFast)
	}
	if c.YarnBetaSlow != 0 {
		w.SetFloat32(a+".rope.scaling.yarn_beta_slow", c.YarnBetaSlow)
	}
}
