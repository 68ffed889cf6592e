// The flat configuration of a Llama-family model, read from GGUF metadata.

package llama

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/toyml/toy/toy/gguf"
	"github.com/toyml/toy/toy/tensor"
)

// Config holds every hyperparameter of a Llama-family model.
type Config struct {
	Arch          string  // GGUF architecture: one of Archs
	VocabSize     int     // V
	ContextLength int     // trained context length
	Embed         int     // D
	Layers        int     // L
	FFN           int     // F
	Heads         int     // H
	KVHeads       int     // KV (= H without grouped-query attention)
	HeadDim       int     // Dh
	RopeDim       int     // features rotated per head (usually Dh)
	RopeBase      float32 // θ base
	RopeNeoX      bool    // half-split RoPE pairs (qwen2)
	RopeFreqs     bool    // RoPE angles divided by per-pair factors (Llama 3.1+: rope_freqs.weight)
	NormEps       float32 // RMSNorm ε
	TiedOutput    bool    // the output head reuses the token embedding

	// RoPE scaling for contexts past the trained one (GGUF rope.scaling.*):
	// "" (none), "linear" (angles divided by RopeScaleFactor) or "yarn"
	// (Peng et al. 2023: interpolation for the long wavelengths only, over
	// RopeOrigContext, the context before stretching). RopeAttnFactor
	// multiplies RoPE's cos and sin (0 means 1).
	RopeScaling     string
	RopeScaleFactor float32
	RopeOrigContext int
	RopeAttnFactor  float32

	// A mixture of experts in place of the feed-forward layer when Experts
	// > 0 (Mixtral: "llama" files with expert tensors; Qwen2-MoE,
	// Qwen3-MoE): E SwiGLU experts of width ExpertFFN, the ExpertsUsed most
	// probable run per token, their weights renormalised to sum to 1 (but
	// in Qwen2-MoE); with SharedFFN > 0 also a shared expert of that width
	// that every token runs, gated by a sigmoid (Qwen2-MoE).
	Experts, ExpertsUsed, ExpertFFN, SharedFFN int

	// Granite's multipliers, 0 meaning none: the token embeddings are
	// multiplied by EmbedScale, each sublayer's output by ResidualScale
	// before it joins the residual stream, the attention scores by
	// AttnScale in place of 1/√Dh, and the logits are divided by
	// LogitScale.
	EmbedScale, ResidualScale, AttnScale, LogitScale float32

	// Ministral 3 (mistral3): YaRN's ramp from YarnBetaFast down to
	// YarnBetaSlow rotations (0: llama.cpp's 32 and 1); YarnLogMul, when
	// not 0, divides the magnitude by 1 + 0.1·YarnLogMul·ln s (the
	// mscale_all_dim of Hugging Face's config); AttnTemperature, when not
	// 0, multiplies each query at position p by 1 + AttnTemperature·ln(⌊p/n⌋
	// + 1), n the original context (Llama 4's attention scaling).
	YarnBetaFast, YarnBetaSlow, YarnLogMul, AttnTemperature float32
}

// Archs lists the GGUF architectures this package loads.
var Archs = []string{"llama", "qwen2", "qwen2moe", "qwen3", "qwen3moe", "granite", "granitemoe", "smollm3", "exaone", "mistral3"}

// ErrUnsupported marks files of this family that use features toy lacks.
var ErrUnsupported = errors.New("llama: unsupported model feature")

