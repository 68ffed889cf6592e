// The flat configuration of a DeepSeek-V2 model, read from GGUF metadata,
// and the attention scale its YaRN scaling implies.

package deepseek2

import (
	"cmp"
	"fmt"
	"math"

	"github.com/toyml/toy/toy/gguf"
	"github.com/toyml/toy/toy/models"
	"github.com/toyml/toy/toy/tensor"
)

// Config holds every hyperparameter of a DeepSeek-V2 model, declared with
// its GGUF key (under "deepseek2.") and its card symbol. The fields without
// a key are read by hand (readConfig): from tensors, or keys whose meaning
// depends on others.
type Config struct {
	VocabSize     int `range:"[1, 1<<24]" card:"N_V, vocabulary size"`
	ContextLength int `gguf:"context_length" range:"[1, *]" card:"ℓ_max, trained context length"`
	Embed         int `gguf:"embedding_length" range:"[1, 1<<20]" card:"d_e, model width"`
	Layers        int `gguf:"block_count" range:"[1, 1024]" card:"L, layers"` // less the multi-token-prediction ones (nextn_predict_layers)
	// The first DenseLayers blocks have a dense SwiGLU of width FFN, the
	// rest a mixture of experts.
	DenseLayers int `gguf:"leading_dense_block_count,optional" range:"[0, Layers]" card:"L_d, leading layers with a dense MLP"`
	FFN         int `gguf:"feed_forward_length" range:"[1, 1<<20]" card:"d_mlp, dense MLP width"`

	Heads      int  `gguf:"attention.head_count" range:"[1, 1024]" card:"H, attention heads"`
	QLoraRank  int  `gguf:"attention.q_lora_rank,optional" range:"[0, 1<<20]" card:"r_q, query bottleneck width (0: none)"` // Rq; 0: queries straight from x (V2-Lite)
	KVLoraRank int  `gguf:"attention.kv_lora_rank" range:"[1, 1<<20]" card:"r_kv, key/value latent width"`                  // R
	KeyDim     int  `range:"[1, 1<<20]" card:"d_k, query/key head width"`                                                   // Dk = Dn + Dr
	ValueDim   int  `range:"[1, 1<<20]" card:"d_v, value head width"`                                                       // Dv
	RopeDim    int  `gguf:"rope.dimension_count" range:"[1, KeyDim)" multiple:"2" card:"d_r, rotated features at the end of each query/key head"`
	SplitKVB   bool `card:"split, W_kb, W_vb stored apart (attn_k_b, attn_v_b), not as attn_kv_b"` // newer converters

	RopeBase   float32 `gguf:"rope.freq_base,optional" range:"(0, *]" card:"θ_rope, RoPE frequency base"`
	NormEps    float32 `gguf:"attention.layer_norm_rms_epsilon" range:"(0, 1)" card:"ε, RMSNorm epsilon"`
	TiedOutput bool    `card:"tied, the unembedding is the token embedding (W_u = W_eᵀ)"`

	// The mixture of experts: the router's scores are a softmax (V2) or a
	// sigmoid each (V3, whose exp_probs_b bias chooses the experts: ExpertBias);
	// the k weights are divided by their sum when ExpertWeightsNorm, times
	// ExpertWeightsScale (0 or 1: none); with ExpertGroups > 1 a token's
	// experts come from its ExpertGroupsUsed best groups.
	Experts            int     `gguf:"expert_count,optional" card:"E, routed experts per MoE layer"`
	ExpertsUsed        int     `gguf:"expert_used_count,optional" card:"k, experts run per token"`
	ExpertFFN          int     `gguf:"expert_feed_forward_length,optional" card:"d_exp, expert width"`
	SharedExperts      int     `gguf:"expert_shared_count,optional" card:"E_s, shared experts (one SwiGLU of width E_s·d_exp)"`
	ExpertGating       string  `card:"gate, router scores: softmax over the experts, or a sigmoid each"`
	ExpertBias         bool    `card:"bias, a bias b^l on the scores chooses the experts"`
	ExpertWeightsNorm  bool    `gguf:"expert_weights_norm,optional" card:"norm, the k weights are divided by their sum"`
	ExpertWeightsScale float32 `gguf:"expert_weights_scale,optional" card:"s_w, the k weights are multiplied by s_w (0: 1)"`
	ExpertGroups       int     `gguf:"expert_group_count,optional" card:"G, expert groups (≤ 1: no group-limited routing)"`
	ExpertGroupsUsed   int     `gguf:"expert_group_used_count,optional" card:"G_u, groups a token's experts come from"`

	// RoPE scaling: "" (none), "linear" or "yarn" by RopeScale over
	// RopeOrigContext positions; RopeAttnFactor (0: 1) multiplies cos and
	// sin; YarnLogMul, 0.1·mscale_all_dim, enlarges the attention scale.
	RopeScaling     string  `card:"scaling, RoPE scaling for a longer context"`
	RopeScale       float32 `card:"s_rope, RoPE's stretch: linear divides every angle by it, YaRN stretches by it"`
	RopeOrigContext int     `card:"ℓ_orig, context before the stretch (YaRN)"`
	RopeAttnFactor  float32 `gguf:"rope.scaling.attn_factor,optional" range:"[0, 100)" card:"m_rope, RoPE's cos and sin are multiplied by m_rope"`
	YarnLogMul      float32 `gguf:"rope.scaling.yarn_log_multiplier,optional" range:"[0, 100)" card:"μ, 0.1·mscale_all_dim: enlarges the attention scale under YaRN"`
}

