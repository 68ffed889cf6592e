// The flat configuration of a DeepSeek-V2 model, read from GGUF metadata,
// and the attention scale its YaRN scaling implies.

package deepseek2

import (
	"errors"
	"fmt"
	"math"

	"github.com/toyml/toy/toy/gguf"
	"github.com/toyml/toy/toy/tensor"
)

// Config holds every hyperparameter of a DeepSeek-V2 model.
type Config struct {
	VocabSize     int // V
	ContextLength int // trained context length
	Embed         int // D
	Layers        int // L
	DenseLayers   int // the first DenseLayers blocks have a dense SwiGLU, the rest a mixture of experts
	FFN           int // F: the dense SwiGLU's width

	Heads      int  // H
	QLoRARank  int  // Rq: the queries' low-rank width; 0 when they come straight from x (V2-Lite)
	KVLoRARank int  // R: the width of the key/value latent c
	KeyDim     int  // Dk = Dn + Dr: the width of a query or key head
	ValueDim   int  // Dv: the width of a value head
	RopeDim    int  // Dr: the rotated features at the end of each query and key head
	SplitKVB   bool // attn_k_b and attn_v_b (newer converters), not attn_kv_b

	Experts       int // E: experts per MoE layer
	ExpertsUsed   int // k: experts run per token
	ExpertFFN     int // Fe: the width of each expert
	SharedExperts int // Es: shared experts every token runs, stored as one SwiGLU of width Es·Fe
	// ExpertWeightsScale multiplies the k routing weights (0 or 1: none);
	// ExpertWeightsNorm divides them by their sum first.
	ExpertWeightsScale float32
	ExpertWeightsNorm  bool
	// ExpertGating is "softmax" (DeepSeek-V2) or "sigmoid" (DeepSeek-V3);
	// ExpertBias: each MoE layer has exp_probs_b, a bias on the scores
	// that chooses the experts (V3).
	ExpertGating string
	ExpertBias   bool
	// ExpertGroups > 1: a token's experts come from its ExpertGroupsUsed
	// best groups of E/ExpertGroups (group-limited routing).
	ExpertGroups, ExpertGroupsUsed int

	RopeBase float32 // θ base
	NormEps  float32 // RMSNorm ε
	// RoPE scaling (GGUF rope.scaling.*): "" (none), "linear" or "yarn" by
	// RopeScaleFactor over RopeOrigContext positions; RopeAttnFactor
	// (0: 1) multiplies cos and sin; YarnLogMul is the file's
	// yarn_log_multiplier, 0.1·mscale_all_dim, which enlarges the attention
	// scale (AttnScale).
	RopeScaling     string
	RopeScaleFactor float32
	RopeOrigContext int
	RopeAttnFactor  float32
	YarnLogMul      float32

	TiedOutput bool // the output head is token_embd
}

// Arch is the GGUF architecture this package loads.
const Arch = "deepseek2"

// ErrUnsupported marks DeepSeek-V2 files that use features toy lacks.
var ErrUnsupported = errors.New("deepseek2: unsupported model feature")

// ConfigFromGGUF reads the configuration from f's metadata and tensor
// shapes. Files that need features toy lacks (expert gating other than
// softmax and sigmoid, fused gate-up expert stacks, attention temperature
// tuning, RoPE scaling other than linear and YaRN) are refused with
// ErrUnsupported.
func ConfigFromGGUF(f *gguf.File) (Config, error) {
	c, lacking, err := readConfig(f)
	if len(lacking) > 0 { // what toy lacks explains any invalid value too
		err = fmt.Errorf("%w: %s", ErrUnsupported, lacking[0])
	}
	return c, err
}