// ConfigFromGGUF reads the configuration from f's metadata and tensor shapes.
// Files that need features toy lacks (LongRoPE scaling) are refused with
// ErrUnsupported; Llama 3.1's scaling, a rope_freqs.weight tensor
// (Model.RopeFreqs), and linear and YaRN scaling by metadata are supported.
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
	if !slices.Contains(Archs, arch) {
		return c, nil, fmt.Errorf("llama: architecture %q is not one of %v", arch, Archs)
	}
	c.Arch = arch
	c.RopeNeoX = arch != "llama" && arch != "smollm3" && arch != "mistral3" && !c.Granite()
	m := f.Meta(arch)
	d, err := m.Decoder()
	if err != nil {
		return c, nil, err
	}
	c.ContextLength, c.Embed, c.Layers, c.FFN, c.Heads, c.KVHeads = d.Context, d.Embed, d.Layers, d.FFN, d.Heads, d.KVHeads
	c.HeadDim = m.UintOr("attention.key_length", c.Embed/c.Heads)
	c.RopeDim = m.UintOr("rope.dimension_count", c.HeadDim)
	c.NormEps = m.Float("attention.layer_norm_rms_epsilon")
	c.RopeBase = m.FloatOr("rope.freq_base", 10000)
	c.Experts = m.UintOr("expert_count", 0)
	if c.Experts > 0 {
		c.ExpertsUsed = m.Uint("expert_used_count")
		c.ExpertFFN = m.UintOr("expert_feed_forward_length", c.FFN)
		c.SharedFFN = m.UintOr("expert_shared_feed_forward_length", 0)
	}
	lacking := readRopeScaling(m, &c)
	if c.Arch == "smollm3" || c.Arch == "mistral3" {
		c.AttnScale = m.FloatOr("attention.scale", 0)
	}
	if c.Arch == "mistral3" {
		c.AttnTemperature = m.FloatOr("attention.temperature_scale", 0)
		c.YarnBetaFast = m.FloatOr("rope.scaling.yarn_beta_fast", 0)
		c.YarnBetaSlow = m.FloatOr("rope.scaling.yarn_beta_slow", 0)
		c.YarnLogMul = m.FloatOr("rope.scaling.yarn_log_multiplier", 0)
		if c.AttnTemperature != 0 && c.RopeOrigContext == 0 {
			c.RopeOrigContext = m.UintOr("rope.scaling.original_context_length", c.ContextLength)
		}
	}
	if c.Granite() {
		c.LogitScale = m.Float("logit_scale")
		c.EmbedScale = m.FloatOr("embedding_scale", 0)
		c.ResidualScale = m.FloatOr("residual_scale", 0)
		c.AttnScale = m.FloatOr("attention.scale", 0)
		if !m.BoolOr("rope.scaling.finetuned", true) {
			lacking = append(lacking, "Granite without RoPE (rope.scaling.finetuned false)")
		}
		if c.SharedFFN > 0 {
			lacking = append(lacking, "Granite's shared expert")
		}
	}
	if err := m.Err(); err != nil {
		return c, nil, err
	}
	emb, err := f.Info("token_embd.weight")
	if err != nil {
		return c, nil, err
	}
	c.VocabSize = emb.Shape()[0]
	_, err = f.Info("output.weight")
	c.TiedOutput = err != nil
	_, err = f.Info("rope_freqs.weight")
	c.RopeFreqs = err == nil
	return c, lacking, c.Validate()
}

// readRopeScaling reads rope.scaling.* as llama.cpp does: a factor (or the
// older rope.scale_linear) of 0 or 1 scales nothing (YaRN's too is then the
// identity); a factor without a type is linear; type "none" turns a factor
// off. It returns the scalings toy does not run.
func readRopeScaling(m *gguf.Meta, c *Config) (lacking []string) {
	typ := m.StringOr("rope.scaling.type", "linear")
	factor := m.FloatOr("rope.scaling.factor", m.FloatOr("rope.scale_linear", 0))
	c.RopeAttnFactor = m.FloatOr("rope.scaling.attn_factor", 0)
	switch {
	case typ == "none" || ((typ == "linear" || typ == "yarn") && (factor == 0 || factor == 1)): // the identity
	case typ == "linear":
		c.RopeScaling, c.RopeScaleFactor = typ, factor
	case typ == "yarn":
		c.RopeScaling, c.RopeScaleFactor = typ, factor
		c.RopeOrigContext = m.UintOr("rope.scaling.original_context_length", c.ContextLength)
	default:
		lacking = append(lacking, fmt.Sprintf("RoPE scaling %q", typ))
	}
	return lacking
}

// RoPEScaling returns the scaling tensor.RoPEWith applies for c: none,
// linear or YaRN (with llama.cpp's ramp from 32 down to 1 rotations).
func (c Config) RoPEScaling() tensor.RoPEScaling {
	s := tensor.RoPEScaling{AttnFactor: c.RopeAttnFactor}
	if c.RopeScaleFactor != 0 && c.RopeScaling != "" {
		s.FreqScale = 1 / c.RopeScaleFactor
	}
	if c.RopeScaling == "yarn" {
		s.ExtFactor, s.BetaFast, s.BetaSlow, s.OrigContext = 1, 32, 1, c.RopeOrigContext
		if c.YarnBetaFast != 0 {
			s.BetaFast = c.YarnBetaFast
		}
		if c.YarnBetaSlow != 0 {
			s.BetaSlow = c.YarnBetaSlow
		}
		if c.YarnLogMul != 0 && c.RopeScaleFactor > 1 {
			// llama.cpp: mscale(s, 1)/mscale(s, m) · 1/(1 + 0.1 ln s) · attn_factor,
			// mscale(s, m) = 1 + 0.1·m·ln s, in float32.
			ln := float32(math.Log(float64(c.RopeScaleFactor)))
			f := (0.1*ln + 1) / (0.1*c.YarnLogMul*ln + 1)
			f *= 1 / (1 + 0.1*ln)
			if c.RopeAttnFactor != 0 {
				f *= c.RopeAttnFactor
			}
			s.AttnFactor = f
		}
	}
	return s
}

