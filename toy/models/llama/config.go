// The flat configuration of a Llama-family model, declared with its GGUF
// keys (under the architecture's name) and its card symbols.

package llama

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/toyml/toy/toy/gguf"
	"github.com/toyml/toy/toy/models"
	"github.com/toyml/toy/toy/tensor"
)

// Config holds every hyperparameter of a Llama-family model. Absent from a
// file, KVHeads is H, HeadDim D/H, RopeDim Dh, RopeBase 10000 and
// ExpertFFN F; RopeNeoX follows from Arch, RopeFreqs from the file's
// rope_freqs.weight.
type Config struct {
	Arch          string  // GGUF architecture: one of Archs
	VocabSize     int     `range:"[1, 1<<24]" card:"N_V, vocabulary size"`
	ContextLength int     `gguf:"context_length" range:"[1, *]" card:"ℓ_max, trained context length"`
	Embed         int     `gguf:"embedding_length" range:"[1, 1<<20]" card:"d_e, model width"`
	Layers        int     `gguf:"block_count" range:"[1, 1024]" card:"L, layers"`
	FFN           int     `gguf:"feed_forward_length" range:"[1, 1<<20]" card:"d_mlp, feed-forward width"`
	Heads         int     `gguf:"attention.head_count" range:"[1, *]" multiple:"KVHeads" card:"H, query heads"`
	KVHeads       int     `gguf:"attention.head_count_kv,optional" default:"Heads" range:"[1, *]" card:"H_kv, key/value heads (grouped-query attention when < H)"`
	HeadDim       int     `gguf:"attention.key_length,optional" default:"Embed/Heads" range:"[1, *]" card:"d_h, head width"`
	RopeDim       int     `gguf:"rope.dimension_count,optional" default:"HeadDim" range:"[1, HeadDim]" multiple:"2" card:"d_rope, features rotated per head"`
	RopeBase      float32 `gguf:"rope.freq_base,optional" card:"θ_rope, RoPE frequency base"`
	RopeNeoX      bool    `card:"neox, RoPE rotates half-split pairs, not adjacent ones"`              // qwen2 and later
	RopeFreqs     bool    `card:"f_rope, pair i's RoPE angle is divided by the frequency factor f[i]"` // Llama 3.1+
	NormEps       float32 `gguf:"attention.layer_norm_rms_epsilon" range:"(0, 1)" card:"ε, RMSNorm epsilon"`
	TiedOutput    bool    `card:"tied, the unembedding is the token embedding (W_u = W_eᵀ)"`

	// RoPE scaling past the trained context: "" (none), "linear" or "yarn"
	// (Peng et al. 2023: the long wavelengths only, over RopeOrigContext).
	RopeScaling     string  `gguf:"rope.scaling.type,optional" card:"scaling, RoPE scaling for a longer context"`
	RopeScale       float32 `gguf:"rope.scaling.factor,optional" range:"[0, 1e6)" card:"s_rope, RoPE's stretch factor (linear: every angle is divided by s_rope)"`
	RopeOrigContext int     `gguf:"rope.scaling.original_context_length,optional" card:"ℓ_orig, the context before the stretch (and the temperature's step)"`
	RopeAttnFactor  float32 `gguf:"rope.scaling.attn_factor,optional" range:"[0, 100)" card:"m_rope, RoPE's cos and sin are multiplied by m_rope"`

	// A mixture of SwiGLU experts in place of the feed-forward layer when
	// Experts > 0 (Mixtral: "llama" files with expert tensors; the *moe
	// architectures), with a shared expert when SharedFFN > 0 (Qwen2-MoE).
	Experts     int `gguf:"expert_count,optional" range:"[0, 4096]" card:"E, experts per layer"`
	ExpertsUsed int `gguf:"expert_used_count,optional" range:"[0, Experts]" card:"k, experts run per token"`
	ExpertFFN   int `gguf:"expert_feed_forward_length,optional" default:"FFN" range:"[0, 1<<20]" card:"d_exp, expert width"`
	SharedFFN   int `gguf:"expert_shared_feed_forward_length,optional" range:"[0, 1<<20]" card:"d_sh, shared expert width"`

	// Granite's multipliers, 0 meaning none (SmolLM3 and Ministral 3 have
	// AttentionScale too).
	EmbeddingScale float32 `gguf:"embedding_scale,optional" card:"s_e, the token embeddings are multiplied by s_e"`
	ResidualScale  float32 `gguf:"residual_scale,optional" card:"s_r, each sublayer's output is multiplied by s_r before it joins the residual stream"`
	AttentionScale float32 `gguf:"attention.scale,optional" card:"s_a, the attention scores are multiplied by s_a (in place of 1/√d_h)"`
	LogitScale     float32 `gguf:"logit_scale,optional" card:"s_u, the logits are divided by s_u"`

	// Ministral 3 (mistral3): YaRN's ramp and magnitude (YarnLogMul is
	// Hugging Face's mscale_all_dim), and Llama 4's attention temperature.
	YarnBetaFast    float32 `gguf:"rope.scaling.yarn_beta_fast,optional" range:"[0, 1e4)" card:"β_fast, YaRN keeps pairs turning more than β_fast times over ℓ_orig (0: 32)"`
	YarnBetaSlow    float32 `gguf:"rope.scaling.yarn_beta_slow,optional" range:"[0, 1e4)" card:"β_slow, YaRN divides pairs turning fewer than β_slow times by s_rope (0: 1)"`
	YarnLogMul      float32 `gguf:"rope.scaling.yarn_log_multiplier,optional" range:"[0, 100)" card:"m_log, cos, sin × (1 + 0.1 ln s_rope)/(1 + 0.1·m_log·ln s_rope) in place of YaRN's magnitude"`
	AttnTemperature float32 `gguf:"attention.temperature_scale,optional" range:"(-1e3, 1e3)" card:"τ, queries at position p × (1 + τ·ln(⌊p/ℓ_orig⌋ + 1)), after RoPE"`
}