// readConfig reads the configuration as llama.cpp's deepseek2 loader does,
// listing the features the file uses that toy does not run yet (then the
// error may be the configuration's Validate, failing on them).
func readConfig(f *gguf.File) (Config, []string, error) {
	var c Config
	arch, err := f.Architecture()
	if err != nil {
		return c, nil, err
	}
	if arch != Arch {
		return c, nil, fmt.Errorf("deepseek2: architecture %q is not deepseek2", arch)
	}
	m := f.Meta(Arch)
	c.ContextLength = m.Uint("context_length")
	c.Embed = m.Uint("embedding_length")
	// Multi-token-prediction blocks (nextn) follow the trunk's; the
	// next-token model does not run them.
	c.Layers = m.Uint("block_count") - m.UintOr("nextn_predict_layers", 0)
	c.FFN = m.Uint("feed_forward_length")
	c.Heads = m.Uint("attention.head_count")
	c.NormEps = m.Float("attention.layer_norm_rms_epsilon")
	c.KVLoRARank = m.Uint("attention.kv_lora_rank")
	c.RopeDim = m.Uint("rope.dimension_count")
	if err := m.Err(); err != nil {
		return c, nil, err
	}
	if c.Heads <= 0 || c.Embed <= 0 {
		return c, nil, fmt.Errorf("deepseek2: %d heads, width %d", c.Heads, c.Embed)
	}
	c.QLoRARank = m.UintOr("attention.q_lora_rank", 0)
	// Newer files describe the absorbed attention (one key head of width
	// R+Dr, values of width R) in key_length and value_length, and the
	// heads' own widths in the *_mla keys; older ones only the latter, in
	// key_length and value_length.
	if m.Has("attention.key_length_mla") || m.Has("attention.value_length_mla") {
		c.SplitKVB = true
		c.KeyDim = m.Uint("attention.key_length_mla")
		c.ValueDim = m.Uint("attention.value_length_mla")
	} else {
		c.KeyDim = m.UintOr("attention.key_length", c.Embed/c.Heads)
		c.ValueDim = m.UintOr("attention.value_length", c.Embed/c.Heads)
	}
	c.DenseLayers = m.UintOr("leading_dense_block_count", 0)
	c.Experts = m.UintOr("expert_count", 0)
	var lacking []string
	if c.DenseLayers < c.Layers {
		c.ExpertsUsed = m.Uint("expert_used_count")
		c.ExpertFFN = m.Uint("expert_feed_forward_length")
		c.SharedExperts = m.Uint("expert_shared_count")
		c.ExpertWeightsScale = m.FloatOr("expert_weights_scale", 0)
		c.ExpertWeightsNorm = m.BoolOr("expert_weights_norm", false)
		c.ExpertGroups = m.UintOr("expert_group_count", 0)
		c.ExpertGroupsUsed = m.UintOr("expert_group_used_count", 0)
		switch g := m.UintOr("expert_gating_func", 0); g {
		case 0: // older files: softmax, but for GLM 4.7 Lite (as llama.cpp tells it)
			c.ExpertGating = "softmax"
			if (c.Layers == 47 || c.Layers == 48) && vocabOf(f) == 154880 {
				c.ExpertGating = "sigmoid"
			}
		case 1:
			c.ExpertGating = "softmax"
		case 2:
			c.ExpertGating = "sigmoid"
		default:
			c.ExpertGating = map[int]string{3: "softmax_weight", 4: "sqrt_softplus"}[g]
			lacking = append(lacking, fmt.Sprintf("expert gating function %d %s (toy runs softmax, 1, and sigmoid, 2)", g, c.ExpertGating))
		}
		_, err := f.Info(fmt.Sprintf("blk.%d.exp_probs_b.bias", c.DenseLayers))
		c.ExpertBias = err == nil
		if _, err := f.Info(fmt.Sprintf("blk.%d.ffn_gate_up_exps.weight", c.DenseLayers)); err == nil {
			lacking = append(lacking, "fused expert stacks (ffn_gate_up_exps)")
		}
	}
	c.RopeBase = m.FloatOr("rope.freq_base", 10000)
	typ := m.StringOr("rope.scaling.type", "linear")
	factor := m.FloatOr("rope.scaling.factor", m.FloatOr("rope.scale_linear", 0))
	c.RopeAttnFactor = m.FloatOr("rope.scaling.attn_factor", 0)
	c.YarnLogMul = m.FloatOr("rope.scaling.yarn_log_multiplier", 0)
	switch {
	case typ == "none" || factor == 0 || factor == 1: // the identity (YaRN's terms are all 1 then)
	case typ == "linear" || typ == "yarn":
		c.RopeScaling, c.RopeScaleFactor = typ, factor
	default:
		lacking = append(lacking, fmt.Sprintf("RoPE scaling %q", typ))
	}
	if c.RopeScaling == "yarn" {
		c.RopeOrigContext = m.UintOr("rope.scaling.original_context_length", c.ContextLength)
	}
	if m.FloatOr("attention.temperature_scale", 0) != 0 {
		lacking = append(lacking, "attention temperature tuning (attention.temperature_scale)")
	}
	if err := m.Err(); err != nil {
		return c, nil, err
	}
	c.VocabSize = vocabOf(f)
	_, err = f.Info("output.weight")
	c.TiedOutput = err != nil
	return c, lacking, c.Validate()
}

