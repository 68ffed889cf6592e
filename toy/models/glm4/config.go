// The flat configuration of a GLM-4 model, read from GGUF metadata and
// tensor shapes.

package glm4

import (
	"errors"
	"fmt"
	"slices"

	"github.com/toyml/toy/toy/gguf"
)

// Arch is the GGUF architecture of the dense models (GLM-4-0414); ArchMoE
// that of the mixtures of experts (GLM-4.5, GLM-4.5-Air, GLM-4.6).
const (
	Arch    = "glm4"
	ArchMoE = "glm4moe"
)

// Archs lists the GGUF architectures this package loads.
var Archs = []string{Arch, ArchMoE}

// ErrUnsupported marks files of this family that use features toy lacks.
var ErrUnsupported = errors.New("glm4: unsupported model feature")

// Config holds every hyperparameter of a GLM-4 model.
type Config struct {
	Arch          string // Arch or ArchMoE
	VocabSize     int    // V
	ContextLength int    // trained context length
	Embed         int    // D
	Layers        int    // L, the multi-token-prediction layers not counted
	// FFN is F, the width of the dense SwiGLUs: every layer's in glm4
	// (whose fused up projection has 2F rows), the leading DenseLayers'
	// in glm4moe.
	FFN int

	// H query heads and KV key/value heads of width Dh; RoPE turns the
	// first RopeDim features of each (adjacent pairs in glm4, NeoX pairs
	// in glm4moe).
	Heads, KVHeads, HeadDim, RopeDim int
	RopeBase                         float32 // θ base
	NormEps                          float32 // RMSNorm ε
	// QKVBias: the query, key and value projections have biases (every
	// GLM-4 release). QKNorm (glm4moe): queries and keys are RMS-normalised
	// per head before RoPE (GLM-4.5 355B).
	QKVBias, QKNorm bool

	// glm4moe: the first DenseLayers layers have a dense SwiGLU, the others
	// a mixture of Experts SwiGLUs of width ExpertFFN, ExpertsUsed a token,
	// chosen by σ(router logits) + exp_probs_b and weighted by the
	// unbiased σ — divided by their sum when ExpertWeightsNorm, times
	// ExpertWeightsScale (0 or 1: none) —, beside SharedExperts shared
	// experts (one SwiGLU of width SharedExperts·ExpertFFN, ungated).
	DenseLayers                                    int
	Experts, ExpertsUsed, ExpertFFN, SharedExperts int
	ExpertWeightsNorm                              bool
	ExpertWeightsScale                             float32

	// TiedOutput: the output head reuses the token embedding.
	TiedOutput bool
	// MTPLayers is the number of multi-token-prediction layers the file
	// holds after the L layers (nextn_predict_layers); toy skips them.
	MTPLayers int
}

// MoE reports whether the model is a mixture of experts (glm4moe).
func (c Config) MoE() bool { return c.Arch == ArchMoE }

// Dense reports whether layer l's feed-forward layer is a dense SwiGLU.
func (c Config) Dense(l int) bool { return !c.MoE() || l < c.DenseLayers }

// ConfigFromGGUF reads the configuration from f's metadata and tensor
// shapes. Files that need features toy lacks (M-RoPE, RoPE scaling, a fused
// attn_qkv, expert gating other than sigmoid, expert groups) are refused
// with ErrUnsupported.
func ConfigFromGGUF(f *gguf.File) (Config, error) {
	c, lacking, err := readConfig(f)
	if err == nil && len(lacking) > 0 {
		err = fmt.Errorf("%w: %s", ErrUnsupported, lacking[0])
	}
	return c, err
}