// Archs lists the GGUF architectures this package loads.
var Archs = []string{"llama", "qwen2", "qwen2moe", "qwen3", "qwen3moe", "granite", "granitemoe", "smollm3", "exaone", "mistral3"}

// ErrUnsupported marks files of this family that use features toy lacks.
var ErrUnsupported = models.ErrUnsupported

// ConfigFromGGUF reads the configuration from f's metadata and tensor shapes,
// refusing with ErrUnsupported files that need features toy lacks (LongRoPE
// scaling; Llama 3.1's rope_freqs.weight, linear and YaRN are supported).
func ConfigFromGGUF(f *gguf.File) (Config, error) {
	c, lacking, err := readConfig(f)
	return c, cmp.Or(err, models.Unsupported("llama", lacking))
}

// readConfig reads the configuration as llama.cpp does, listing the
// features the file uses that toy does not run yet (describing a model
// needs no more).
func readConfig(f *gguf.File) (Config, []string, error) {
	arch, err := models.ArchIn(f, "llama", Archs)
	if err != nil {
		return Config{}, nil, err
	}
	c := Config{Arch: arch, RopeNeoX: neoX(arch), RopeBase: 10000, RopeScaling: "linear"}
	if err := models.ReadConfig(f, arch, &c); err != nil {
		return c, nil, err
	}
	m := f.Meta(arch)
	if c.Experts == 0 {
		c.ExpertsUsed, c.ExpertFFN, c.SharedFFN = 0, 0, 0
	}
	// Keys that llama.cpp reads for some architectures only.
	if !c.Granite() {
		c.EmbeddingScale, c.ResidualScale, c.LogitScale = 0, 0, 0
		if c.Arch != "smollm3" && c.Arch != "mistral3" {
			c.AttentionScale = 0
		}
	}
	if c.Arch != "mistral3" {
		c.YarnBetaFast, c.YarnBetaSlow, c.YarnLogMul, c.AttnTemperature = 0, 0, 0, 0
	}
	// RoPE scaling: a factor (or the older rope.scale_linear) of 0 or 1
	// scales nothing (YaRN's too is then the identity); a factor without a
	// type is linear; type "none" turns a factor off.
	if !m.Has("rope.scaling.factor") {
		c.RopeScale = m.FloatOr("rope.scale_linear", 0)
	}
	var lacking []string
	switch typ := c.RopeScaling; {
	case typ != "none" && typ != "linear" && typ != "yarn":
		lacking = append(lacking, fmt.Sprintf("RoPE scaling %q", typ))
		fallthrough
	case typ == "none" || c.RopeScale == 0 || c.RopeScale == 1: // the identity
		c.RopeScaling, c.RopeScale = "", 0
	}
	switch {
	case c.RopeScaling != "yarn" && c.AttnTemperature == 0:
		c.RopeOrigContext = 0
	case !m.Has("rope.scaling.original_context_length"):
		c.RopeOrigContext = c.ContextLength
	}
	if c.Granite() && !m.BoolOr("rope.scaling.finetuned", true) {
		lacking = append(lacking, "Granite without RoPE (rope.scaling.finetuned false)")
	}
	if c.Granite() && c.SharedFFN > 0 {
		lacking = append(lacking, "Granite's shared expert")
	}
	c.RopeFreqs = models.HasTensor(f, "rope_freqs.weight")
	return c, lacking, cmp.Or(m.Err(), c.Validate())
}

