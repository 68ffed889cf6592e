// The flat configuration of a Qwen3.5 model, declared with its GGUF keys
// and its card symbols.

package qwen35

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/toyml/toy/toy/gguf"
	"github.com/toyml/toy/toy/models"
)

// Arch is the GGUF architecture of the dense models; ArchMoE that of the
// mixtures of experts (Qwen3.5-35B-A3B, 122B-A10B, 397B-A17B); ArchNext
// that of Qwen3-Next (80B-A3B), their predecessor: the same layers, with
// each value head reading the key head of its group (h/(Hv/Hk), not
// h mod Hk) and β and α from one projection.
const (
	Arch     = "qwen35"
	ArchMoE  = "qwen35moe"
	ArchNext = "qwen3next"
)

// Archs lists the GGUF architectures this package loads.
var Archs = []string{Arch, ArchMoE, ArchNext}

// ErrUnsupported marks files of this family that use features toy lacks.
var ErrUnsupported = models.ErrUnsupported

// Config holds every hyperparameter of a Qwen3.5 model, declared with its
// GGUF key (under the architecture's name) and its card symbol.
type Config struct {
	Arch          string // Arch, ArchMoE or ArchNext
	VocabSize     int    `range:"[1, 1<<24]" card:"N_V, vocabulary size"`
	ContextLength int    `gguf:"context_length" range:"[1, *]" card:"ℓ_max, trained context length"`
	Embed         int    `gguf:"embedding_length" range:"[1, 1<<20]" card:"d_e, model width"`
	Layers        int    `gguf:"block_count" range:"[1, 1024]" card:"L, layers"`                                   // the multi-token-prediction layers not counted
	FFN           int    `gguf:"feed_forward_length,optional" range:"[0, 1<<20]" card:"d_mlp, feed-forward width"` // qwen35 only

	// qwen35moe and qwen3next: every layer's feed-forward is a mixture of
	// Experts SwiGLUs of width ExpertFFN, ExpertsUsed a token, chosen and
	// weighted by the softmax of the router's logits renormalised over the
	// chosen, beside a shared SwiGLU of width SharedFFN gated by σ(x·w_s).
	Experts     int `gguf:"expert_count,optional" range:"[0, 1<<16]" card:"E, experts in each layer's mixture"`
	ExpertsUsed int `gguf:"expert_used_count,optional" range:"[0, Experts]" card:"k_e, experts run per token"`
	ExpertFFN   int `gguf:"expert_feed_forward_length,optional" range:"[0, 1<<20]" card:"d_exp, each expert's feed-forward width"`
	SharedFFN   int `gguf:"expert_shared_feed_forward_length,optional" range:"[0, 1<<20]" card:"d_sh, the shared expert's feed-forward width (0: none)"`

	// Every Interval-th layer (Interval−1, 2·Interval−1, …) is attention,
	// the others the delta rule.
	Interval int `gguf:"full_attention_interval,optional" range:"[1, 1024]" card:"p, layer l is attention when p divides l (counting from 1), else the delta rule"`

	// The attention layers: H query heads and KV key/value heads of width
	// Dh; RoPE turns the first RopeDim features of each (NeoX pairs).
	Heads    int     `gguf:"attention.head_count" range:"[1, 4096]" multiple:"KVHeads" card:"H, query heads of the attention layers"`
	KVHeads  int     `gguf:"attention.head_count_kv" range:"[1, *]" card:"H_kv, key/value heads of the attention layers"`
	HeadDim  int     `gguf:"attention.key_length" range:"[1, 4096]" card:"d_h, attention head width"`
	RopeDim  int     `gguf:"rope.dimension_count,optional" default:"HeadDim" range:"[1, HeadDim]" multiple:"2" card:"d_rope, features of each head RoPE turns"`
	RopeBase float32 `gguf:"rope.freq_base,optional" range:"(1, 1e12)" card:"θ_rope, RoPE frequency base"`
	// Sections are the M-RoPE sections (rope.dimension_sections): which of
	// a position's 3 coordinates turns each pair. Text has all 3 equal, so
	// they do not change the result; they are kept to write the file back.
	Sections [4]int

	// The delta-rule layers: KHeads query/key heads and VHeads value heads
	// (a multiple of KHeads), all StateDim wide; a causal convolution of
	// ConvTaps taps.
	KHeads   int `gguf:"ssm.group_count" range:"[1, *]" card:"H_k, query/key heads of the delta rule"`
	VHeads   int `gguf:"ssm.time_step_rank" range:"[1, 4096]" multiple:"KHeads" card:"H_v, value heads of the delta rule, each reading one key head"`
	StateDim int `gguf:"ssm.state_size" range:"[1, 1024]" card:"d_s, width of the delta rule's heads"`
	ConvTaps int `gguf:"ssm.conv_kernel" range:"[2, 64]" card:"k, taps of the causal convolution before the delta rule"`

	NormEps    float32 `gguf:"attention.layer_norm_rms_epsilon" range:"(0, 1)" card:"ε, RMSNorm and L2-norm epsilon"` // also the delta rule's L2 norm ε
	TiedOutput bool    `card:"tied, the unembedding is the token embedding (W_u = W_eᵀ)"`
	// MTPLayers is the number of multi-token-prediction layers the file
	// holds after the L layers; toy skips them.
	MTPLayers int `gguf:"nextn_predict_layers,optional" range:"[0, *]" card:"L_mtp, multi-token-prediction layers in the file (not run)"`
}