// readConfig reads the configuration as llama.cpp's glm4 and glm4moe loaders
// do, listing the features the file uses that toy does not run yet
// (describing a model needs no more).
func readConfig(f *gguf.File) (Config, []string, error) {
	var c Config
	arch, err := f.Architecture()
	if err != nil {
		return c, nil, err
	}
	if !slices.Contains(Archs, arch) {
		return c, nil, fmt.Errorf("glm4: architecture %q is not one of %v", arch, Archs)
	}
	c.Arch = arch
	m := f.Meta(arch)
	d, err := m.Decoder()
	if err != nil {
		return c, nil, err
	}
	c.ContextLength, c.Embed, c.FFN, c.Heads, c.KVHeads = d.Context, d.Embed, d.FFN, d.Heads, d.KVHeads
	c.MTPLayers = m.UintOr("nextn_predict_layers", 0)
	c.Layers = d.Layers - c.MTPLayers
	c.HeadDim = m.UintOr("attention.key_length", c.Embed/c.Heads)
	c.RopeDim = m.UintOr("rope.dimension_count", c.HeadDim)
	c.RopeBase = m.FloatOr("rope.freq_base", 10000)
	c.NormEps = m.Float("attention.layer_norm_rms_epsilon")
	var lacking []string
	if c.MoE() {
		c.Experts, c.ExpertsUsed = m.Uint("expert_count"), m.Uint("expert_used_count")
		c.SharedExperts = m.Uint("expert_shared_count")
		c.DenseLayers = m.UintOr("leading_dense_block_count", 0)
		c.ExpertFFN = m.UintOr("expert_feed_forward_length", 0)
		c.ExpertWeightsNorm = m.BoolOr("expert_weights_norm", false)
		c.ExpertWeightsScale = m.FloatOr("expert_weights_scale", 0)
		if g := m.UintOr("expert_gating_func", 2); g != 0 && g != 2 { // llama.cpp: none means sigmoid
			lacking = append(lacking, fmt.Sprintf("expert gating function %d (toy runs GLM-4.5's sigmoid, 2)", g))
		}
		if n := m.UintOr("expert_group_count", 0); n > 1 {
			lacking = append(lacking, fmt.Sprintf("expert routing in %d groups", n))
		}
	}
	typ := m.StringOr("rope.scaling.type", "linear")
	if factor := m.FloatOr("rope.scaling.factor", 0); typ != "none" && factor != 0 && factor != 1 {
		lacking = append(lacking, fmt.Sprintf("RoPE scaling %q by %g", typ, factor))
	}
	if err := m.Err(); err != nil {
		return c, nil, err
	}
	if c.MoE() && c.ExpertFFN == 0 && c.ExpertsUsed > 0 { // llama.cpp's fallback
		c.ExpertFFN = c.FFN / c.ExpertsUsed
	}
	if v := m.UintOr("attention.value_length", c.HeadDim); v != c.HeadDim {
		return c, nil, fmt.Errorf("glm4: attention keys %d and values %d wide (they must be equal)", c.HeadDim, v)
	}
	// GLM-4.1V and GLM-4.5V give M-RoPE sections: their rotation (in NeoX
	// pairs, the weights permuted to suit) differs from the text models'.
	if s, err := f.Int32s(m.Key("rope.dimension_sections")); err == nil && len(s) >= 2 && s[0] > 0 && s[1] > 0 {
		lacking = append(lacking, fmt.Sprintf("M-RoPE sections %v", s))
	}
	if hasTensor(f, "blk.0.attn_qkv.weight") {
		lacking = append(lacking, "a fused attn_qkv projection")
	}
	c.QKVBias = hasTensor(f, "blk.0.attn_q.bias")
	c.QKNorm = c.MoE() && hasTensor(f, "blk.0.attn_q_norm.weight")
	c.TiedOutput = !hasTensor(f, "output.weight")
	emb, err := f.Info("token_embd.weight")
	if err != nil {
		return c, nil, err
	}
	c.VocabSize = emb.Shape()[0]
	if err := c.Validate(); err != nil {
		return c, lacking, err
	}
	// llama.cpp takes each layer's query/key norms if present; toy all or
	// none, so a file that mixes them must not lose some silently.
	for l := 1; c.MoE() && l < c.Layers; l++ {
		p := blockPrefix(l)
		if hasTensor(f, p+"attn_q.weight") && hasTensor(f, p+"attn_q_norm.weight") != c.QKNorm { // a missing layer fails at load
			return c, lacking, fmt.Errorf("glm4: blk.%d and blk.0 differ in having attn_q_norm (toy runs all layers with it or none)", l)
		}
	}
	return c, lacking, nil
}

// hasTensor reports whether f holds the tensor name.
func hasTensor(f *gguf.File, name string) bool {
	_, err := f.Info(name)
	return err == nil
}