// vocabOf returns the rows of token_embd.weight, or 0.
func vocabOf(f *gguf.File) int {
	emb, err := f.Info("token_embd.weight")
	if err != nil || len(emb.Shape()) != 2 {
		return 0
	}
	return emb.Shape()[0]
}

// Validate checks that the numbers describe a buildable model.
func (c Config) Validate() error {
	const big = 1 << 20
	moe := c.DenseLayers < c.Layers
	switch {
	case c.VocabSize <= 0 || c.VocabSize > 1<<24:
		return fmt.Errorf("deepseek2: vocabulary size %d", c.VocabSize)
	case c.Embed <= 0 || c.Embed > big || c.FFN <= 0 || c.FFN > big:
		return fmt.Errorf("deepseek2: width %d, feed-forward width %d", c.Embed, c.FFN)
	case c.Layers <= 0 || c.Layers > 1024 || c.DenseLayers < 0 || c.DenseLayers > c.Layers:
		return fmt.Errorf("deepseek2: %d layers, the first %d dense", c.Layers, c.DenseLayers)
	case c.Heads <= 0 || c.Heads > 1024:
		return fmt.Errorf("deepseek2: %d heads", c.Heads)
	case c.QLoRARank < 0 || c.QLoRARank > big || c.KVLoRARank <= 0 || c.KVLoRARank > big:
		return fmt.Errorf("deepseek2: query rank %d, key/value rank %d", c.QLoRARank, c.KVLoRARank)
	case c.RopeDim <= 0 || c.RopeDim%2 != 0 || c.KeyDim <= c.RopeDim || c.KeyDim > big || c.ValueDim <= 0 || c.ValueDim > big:
		return fmt.Errorf("deepseek2: key heads of %d with %d rotated, value heads of %d", c.KeyDim, c.RopeDim, c.ValueDim)
	case c.ContextLength <= 0:
		return fmt.Errorf("deepseek2: context length %d", c.ContextLength)
	case !(c.NormEps > 0 && c.NormEps < 1):
		return fmt.Errorf("deepseek2: RMSNorm epsilon %g", c.NormEps)
	case !(c.RopeBase > 0):
		return fmt.Errorf("deepseek2: RoPE base %g", c.RopeBase)
	case c.RopeScaling != "" && c.RopeScaling != "linear" && c.RopeScaling != "yarn":
		return fmt.Errorf("deepseek2: RoPE scaling %q (toy runs linear and yarn)", c.RopeScaling)
	case c.RopeScaling != "" && !(c.RopeScaleFactor > 0 && c.RopeScaleFactor < 1e6):
		return fmt.Errorf("deepseek2: RoPE scaling factor %g", c.RopeScaleFactor)
	case c.RopeScaling == "yarn" && c.RopeOrigContext <= 0:
		return fmt.Errorf("deepseek2: YaRN over an original context of %d", c.RopeOrigContext)
	case !(c.RopeAttnFactor >= 0 && c.RopeAttnFactor < 100) || !(c.YarnLogMul >= 0 && c.YarnLogMul < 100):
		return fmt.Errorf("deepseek2: RoPE attention factor %g, YaRN log multiplier %g", c.RopeAttnFactor, c.YarnLogMul)
	case !moe:
		return nil
	case c.Experts <= 0 || c.Experts > 4096 || c.ExpertsUsed < 1 || c.ExpertsUsed > c.Experts || c.ExpertFFN <= 0 || c.ExpertFFN > big:
		return fmt.Errorf("deepseek2: %d experts, %d used, of width %d", c.Experts, c.ExpertsUsed, c.ExpertFFN)
	case c.SharedExperts < 0 || c.SharedExperts*c.ExpertFFN > big:
		return fmt.Errorf("deepseek2: %d shared experts", c.SharedExperts)
	case c.ExpertGating != "softmax" && c.ExpertGating != "sigmoid":
		return fmt.Errorf("deepseek2: expert gating %q (toy runs softmax and sigmoid)", c.ExpertGating)
	case !(c.ExpertWeightsScale >= 0 && c.ExpertWeightsScale < 1e6):
		return fmt.Errorf("deepseek2: expert weights scale %g", c.ExpertWeightsScale)
	case c.ExpertGroups > 1 && (c.Experts%c.ExpertGroups != 0 || c.ExpertGroupsUsed < 1 || c.ExpertGroupsUsed > c.ExpertGroups ||
		c.ExpertsUsed > c.ExpertGroupsUsed*(c.Experts/c.ExpertGroups)):
		return fmt.Errorf("deepseek2: %d experts used of %d in %d groups, %d of them used", c.ExpertsUsed, c.Experts, c.ExpertGroups, c.ExpertGroupsUsed)
	}
	return nil
}

