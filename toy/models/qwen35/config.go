// The flat configuration of a Qwen3.5 model, read from GGUF metadata and
// tensor shapes.

package qwen35

import (
	"errors"
	"fmt"
	"slices"

	"github.com/toyml/toy/toy/gguf"
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
var ErrUnsupported = errors.New("qwen35: unsupported model feature")

// Config holds every hyperparameter of a Qwen3.5 model.
type Config struct {
	Arch          string // Arch, ArchMoE or ArchNext
	VocabSize     int    // V
	ContextLength int    // trained context length
	Embed         int    // D
	Layers        int    // L, the multi-token-prediction layers not counted
	FFN           int    // F (qwen35)

	// The attention layers: H query heads and KV key/value heads of width
	// Dh; RoPE turns the first RopeDim features of each (NeoX pairs).
	Heads, KVHeads, HeadDim, RopeDim int
	RopeBase                         float32 // θ base
	// Sections are the M-RoPE sections (rope.dimension_sections): which of
	// a position's 3 coordinates turns each pair. Text has all 3 equal, so
	// they do not change the result; they are kept to write the file back.
	Sections [4]int
	// Interval: every Interval-th layer (Interval−1, 2·Interval−1, …) is
	// attention, the others the delta rule (full_attention_interval).
	Interval int

	// The delta-rule layers: KHeads query/key heads and VHeads value heads
	// (a multiple of KHeads), all StateDim wide; a causal convolution of
	// ConvL taps.
	KHeads, VHeads, StateDim, ConvL int

	// qwen35moe and qwen3next: every layer's feed-forward is a mixture of Experts
	// SwiGLUs of width ExpertFFN, ExpertsUsed a token, chosen and weighted
	// by the softmax of the router's logits renormalised over the chosen,
	// beside a shared SwiGLU of width SharedFFN gated by σ(x·w_s).
	Experts, ExpertsUsed, ExpertFFN, SharedFFN int

	NormEps float32 // RMSNorm ε (also the delta rule's L2 norm ε)
	// TiedOutput: the output head reuses the token embedding.
	TiedOutput bool
	// MTPLayers is the number of multi-token-prediction layers the file
	// holds after the L layers (nextn_predict_layers); toy skips them.
	MTPLayers int
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
		return c, nil, fmt.Errorf("qwen35: architecture %q is not one of %v", arch, Archs)
	}
	c.Arch = arch
	m := f.Meta(arch)
	c.ContextLength, c.Embed = m.Uint("context_length"), m.Uint("embedding_length")
	if c.MoE() {
		c.Experts, c.ExpertsUsed = m.Uint("expert_count"), m.Uint("expert_used_count")
		c.ExpertFFN = m.Uint("expert_feed_forward_length")
		c.SharedFFN = m.UintOr("expert_shared_feed_forward_length", 0)
	} else {
		c.FFN = m.Uint("feed_forward_length")
	}
	c.MTPLayers = m.UintOr("nextn_predict_layers", 0)
	c.Layers = m.Uint("block_count") - c.MTPLayers
	c.Heads, c.KVHeads = m.Uint("attention.head_count"), m.Uint("attention.head_count_kv")
	c.HeadDim = m.Uint("attention.key_length")
	c.RopeDim = m.UintOr("rope.dimension_count", c.HeadDim)
	c.RopeBase = m.FloatOr("rope.freq_base", 10000000)
	c.NormEps = m.Float("attention.layer_norm_rms_epsilon")
	c.Interval = m.UintOr("full_attention_interval", 4)
	c.ConvL, c.StateDim = m.Uint("ssm.conv_kernel"), m.Uint("ssm.state_size")
	c.KHeads, c.VHeads = m.Uint("ssm.group_count"), m.Uint("ssm.time_step_rank")
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
	if t := m.StringOr("rope.scaling.type", "none"); t != "none" && m.FloatOr("rope.scaling.factor", 0) > 1 {
		lacking = append(lacking, fmt.Sprintf("RoPE scaling %q", t))
	}
	if _, err := f.Info("blk.0.ssm_ba.weight"); err == nil && arch != ArchNext {
		lacking = append(lacking, "a fused ssm_ba projection")
	}
	if _, err := f.Info("blk.0.ffn_gate_up_exps.weight"); err == nil {
		lacking = append(lacking, "fused ffn_gate_up_exps experts")
	}
	if sc := m.FloatOr("expert_weights_scale", 1); c.MoE() && sc != 0 && sc != 1 {
		lacking = append(lacking, fmt.Sprintf("expert weights scaled by %g", sc))
	}
	emb, err := f.Info("token_embd.weight")
	if err != nil {
		return c, nil, err
	}
	_, err = f.Info("output.weight")
	c.TiedOutput = err != nil
	c.VocabSize = emb.Shape()[0]
	return c, lacking, c.Validate()
}