// MoE reports whether the feed-forward layers are mixtures of experts.
func (c Config) MoE() bool { return c.Arch != Arch }

// Grouped reports whether value head h reads key head h/(Hv/Hk) (the heads
// of a group side by side: Qwen3-Next) rather than h mod Hk (Qwen3.5, whose
// files llama.cpp's converter reorders so).
func (c Config) Grouped() bool { return c.Arch == ArchNext }

// Recurrent reports whether layer l is a delta-rule layer.
func (c Config) Recurrent(l int) bool { return (l+1)%c.Interval != 0 }

// ConvChannels returns C = 2·Hk·Ds + Hv·Ds, the convolved channels.
func (c Config) ConvChannels() int { return (2*c.KHeads + c.VHeads) * c.StateDim }

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
	arch, err := models.ArchIn(f, "qwen35", Archs)
	c := Config{Arch: arch, RopeBase: 10000000, Interval: 4}
	if err != nil {
		return c, nil, err
	}
	if err := models.ReadConfig(f, arch, &c); err != nil {
		return c, nil, err
	}
	if c.MoE() { // each kind reads only its own feed-forward keys
		c.FFN = 0
	} else {
		c.Experts, c.ExpertsUsed, c.ExpertFFN, c.SharedFFN = 0, 0, 0, 0
	}
	c.Layers -= c.MTPLayers // block_count counts them
	m := f.Meta(arch)
	inner := m.Uint("ssm.inner_size")
	if err := m.Err(); err != nil {
		return c, nil, err
	}
	if v := m.UintOr("attention.value_length", c.HeadDim); v != c.HeadDim {
		return c, nil, fmt.Errorf("qwen35: attention keys %d and values %d wide (they must be equal)", c.HeadDim, v)
	}
	if inner != c.VHeads*c.StateDim {
		return c, nil, fmt.Errorf("qwen35: ssm.inner_size %d is not %d value heads × %d", inner, c.VHeads, c.StateDim)
	}
	if s, err := f.Int32s(m.Key("rope.dimension_sections")); err == nil {
		for i := range min(len(s), 4) {
			c.Sections[i] = int(s[i])
		}
	}
	var lacking []string
	if m.Has("attention.recurrent_layers") {
		lacking = append(lacking, "a layer pattern given by attention.recurrent_layers")
	}
	lacking = append(lacking, models.RoPEScalingLacking(m, "none")...)
	if models.HasTensor(f, "blk.0.ssm_ba.weight") && arch != ArchNext {
		lacking = append(lacking, "a fused ssm_ba projection")
	}
	if models.HasTensor(f, "blk.0.ffn_gate_up_exps.weight") {
		lacking = append(lacking, "fused ffn_gate_up_exps experts")
	}
	if sc := m.FloatOr("expert_weights_scale", 1); c.MoE() && sc != 0 && sc != 1 {
		lacking = append(lacking, fmt.Sprintf("expert weights scaled by %g", sc))
	}
	return c, lacking, c.Validate()
}

// Validate checks that the numbers describe a buildable model: the declared
// ranges, then how they fit together.
func (c Config) Validate() error {
	if err := models.CheckRanges(Arch, c); err != nil {
		return err
	}
	switch {
	case !slices.Contains(Archs, c.Arch):
		return fmt.Errorf("qwen35: architecture %q", c.Arch)
	case c.Arch == Arch && c.FFN == 0:
		return fmt.Errorf("qwen35: feed-forward width 0")
	case c.Arch == Arch && (c.Experts != 0 || c.ExpertsUsed != 0 || c.ExpertFFN != 0 || c.SharedFFN != 0):
		return fmt.Errorf("qwen35: a qwen35 model with experts (they are qwen35moe)")
	case c.MoE() && (c.FFN != 0 || c.Experts < 2 || c.ExpertsUsed < 1 || c.ExpertFFN == 0):
		return fmt.Errorf("qwen35: %d experts, %d a token, width %d, shared %d (feed-forward width %d)", c.Experts, c.ExpertsUsed, c.ExpertFFN, c.SharedFFN, c.FFN)
	}
	return nil
}

// SetMetadata writes the configuration as GGUF metadata, in llama.cpp's
// keys: the declared ones, and those a tag cannot say.
func (c Config) SetMetadata(w *gguf.Writer) {
	a := c.Arch
	w.SetConfig(a, c)
	w.SetUint32(a+".block_count", uint32(c.Layers+c.MTPLayers))
	w.SetUint32(a+".attention.value_length", uint32(c.HeadDim))
	w.SetUint32(a+".ssm.inner_size", uint32(c.VHeads*c.StateDim))
	w.SetUint32(a+".vocab_size", uint32(c.VocabSize))
	if a != ArchNext { // Qwen3-Next's RoPE is plain
		sec := c.Sections
		if sec == [4]int{} { // every pair follows the text position
			sec[0] = c.RopeDim / 2
		}
		w.SetInt32s(a+".rope.dimension_sections", []int32{int32(sec[0]), int32(sec[1]), int32(sec[2]), int32(sec[3])})
	}
}