// CacheWidth is the features the KV cache holds per position and layer:
// with attn_k_b and attn_v_b, the latent and the rotated key, R+Dr, which
// all heads share (toy caches them as the keys and again as the values);
// with attn_kv_b, every head's decompressed key and value, H·max(Dk, Dv).
func (c Config) CacheWidth() int {
	if c.SplitKVB {
		return c.KVLoRARank + c.RopeDim
	}
	return c.Heads * max(c.KeyDim, c.ValueDim)
}

// freqScale is the factor on every RoPE angle: 1/s for linear and YaRN
// scaling, else 1.
func (c Config) freqScale() float32 {
	if c.RopeScaling == "" {
		return 1
	}
	return 1 / c.RopeScaleFactor
}

// RoPEScaling returns the scaling tensor.RoPEWith applies to the rotated
// parts: linear, or YaRN with llama.cpp's ramp from 32 down to 1 rotations
// and, on cos and sin, the factor llama.cpp's context computes for
// deepseek2 (ropeAttnFactor).
func (c Config) RoPEScaling() tensor.RoPEScaling {
	s := tensor.RoPEScaling{FreqScale: c.freqScale(), AttnFactor: c.ropeAttnFactor()}
	if c.RopeScaling == "yarn" {
		s.ExtFactor, s.BetaFast, s.BetaSlow, s.OrigContext = 1, 32, 1, c.RopeOrigContext
	}
	return s
}

// mscaleAllDims is DeepSeek's mscale_all_dim: the file's
// yarn_log_multiplier over 0.1 (its converter writes 0.1·mscale_all_dim).
func (c Config) mscaleAllDims() float32 { return c.YarnLogMul / 0.1 }

// yarnMScale is YaRN's attention temperature for a stretch by s, with
// coefficient m: 1 + 0.1·m·ln s, or 1 when s ≤ 1.
func yarnMScale(s, m float32) float32 {
	if s <= 1 {
		return 1
	}
	return 0.1*m*log32(s) + 1
}

func log32(x float32) float32 { return float32(math.Log(float64(x))) }

// ropeAttnFactor is the factor a llama.cpp context puts on RoPE's cos and
// sin for a deepseek2 file (its yarn_attn_factor): with YaRN,
// m(s, a)/m(s, a) = 1 when the file has a yarn_log_multiplier (a =
// mscale_all_dim), else m(s, 1), divided by 1 + 0.1·ln s to cancel the
// temperature the rotation itself applies; times rope.scaling.attn_factor.
func (c Config) ropeAttnFactor() float32 {
	f := float32(1)
	if c.RopeScaling == "yarn" {
		s := 1 / c.freqScale()
		if a := c.mscaleAllDims(); a != 0 {
			f = yarnMScale(s, a) / yarnMScale(s, a)
		} else {
			f = yarnMScale(s, 1)
		}
		f *= 1 / (1 + 0.1*log32(s))
	}
	if c.RopeAttnFactor != 0 {
		f *= c.RopeAttnFactor
	}
	return f
}