// Validate checks that the numbers describe a buildable model.
func (c Config) Validate() error {
	const big = 1 << 20
	switch {
	case !slices.Contains(Archs, c.Arch):
		return fmt.Errorf("qwen35: architecture %q", c.Arch)
	case c.VocabSize <= 0 || c.VocabSize > 1<<24:
		return fmt.Errorf("qwen35: vocabulary size %d", c.VocabSize)
	case c.Embed <= 0 || c.Embed > big || c.Arch == Arch && (c.FFN <= 0 || c.FFN > big):
		return fmt.Errorf("qwen35: width %d, feed-forward width %d", c.Embed, c.FFN)
	case c.Arch == Arch && (c.Experts != 0 || c.ExpertsUsed != 0 || c.ExpertFFN != 0 || c.SharedFFN != 0):
		return fmt.Errorf("qwen35: a qwen35 model with experts (they are qwen35moe)")
	case c.MoE() && (c.FFN != 0 || c.Experts < 2 || c.Experts > 1<<16 || c.ExpertsUsed < 1 || c.ExpertsUsed > c.Experts ||
		c.ExpertFFN <= 0 || c.ExpertFFN > big || c.SharedFFN < 0 || c.SharedFFN > big):
		return fmt.Errorf("qwen35: %d experts, %d a token, width %d, shared %d (feed-forward width %d)", c.Experts, c.ExpertsUsed, c.ExpertFFN, c.SharedFFN, c.FFN)
	case c.Layers <= 0 || c.Layers > 1024 || c.MTPLayers < 0:
		return fmt.Errorf("qwen35: %d layers (%d for prediction)", c.Layers, c.MTPLayers)
	case c.Heads <= 0 || c.KVHeads <= 0 || c.Heads%c.KVHeads != 0 || c.Heads > 4096:
		return fmt.Errorf("qwen35: %d heads with %d key/value heads", c.Heads, c.KVHeads)
	case c.HeadDim <= 0 || c.HeadDim > 4096 || c.RopeDim <= 0 || c.RopeDim > c.HeadDim || c.RopeDim%2 != 0:
		return fmt.Errorf("qwen35: heads %d wide, RoPE over %d", c.HeadDim, c.RopeDim)
	case c.Interval < 1 || c.Interval > 1024:
		return fmt.Errorf("qwen35: an attention layer every %d", c.Interval)
	case c.KHeads <= 0 || c.VHeads <= 0 || c.VHeads%c.KHeads != 0 || c.VHeads > 4096:
		return fmt.Errorf("qwen35: delta rule with %d key heads and %d value heads", c.KHeads, c.VHeads)
	case c.StateDim <= 0 || c.StateDim > 1024:
		return fmt.Errorf("qwen35: delta-rule heads %d wide", c.StateDim)
	case c.ConvL < 2 || c.ConvL > 64:
		return fmt.Errorf("qwen35: a convolution of %d taps", c.ConvL)
	case c.ContextLength <= 0:
		return fmt.Errorf("qwen35: context length %d", c.ContextLength)
	case !(c.NormEps > 0 && c.NormEps < 1):
		return fmt.Errorf("qwen35: RMSNorm epsilon %g", c.NormEps)
	case !(c.RopeBase > 1 && c.RopeBase < 1e12):
		return fmt.Errorf("qwen35: RoPE base %g", c.RopeBase)
	}
	return nil
}

// SetMetadata writes the configuration as GGUF metadata, in llama.cpp's keys.
func (c Config) SetMetadata(w *gguf.Writer) {
	a := c.Arch
	w.SetString("general.architecture", a)
	w.SetUint32(a+".context_length", uint32(c.ContextLength))
	w.SetUint32(a+".embedding_length", uint32(c.Embed))
	w.SetUint32(a+".block_count", uint32(c.Layers+c.MTPLayers))
	if c.MoE() {
		w.SetUint32(a+".expert_count", uint32(c.Experts))
		w.SetUint32(a+".expert_used_count", uint32(c.ExpertsUsed))
		w.SetUint32(a+".expert_feed_forward_length", uint32(c.ExpertFFN))
		if c.SharedFFN > 0 {
			w.SetUint32(a+".expert_shared_feed_forward_length", uint32(c.SharedFFN))
		}
	} else {
		w.SetUint32(a+".feed_forward_length", uint32(c.FFN))
	}
	w.SetUint32(a+".attention.head_count", uint32(c.Heads))
	w.SetUint32(a+".attention.head_count_kv", uint32(c.KVHeads))
	w.SetUint32(a+".attention.key_length", uint32(c.HeadDim))
	w.SetUint32(a+".attention.value_length", uint32(c.HeadDim))
	w.SetFloat32(a+".attention.layer_norm_rms_epsilon", c.NormEps)
	w.SetUint32(a+".rope.dimension_count", uint32(c.RopeDim))
	w.SetFloat32(a+".rope.freq_base", c.RopeBase)
	if a != ArchNext { // Qwen3-Next's RoPE is plain
		sec := c.Sections
		if sec == [4]int{} { // every pair follows the text position
			sec[0] = c.RopeDim / 2
		}
		w.SetInt32s(a+".rope.dimension_sections", []int32{int32(sec[0]), int32(sec[1]), int32(sec[2]), int32(sec[3])})
	}
	w.SetUint32(a+".full_attention_interval", uint32(c.Interval))
	w.SetUint32(a+".ssm.conv_kernel", uint32(c.ConvL))
	w.SetUint32(a+".ssm.state_size", uint32(c.StateDim))
	w.SetUint32(a+".ssm.group_count", uint32(c.KHeads))
	w.SetUint32(a+".ssm.time_step_rank", uint32(c.VHeads))
	w.SetUint32(a+".ssm.inner_size", uint32(c.VHeads*c.StateDim))
	w.SetUint32(a+".vocab_size", uint32(c.VocabSize))
	if c.MTPLayers > 0 {
		w.SetUint32(a+".nextn_predict_layers", uint32(c.MTPLayers))
	}
}