// QKVBias reports whether the query, key and value projections have biases
// (qwen2).
func (c Config) QKVBias() bool { return c.Arch == "qwen2" || c.Arch == "qwen2moe" }

// NormalizeExperts reports whether the chosen experts' weights are
// renormalised to sum to 1 (all but Qwen2-MoE).
func (c Config) NormalizeExperts() bool { return c.Arch != "qwen2moe" }

// Granite reports whether c is IBM's Granite (granite, granitemoe): Llama
// with multipliers on the embeddings, the residual branches, the attention
// scores and the logits.
func (c Config) Granite() bool { return c.Arch == "granite" || c.Arch == "granitemoe" }

// NoRoPE reports whether layer i attends without positions (SmolLM3:
// every fourth layer, counting from 1, has no RoPE).
func (c Config) NoRoPE(i int) bool { return c.Arch == "smollm3" && (i+1)%4 == 0 }

// QKNorm reports whether each head of the queries and keys is RMS-normalised
// before RoPE (qwen3, qwen3moe).
func (c Config) QKNorm() bool { return c.Arch == "qwen3" || c.Arch == "qwen3moe" }

// Validate checks that the numbers describe a buildable model.
func (c Config) Validate() error {
	const big = 1 << 20
	switch {
	case c.VocabSize <= 0 || c.VocabSize > 1<<24:
		return fmt.Errorf("llama: vocabulary size %d", c.VocabSize)
	case c.Embed <= 0 || c.Embed > big || c.FFN <= 0 || c.FFN > big:
		return fmt.Errorf("llama: width %d, feed-forward width %d", c.Embed, c.FFN)
	case c.Layers <= 0 || c.Layers > 1024:
		return fmt.Errorf("llama: %d layers", c.Layers)
	case c.Heads <= 0 || c.KVHeads <= 0 || c.Heads%c.KVHeads != 0:
		return fmt.Errorf("llama: %d heads with %d KV heads", c.Heads, c.KVHeads)
	case c.HeadDim <= 0 || c.RopeDim <= 0 || c.RopeDim > c.HeadDim || c.RopeDim%2 != 0:
		return fmt.Errorf("llama: head width %d, RoPE width %d", c.HeadDim, c.RopeDim)
	case c.ContextLength <= 0:
		return fmt.Errorf("llama: context length %d", c.ContextLength)
	case !(c.NormEps > 0 && c.NormEps < 1):
		return fmt.Errorf("llama: RMSNorm epsilon %g", c.NormEps)
	case c.RopeScaling != "" && c.RopeScaling != "linear" && c.RopeScaling != "yarn":
		return fmt.Errorf("llama: RoPE scaling %q (toy runs linear and yarn)", c.RopeScaling)
	case c.RopeScaling != "" && !(c.RopeScaleFactor > 0 && c.RopeScaleFactor < 1e6):
		return fmt.Errorf("llama: RoPE scaling factor %g", c.RopeScaleFactor)
	case c.RopeScaling == "yarn" && c.RopeOrigContext <= 0:
		return fmt.Errorf("llama: YaRN over an original context of %d", c.RopeOrigContext)
	case !(c.RopeAttnFactor >= 0 && c.RopeAttnFactor < 100):
		return fmt.Errorf("llama: RoPE attention factor %g", c.RopeAttnFactor)
	case c.Experts < 0 || c.Experts > 4096 || (c.Experts > 0 && (c.ExpertsUsed < 1 || c.ExpertsUsed > c.Experts || c.ExpertFFN <= 0 || c.ExpertFFN > big)):
		return fmt.Errorf("llama: %d experts, %d used, of width %d", c.Experts, c.ExpertsUsed, c.ExpertFFN)
	case (c.Arch == "qwen3moe" || c.Arch == "qwen2moe" || c.Arch == "granitemoe") && c.Experts == 0:
		return fmt.Errorf("llama: a %s model without experts", c.Arch)
	case c.SharedFFN < 0 || c.SharedFFN > big || (c.SharedFFN > 0 && c.Experts == 0):
		return fmt.Errorf("llama: shared expert of width %d with %d experts", c.SharedFFN, c.Experts)
	case !(c.YarnBetaFast >= 0 && c.YarnBetaFast < 1e4 && c.YarnBetaSlow >= 0 && c.YarnBetaSlow < 1e4) ||
		!(c.YarnLogMul >= 0 && c.YarnLogMul < 100) || !(c.AttnTemperature > -1e3 && c.AttnTemperature < 1e3):
		return fmt.Errorf("llama: YaRN β %g, %g, log multiplier %g, attention temperature %g", c.YarnBetaFast, c.YarnBetaSlow, c.YarnLogMul, c.AttnTemperature)
	case c.AttnTemperature != 0 && c.RopeOrigContext <= 0:
		return fmt.Errorf("llama: attention temperature over an original context of %d", c.RopeOrigContext)
	case !validScale(c.EmbedScale) || !validScale(c.ResidualScale) || !validScale(c.AttnScale) || !validScale(c.LogitScale):
		return fmt.Errorf("llama: multipliers: embedding %g, residual %g, attention %g, logit %g", c.EmbedScale, c.ResidualScale, c.AttnScale, c.LogitScale)
	case c.Granite() && c.LogitScale == 0:
		return errors.New("llama: a Granite model without a logit scale")
	}
	return nil
}