// Arch is the GGUF architecture this package loads.
const Arch = "deepseek2"

// ErrUnsupported marks DeepSeek-V2 files that use features toy lacks.
var ErrUnsupported = models.ErrUnsupported

// MoE reports whether any layer has a mixture of experts.
func (c Config) MoE() bool { return c.DenseLayers < c.Layers }

// ConfigFromGGUF reads the configuration from f's metadata and tensor
// shapes. Files that need features toy lacks (expert gating other than
// softmax and sigmoid, fused gate-up expert stacks, attention temperature
// tuning, RoPE scaling other than linear and YaRN) are refused with
// ErrUnsupported.
func ConfigFromGGUF(f *gguf.File) (Config, error) {
	c, lacking, err := readConfig(f)
	return c, cmp.Or(err, models.Unsupported(Arch, lacking))
}

// readConfig reads the configuration as llama.cpp's deepseek2 loader does,
// listing the features the file uses that toy does not run yet (describing
// a model needs no more; then the configuration is not validated, as they
// explain any invalid value).
func readConfig(f *gguf.File) (Config, []string, error) {
	c := Config{RopeBase: 10000}
	if err := models.ReadConfig(f, Arch, &c); err != nil {
		return c, nil, err
	}
	if c.Heads <= 0 || c.Embed <= 0 {
		return c, nil, fmt.Errorf("deepseek2: %d heads, width %d", c.Heads, c.Embed)
	}
	m := f.Meta(Arch)
	c.Layers -= m.UintOr("nextn_predict_layers", 0) // the next-token model does not run them
	// Newer files describe the absorbed attention (one key head of width
	// R+Dr, values of width R) in key_length and value_length, and the
	// heads' own widths in the *_mla keys; older ones only the latter, in
	// key_length and value_length.
	if c.SplitKVB = m.Has("attention.key_length_mla") || m.Has("attention.value_length_mla"); c.SplitKVB {
		c.KeyDim, c.ValueDim = m.Uint("attention.key_length_mla"), m.Uint("attention.value_length_mla")
	} else {
		c.KeyDim, c.ValueDim = m.UintOr("attention.key_length", c.Embed/c.Heads), m.UintOr("attention.value_length", c.Embed/c.Heads)
	}
	var lacking []string
	if c.MoE() {
		m.Uint("expert_used_count") // llama.cpp's required keys
		m.Uint("expert_feed_forward_length")
		m.Uint("expert_shared_count")
		switch g := m.UintOr("expert_gating_func", 0); g {
		case 0: // older files: softmax, but for GLM 4.7 Lite (as llama.cpp tells it)
			c.ExpertGating = "softmax"
			if (c.Layers == 47 || c.Layers == 48) && c.VocabSize == 154880 {
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
		c.ExpertBias = models.HasTensor(f, fmt.Sprintf("blk.%d.exp_probs_b.bias", c.DenseLayers))
		if models.HasTensor(f, fmt.Sprintf("blk.%d.ffn_gate_up_exps.weight", c.DenseLayers)) {
			lacking = append(lacking, "fused expert stacks (ffn_gate_up_exps)")
		}
	}
	typ := m.StringOr("rope.scaling.type", "linear")
	factor := m.FloatOr("rope.scaling.factor", m.FloatOr("rope.scale_linear", 0))
	switch {
	case typ == "none" || factor == 0 || factor == 1: // the identity (YaRN's terms are all 1 then)
	case typ == "linear" || typ == "yarn":
		c.RopeScaling, c.RopeScale = typ, factor
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
	if len(lacking) > 0 {
		return c, lacking, nil
	}
	return c, nil, c.Validate()
}

// Validate checks that the numbers describe a buildable model: the declared
// ranges, then how they fit together, and the experts' numbers in a model
// with experts.
func (c Config) Validate() error {
	if err := models.CheckRanges(Arch, c); err != nil {
		return err
	}
	const big = 1 << 20
	switch {
	case c.RopeScaling != "" && c.RopeScaling != "linear" && c.RopeScaling != "yarn":
		return fmt.Errorf("deepseek2: RoPE scaling %q (toy runs linear and yarn)", c.RopeScaling)
	case c.RopeScaling != "" && !(c.RopeScale > 0 && c.RopeScale < 1e6):
		return fmt.Errorf("deepseek2: RoPE scaling factor %g", c.RopeScale)
	case c.RopeScaling == "yarn" && c.RopeOrigContext <= 0:
		return fmt.Errorf("deepseek2: YaRN over an original context of %d", c.RopeOrigContext)
	case !c.MoE():
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

// SetMetadata writes the configuration as GGUF metadata in llama.cpp's keys
// and types, as its converter writes them: with SplitKVB, key_length and
// value_length describe the absorbed attention (R+Dr, R, one key/value
// head) and the *_mla keys the heads.
func (c Config) SetMetadata(w *gguf.Writer) {
	a := Arch + "."
	w.SetConfig(Arch, c)
	w.SetUint32(a+"leading_dense_block_count", uint32(c.DenseLayers)) // llama.cpp wants these even at 0
	w.SetUint32(a+"attention.q_lora_rank", uint32(c.QLoraRank))
	kvHeads, k, v := c.Heads, c.KeyDim, c.ValueDim
	if c.SplitKVB {
		kvHeads, k, v = 1, c.KVLoraRank+c.RopeDim, c.KVLoraRank
		w.SetUint32(a+"attention.key_length_mla", uint32(c.KeyDim))
		w.SetUint32(a+"attention.value_length_mla", uint32(c.ValueDim))
	}
	w.SetUint32(a+"attention.head_count_kv", uint32(kvHeads))
	w.SetUint32(a+"attention.key_length", uint32(k))
	w.SetUint32(a+"attention.value_length", uint32(v))
	if c.RopeScaling != "" {
		w.SetString(a+"rope.scaling.type", c.RopeScaling)
		w.SetFloat32(a+"rope.scaling.factor", c.RopeScale)
	}
	if c.RopeScaling == "yarn" {
		w.SetUint32(a+"rope.scaling.original_context_length", uint32(c.RopeOrigContext))
	}
	if c.MoE() {
		w.SetUint32(a+"expert_shared_count", uint32(c.SharedExperts))
		w.SetUint32(a+"expert_gating_func", map[string]uint32{"softmax": 1, "sigmoid": 2}[c.ExpertGating])
	}
}

// CacheWidth is the features the KV cache holds per position and layer:
// with attn_k_b and attn_v_b, the latent and the rotated key, R+Dr, which
// all heads share (toy caches them as the keys and again as the values);
// with attn_kv_b, every head's decompressed key and value, H·max(Dk, Dv).
func (c Config) CacheWidth() int {
	if c.SplitKVB {
		return c.KVLoraRank + c.RopeDim
	}
	return c.Heads * max(c.KeyDim, c.ValueDim)
}

// freqScale is the factor on every RoPE angle: 1/s for linear and YaRN
// scaling, else 1.
func (c Config) freqScale() float32 {
	if c.RopeScaling == "" {
		return 1
	}
	return 1 / c.RopeScale
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