// Validate checks that the numbers describe a buildable model.
func (c Config) Validate() error {
	const big = 1 << 20
	switch {
	case !slices.Contains(Archs, c.Arch):
		return fmt.Errorf("glm4: architecture %q", c.Arch)
	case c.VocabSize <= 0 || c.VocabSize > 1<<24:
		return fmt.Errorf("glm4: vocabulary size %d", c.VocabSize)
	case c.Embed <= 0 || c.Embed > big || c.FFN < 0 || c.FFN > big || c.Arch == Arch && c.FFN == 0:
		return fmt.Errorf("glm4: width %d, feed-forward width %d", c.Embed, c.FFN)
	case c.Layers <= 0 || c.Layers > 1024 || c.MTPLayers < 0 || c.MTPLayers > 1024:
		return fmt.Errorf("glm4: %d layers (%d more for prediction)", c.Layers, c.MTPLayers)
	case c.Heads <= 0 || c.KVHeads <= 0 || c.Heads%c.KVHeads != 0 || c.Heads > 4096:
		return fmt.Errorf("glm4: %d heads with %d key/value heads", c.Heads, c.KVHeads)
	case c.HeadDim <= 0 || c.HeadDim > 4096 || c.RopeDim <= 0 || c.RopeDim > c.HeadDim || c.RopeDim%2 != 0:
		return fmt.Errorf("glm4: heads %d wide, RoPE over %d", c.HeadDim, c.RopeDim)
	case c.ContextLength <= 0:
		return fmt.Errorf("glm4: context length %d", c.ContextLength)
	case !(c.NormEps > 0 && c.NormEps < 1):
		return fmt.Errorf("glm4: RMSNorm epsilon %g", c.NormEps)
	case !(c.RopeBase > 1 && c.RopeBase < 1e12):
		return fmt.Errorf("glm4: RoPE base %g", c.RopeBase)
	case !c.MoE() && (c.QKNorm || c.DenseLayers != 0 || c.Experts != 0 || c.ExpertsUsed != 0 || c.ExpertFFN != 0 ||
		c.SharedExperts != 0 || c.ExpertWeightsNorm || c.ExpertWeightsScale != 0):
		return fmt.Errorf("glm4: a glm4 model with experts or query/key norms (they are glm4moe's)")
	case !c.MoE():
		return nil
	case c.DenseLayers < 0 || c.DenseLayers > c.Layers || c.DenseLayers > 0 && c.FFN == 0:
		return fmt.Errorf("glm4: the first %d of %d layers dense, of width %d", c.DenseLayers, c.Layers, c.FFN)
	case c.Experts < 1 || c.Experts > 1<<16 || c.ExpertsUsed < 1 || c.ExpertsUsed > c.Experts || c.ExpertFFN <= 0 || c.ExpertFFN > big:
		return fmt.Errorf("glm4: %d experts, %d a token, of width %d", c.Experts, c.ExpertsUsed, c.ExpertFFN)
	case c.SharedExperts < 0 || c.SharedExperts*c.ExpertFFN > big:
		return fmt.Errorf("glm4: %d shared experts of width %d", c.SharedExperts, c.ExpertFFN)
	case !(c.ExpertWeightsScale >= 0 && c.ExpertWeightsScale < 1e6):
		return fmt.Errorf("glm4: expert weights scale %g", c.ExpertWeightsScale)
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
	w.SetUint32(a+".feed_forward_length", uint32(c.FFN))
	w.SetUint32(a+".attention.head_count", uint32(c.Heads))
	w.SetUint32(a+".attention.head_count_kv", uint32(c.KVHeads))
	if c.HeadDim != c.Embed/c.Heads {
		w.SetUint32(a+".attention.key_length", uint32(c.HeadDim))
		w.SetUint32(a+".attention.value_length", uint32(c.HeadDim))
	}
	w.SetFloat32(a+".attention.layer_norm_rms_epsilon", c.NormEps)
	w.SetUint32(a+".rope.dimension_count", uint32(c.RopeDim))
	w.SetFloat32(a+".rope.freq_base", c.RopeBase)
	if c.MTPLayers > 0 {
		w.SetUint32(a+".nextn_predict_layers", uint32(c.MTPLayers))
	}
	if !c.MoE() {
		return
	}
	w.SetUint32(a+".leading_dense_block_count", uint32(c.DenseLayers))
	w.SetUint32(a+".expert_count", uint32(c.Experts))
	w.SetUint32(a+".expert_used_count", uint32(c.ExpertsUsed))
	w.SetUint32(a+".expert_feed_forward_length", uint32(c.ExpertFFN))
	w.SetUint32(a+".expert_shared_count", uint32(c.SharedExperts))
	w.SetUint32(a+".expert_gating_func", 2) // sigmoid
	w.SetBool(a+".expert_weights_norm", c.ExpertWeightsNorm)
	if c.ExpertWeightsScale != 0 {
		w.SetFloat32(a+".expert_weights_scale", c.ExpertWeightsScale)
	}
}