// AttnScale is the factor on the attention scores q·k, as llama.cpp's
// deepseek2 graph computes it: with f the RoPE attention factor and s the
// stretch, f₀ = f·(1 + 0.1·ln s) undoes the cancellation, m = f₀·(1 +
// 0.1·mscale_all_dim·ln s), and the scale is m²/√Dk — √Dk of the whole
// key head, rotated part included. Without scaling it is 1/√Dk.
func (c Config) AttnScale() float32 {
	s := 1 / c.freqScale()
	f0 := c.ropeAttnFactor() * (1 + 0.1*log32(s))
	m := f0 * (1 + 0.1*c.mscaleAllDims()*log32(s))
	return m * m / float32(math.Sqrt(float64(c.KeyDim)))
}

// SetMetadata writes the configuration as GGUF metadata in llama.cpp's keys
// and types, as its converter writes them: with SplitKVB, key_length and
// value_length describe the absorbed attention (R+Dr, R, one key/value
// head) and the *_mla keys the heads.
func (c Config) SetMetadata(w *gguf.Writer) {
	a := Arch + "."
	w.SetString("general.architecture", Arch)
	w.SetUint32(a+"context_length", uint32(c.ContextLength))
	w.SetUint32(a+"embedding_length", uint32(c.Embed))
	w.SetUint32(a+"block_count", uint32(c.Layers))
	w.SetUint32(a+"feed_forward_length", uint32(c.FFN))
	w.SetUint32(a+"leading_dense_block_count", uint32(c.DenseLayers))
	w.SetUint32(a+"attention.head_count", uint32(c.Heads))
	w.SetFloat32(a+"attention.layer_norm_rms_epsilon", c.NormEps)
	w.SetUint32(a+"attention.q_lora_rank", uint32(c.QLoRARank))
	w.SetUint32(a+"attention.kv_lora_rank", uint32(c.KVLoRARank))
	if c.SplitKVB {
		w.SetUint32(a+"attention.head_count_kv", 1)
		w.SetUint32(a+"attention.key_length", uint32(c.KVLoRARank+c.RopeDim))
		w.SetUint32(a+"attention.value_length", uint32(c.KVLoRARank))
		w.SetUint32(a+"attention.key_length_mla", uint32(c.KeyDim))
		w.SetUint32(a+"attention.value_length_mla", uint32(c.ValueDim))
	} else {
		w.SetUint32(a+"attention.head_count_kv", uint32(c.Heads))
		w.SetUint32(a+"attention.key_length", uint32(c.KeyDim))
		w.SetUint32(a+"attention.value_length", uint32(c.ValueDim))
	}
	w.SetUint32(a+"rope.dimension_count", uint32(c.RopeDim))
	w.SetFloat32(a+"rope.freq_base", c.RopeBase)
	if c.RopeScaling != "" {
		w.SetString(a+"rope.scaling.type", c.RopeScaling)
		w.SetFloat32(a+"rope.scaling.factor", c.RopeScaleFactor)
	}
	if c.RopeScaling == "yarn" {
		w.SetUint32(a+"rope.scaling.original_context_length", uint32(c.RopeOrigContext))
	}
	if c.RopeAttnFactor != 0 {
		w.SetFloat32(a+"rope.scaling.attn_factor", c.RopeAttnFactor)
	}
	if c.YarnLogMul != 0 {
		w.SetFloat32(a+"rope.scaling.yarn_log_multiplier", c.YarnLogMul)
	}
	if c.DenseLayers < c.Layers {
		w.SetUint32(a+"expert_count", uint32(c.Experts))
		w.SetUint32(a+"expert_used_count", uint32(c.ExpertsUsed))
		w.SetUint32(a+"expert_feed_forward_length", uint32(c.ExpertFFN))
		w.SetUint32(a+"expert_shared_count", uint32(c.SharedExperts))
		w.SetUint32(a+"expert_gating_func", map[string]uint32{"softmax": 1, "sigmoid": 2}[c.ExpertGating])
		if c.ExpertWeightsScale != 0 {
			w.SetFloat32(a+"expert_weights_scale", c.ExpertWeightsScale)
		}
		if c.ExpertWeightsNorm {
			w.SetBool(a+"expert_weights_norm", true)
		}
		if c.ExpertGroups > 0 {
			w.SetUint32(a+"expert_group_count", uint32(c.ExpertGroups))
			w.SetUint32(a+"expert_group_used_count", uint32(c.ExpertGroupsUsed))
		}
	}
}