// validScale reports whether a multiplier is 0 (none) or a positive, finite
// number of sane size.
func validScale(s float32) bool { return s == 0 || (s > 1e-6 && s < 1e6) }

// SetMetadata writes the configuration as GGUF metadata, in llama.cpp's keys
// and types (counts uint32, epsilon and RoPE base float32).
func (c Config) SetMetadata(w *gguf.Writer) {
	a := c.Arch
	w.SetString("general.architecture", a)
	w.SetUint32(a+".context_length", uint32(c.ContextLength))
	w.SetUint32(a+".embedding_length", uint32(c.Embed))
	w.SetUint32(a+".block_count", uint32(c.Layers))
	w.SetUint32(a+".feed_forward_length", uint32(c.FFN))
	w.SetUint32(a+".attention.head_count", uint32(c.Heads))
	w.SetUint32(a+".attention.head_count_kv", uint32(c.KVHeads))
	w.SetFloat32(a+".attention.layer_norm_rms_epsilon", c.NormEps)
	w.SetUint32(a+".rope.dimension_count", uint32(c.RopeDim))
	w.SetFloat32(a+".rope.freq_base", c.RopeBase)
	if c.HeadDim != c.Embed/c.Heads {
		w.SetUint32(a+".attention.key_length", uint32(c.HeadDim))
		w.SetUint32(a+".attention.value_length", uint32(c.HeadDim))
	}
	if c.RopeScaling != "" {
		w.SetString(a+".rope.scaling.type", c.RopeScaling)
		w.SetFloat32(a+".rope.scaling.factor", c.RopeScaleFactor)
	}
	if c.RopeScaling == "yarn" {
		w.SetUint32(a+".rope.scaling.original_context_length", uint32(c.RopeOrigContext))
	}
	if c.RopeAttnFactor != 0 {
		w.SetFloat32(a+".rope.scaling.attn_factor", c.RopeAttnFactor)
	}
	if c.Experts > 0 {
		w.SetUint32(a+".expert_count", uint32(c.Experts))
		w.SetUint32(a+".expert_used_count", uint32(c.ExpertsUsed))
		w.SetUint32(a+".expert_feed_forward_length", uint32(c.ExpertFFN))
	}
	if c.SharedFFN > 0 {
		w.SetUint32(a+".expert_shared_feed_forward_length", uint32(c.SharedFFN))
	}
	for _, kv := range []struct {
		key string
		v   float32
	}{{"logit_scale", c.LogitScale}, {"embedding_scale", c.EmbedScale}, {"residual_scale", c.ResidualScale}, {"attention.scale", c.AttnScale},
		{"attention.temperature_scale", c.AttnTemperature}, {"rope.scaling.yarn_beta_fast", c.YarnBetaFast},
		{"rope.scaling.yarn_beta_slow", c.YarnBetaSlow}, {"rope.scaling.yarn_log_multiplier", c.YarnLogMul}} {
		if kv.v != 0 {
			w.SetFloat32(a+"."+kv.key, kv.v)
		}
	}
}