// neoX reports whether arch's files pair RoPE features half-split (i,
// i+Dh/2): all but llama, smollm3, mistral3 and Granite, whose converter
// permutes Q and K for adjacent pairs.
func neoX(arch string) bool {
	return !slices.Contains([]string{"llama", "smollm3", "mistral3", "granite", "granitemoe"}, arch)
}

// RoPEScaling returns the scaling tensor.RoPEWith applies for c: none,
// linear or YaRN (with llama.cpp's ramp from 32 down to 1 rotations).
func (c Config) RoPEScaling() tensor.RoPEScaling {
	s := tensor.RoPEScaling{AttnFactor: c.RopeAttnFactor}
	if c.RopeScale != 0 && c.RopeScaling != "" {
		s.FreqScale = 1 / c.RopeScale
	}
	if c.RopeScaling == "yarn" {
		s.ExtFactor, s.BetaFast, s.BetaSlow, s.OrigContext = 1, cmp.Or(c.YarnBetaFast, 32), cmp.Or(c.YarnBetaSlow, 1), c.RopeOrigContext
		if c.YarnLogMul != 0 && c.RopeScale > 1 {
			// llama.cpp: mscale(s, 1)/mscale(s, m) · 1/(1 + 0.1 ln s) · attn_factor,
			// mscale(s, m) = 1 + 0.1·m·ln s, in float32.
			ln := float32(math.Log(float64(c.RopeScale)))
			f := (0.1*ln + 1) / (0.1*c.YarnLogMul*ln + 1)
			f *= 1 / (1 + 0.1*ln)
			s.AttnFactor = f * cmp.Or(c.RopeAttnFactor, 1)
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

// Granite reports whether c is IBM's Granite (granite, granitemoe).
func (c Config) Granite() bool { return c.Arch == "granite" || c.Arch == "granitemoe" }

// NoRoPE reports whether layer i attends without positions (SmolLM3:
// every fourth layer, counting from 1, has no RoPE).
func (c Config) NoRoPE(i int) bool { return c.Arch == "smollm3" && (i+1)%4 == 0 }

// QKNorm reports whether each head of the queries and keys is RMS-normalised
// before RoPE (qwen3, qwen3moe).
func (c Config) QKNorm() bool { return c.Arch == "qwen3" || c.Arch == "qwen3moe" }

// Validate checks that the numbers describe a buildable model: the declared
// ranges, then how they fit together.
func (c Config) Validate() error {
	if err := models.CheckRanges("llama", c); err != nil {
		return err
	}
	scale := func(s float32) bool { return s == 0 || (s > 1e-6 && s < 1e6) } // a multiplier: 0 (none) or sane
	switch {
	case c.RopeScaling != "" && c.RopeScaling != "linear" && c.RopeScaling != "yarn":
		return fmt.Errorf("llama: RoPE scaling %q (toy runs linear and yarn)", c.RopeScaling)
	case c.RopeScaling != "" && c.RopeScale == 0 || c.RopeScaling == "" && c.RopeScale != 0:
		return fmt.Errorf("llama: RoPE scaling factor %g", c.RopeScale)
	case (c.RopeScaling == "yarn" || c.AttnTemperature != 0) && c.RopeOrigContext <= 0:
		return fmt.Errorf("llama: YaRN or attention temperature over an original context of %d", c.RopeOrigContext)
	case (c.Experts > 0) != (c.ExpertsUsed > 0) || (c.Experts > 0) != (c.ExpertFFN > 0):
		return fmt.Errorf("llama: %d experts, %d used, of width %d", c.Experts, c.ExpertsUsed, c.ExpertFFN)
	case (c.Arch == "qwen3moe" || c.Arch == "qwen2moe" || c.Arch == "granitemoe") && c.Experts == 0:
		return fmt.Errorf("llama: a %s model without experts", c.Arch)
	case c.SharedFFN > 0 && c.Experts == 0:
		return fmt.Errorf("llama: shared expert of width %d with %d experts", c.SharedFFN, c.Experts)
	case !scale(c.EmbeddingScale) || !scale(c.ResidualScale) || !scale(c.AttentionScale) || !scale(c.LogitScale):
		return fmt.Errorf("llama: multipliers: embedding %g, residual %g, attention %g, logit %g", c.EmbeddingScale, c.ResidualScale, c.AttentionScale, c.LogitScale)
	case c.Granite() && c.LogitScale == 0:
		return errors.New("llama: a Granite model without a logit scale")
	}
	return nil
}

// SetMetadata writes the configuration as GGUF metadata, in llama.cpp's keys
// and types; value_length beside key_length, as llama.cpp reads both.
func (c Config) SetMetadata(w *gguf.Writer) {
	w.SetConfig(c.Arch, c)
	w.SetUint32(c.Arch+".attention.value_length", uint32(c.HeadDim))
}
