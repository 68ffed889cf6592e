// The flat configuration of a GLM-4 model, read from GGUF metadata and
// tensor shapes.

package glm4

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/toyml/toy/toy/gguf"
	"github.com/toyml/toy/toy/models"
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
var ErrUnsupported = models.ErrUnsupported

// Config holds every hyperparameter of a GLM-4 model, declared with its
// GGUF key (under "glm4." or "glm4moe.") and its card symbol. The fields
// without a key are read by hand (readConfig): from tensors, or with
// defaults that depend on other keys.
type Config struct {
	Arch          string // Arch or ArchMoE
	VocabSize     int    `range:"[1, 1<<24]" card:"N_V, vocabulary size"`
	ContextLength int    `gguf:"context_length" range:"[1, *]" card:"ℓ_max, trained context length"`
	Embed         int    `gguf:"embedding_length" range:"[1, 1<<20]" card:"d_e, model width"`
	Layers        int    `gguf:"block_count" range:"[1, 1024]" card:"L, layers"` // the multi-token-prediction layers not counted
	// FFN is the width of the dense SwiGLUs: every layer's in glm4 (whose
	// fused up projection has 2F rows), the leading DenseLayers' in glm4moe.
	FFN int `gguf:"feed_forward_length" range:"[0, 1<<20]" card:"d_mlp, width of the dense SwiGLUs"`

	// H query heads and KV key/value heads of width Dh; RoPE turns the
	// first RopeDim features of each (adjacent pairs in glm4, NeoX pairs
	// in glm4moe).
	Heads    int     `gguf:"attention.head_count" range:"[1, 4096]" multiple:"KVHeads" card:"H, query heads"`
	KVHeads  int     `gguf:"attention.head_count_kv,optional" default:"Heads" range:"[1, *]" card:"H_kv, key/value heads (grouped-query attention when < H)"`
	HeadDim  int     `range:"[1, 4096]" card:"d_h, head width"`
	RopeDim  int     `range:"[1, HeadDim]" multiple:"2" card:"d_rope, features of each head RoPE turns"`
	RopeBase float32 `gguf:"rope.freq_base,optional" range:"(1, 1e12)" card:"θ_rope, RoPE frequency base"`
	NormEps  float32 `gguf:"attention.layer_norm_rms_epsilon" range:"(0, 1)" card:"ε, RMSNorm epsilon"`
	// QKVBias: the query, key and value projections have biases (every
	// GLM-4 release).
	QKVBias    bool `card:"bias, the query, key and value projections have biases"`
	TiedOutput bool `card:"tied, the unembedding is the token embedding (W_u = W_eᵀ)"`

	// glm4moe: queries and keys RMS-normalised per head before RoPE
	// (GLM-4.5 355B: QKNorm); the first DenseLayers layers have a dense
	// SwiGLU, the others a mixture of Experts SwiGLUs of width ExpertFFN,
	// ExpertsUsed a token, chosen by σ(router logits) + exp_probs_b and
	// weighted by the unbiased σ — divided by their sum when
	// ExpertWeightsNorm, times ExpertWeightsScale (0 or 1: none) —, beside
	// SharedExperts shared experts (one SwiGLU of width
	// SharedExperts·ExpertFFN, ungated).
	QKNorm             bool    `card:"qk_norm, query and key heads are RMS-normalised before RoPE"`
	DenseLayers        int     `gguf:"leading_dense_block_count,optional" range:"[0, Layers]" card:"L_d, the first L_d layers have a dense SwiGLU, the others experts"`
	Experts            int     `gguf:"expert_count,optional" range:"[0, 1<<16]" card:"E, experts in each mixture"`
	ExpertsUsed        int     `gguf:"expert_used_count,optional" range:"[0, Experts]" card:"k_e, experts run per token"`
	ExpertFFN          int     `gguf:"expert_feed_forward_length,optional" range:"[0, 1<<20]" card:"d_exp, each expert's width"`
	SharedExperts      int     `gguf:"expert_shared_count,optional" range:"[0, *]" card:"E_s, shared experts, one SwiGLU of width E_s·d_exp"`
	ExpertWeightsNorm  bool    `gguf:"expert_weights_norm,optional" card:"norm_w, the chosen experts' weights are divided by their sum"`
	ExpertWeightsScale float32 `gguf:"expert_weights_scale,optional" range:"[0, 1e6)" card:"λ, the chosen experts' weights are multiplied by λ (0 means 1)"`

	// MTPLayers is the number of multi-token-prediction layers the file
	// holds after the L layers; toy skips them.
	MTPLayers int `gguf:"nextn_predict_layers,optional" range:"[0, 1024]" card:"L_mtp, multi-token-prediction layers in the file (not run)"`
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
	return c, cmp.Or(err, models.Unsupported(c.Arch, lacking))
}

// readConfig reads the configuration as llama.cpp's glm4 and glm4moe loaders
// do, listing the features the file uses that toy does not run yet
// (describing a model needs no more).
func readConfig(f *gguf.File) (Config, []string, error) {
	arch, err := models.ArchIn(f, "glm4", Archs)
	c := Config{Arch: arch, RopeBase: 10000}
	if err != nil {
		return c, nil, err
	}
	if err := models.ReadConfig(f, arch, &c); err != nil {
		return c, nil, err
	}
	m := f.Meta(arch)
	c.Layers -= c.MTPLayers
	c.HeadDim = m.UintOr("attention.key_length", c.Embed/max(c.Heads, 1))
	c.RopeDim = m.UintOr("rope.dimension_count", c.HeadDim)
	var lacking []string
	if c.MoE() {
		m.Uint("expert_count") // llama.cpp's required keys
		m.Uint("expert_used_count")
		m.Uint("expert_shared_count")
		if c.ExpertFFN == 0 && c.ExpertsUsed > 0 { // llama.cpp's fallback
			c.ExpertFFN = c.FFN / c.ExpertsUsed
		}
		if g := m.UintOr("expert_gating_func", 2); g != 0 && g != 2 { // llama.cpp: none means sigmoid
			lacking = append(lacking, fmt.Sprintf("expert gating function %d (toy runs GLM-4.5's sigmoid, 2)", g))
		}
		if n := m.UintOr("expert_group_count", 0); n > 1 {
			lacking = append(lacking, fmt.Sprintf("expert routing in %d groups", n))
		}
	}
	lacking = append(lacking, models.RoPEScalingLacking(m, "linear")...)
	if err := m.Err(); err != nil {
		return c, nil, err
	}
	if v := m.UintOr("attention.value_length", c.HeadDim); v != c.HeadDim {
		return c, nil, fmt.Errorf("glm4: attention keys %d and values %d wide (they must be equal)", c.HeadDim, v)
	}
	// GLM-4.1V and GLM-4.5V give M-RoPE sections: their rotation (in NeoX
	// pairs, the weights permuted to suit) differs from the text models'.
	if s, err := f.Int32s(m.Key("rope.dimension_sections")); err == nil && len(s) >= 2 && s[0] > 0 && s[1] > 0 {
		lacking = append(lacking, fmt.Sprintf("M-RoPE sections %v", s))
	}
	if models.HasTensor(f, "blk.0.attn_qkv.weight") {
		lacking = append(lacking, "a fused attn_qkv projection")
	}
	c.QKVBias = models.HasTensor(f, "blk.0.attn_q.bias")
	c.QKNorm = c.MoE() && models.HasTensor(f, "blk.0.attn_q_norm.weight")
	if err := c.Validate(); err != nil {
		return c, lacking, err
	}
	// llama.cpp takes each layer's query/key norms if present; toy all or
	// none, so a file that mixes them must not lose some silently.
	for l := 1; c.MoE() && l < c.Layers; l++ {
		p := fmt.Sprintf("blk.%d.", l)
		if models.HasTensor(f, p+"attn_q.weight") && models.HasTensor(f, p+"attn_q_norm.weight") != c.QKNorm { // a missing layer fails at load
			return c, lacking, fmt.Errorf("glm4: blk.%d and blk.0 differ in having attn_q_norm (toy runs all layers with it or none)", l)
		}
	}
	return c, lacking, nil
}

// Validate checks that the numbers describe a buildable model: the
// architecture, the declared ranges, then how they fit together.
func (c Config) Validate() error {
	if !slices.Contains(Archs, c.Arch) {
		return fmt.Errorf("glm4: architecture %q", c.Arch)
	}
	if err := models.CheckRanges(c.Arch, c); err != nil {
		return err
	}
	switch {
	case c.Arch == Arch && c.FFN == 0:
		return fmt.Errorf("glm4: width %d, feed-forward width %d", c.Embed, c.FFN)
	case !c.MoE() && (c.QKNorm || c.DenseLayers != 0 || c.Experts != 0 || c.ExpertsUsed != 0 || c.ExpertFFN != 0 ||
		c.SharedExperts != 0 || c.ExpertWeightsNorm || c.ExpertWeightsScale != 0):
		return fmt.Errorf("glm4: a glm4 model with experts or query/key norms (they are glm4moe's)")
	case !c.MoE():
		return nil
	case c.DenseLayers > 0 && c.FFN == 0:
		return fmt.Errorf("glm4: the first %d of %d layers dense, of width %d", c.DenseLayers, c.Layers, c.FFN)
	case c.Experts < 1 || c.ExpertsUsed < 1 || c.ExpertFFN == 0:
		return fmt.Errorf("glm4: %d experts, %d a token, of width %d", c.Experts, c.ExpertsUsed, c.ExpertFFN)
	case c.SharedExperts*c.ExpertFFN > 1<<20:
		return fmt.Errorf("glm4: %d shared experts of width %d", c.SharedExperts, c.ExpertFFN)
	}
	return nil
}

// SetMetadata writes the configuration as GGUF metadata, in llama.cpp's keys.
func (c Config) SetMetadata(w *gguf.Writer) {
	a := c.Arch + "."
	w.SetConfig(c.Arch, c)
	w.SetUint32(a+"block_count", uint32(c.Layers+c.MTPLayers))
	if c.HeadDim != c.Embed/c.Heads {
		w.SetUint32(a+"attention.key_length", uint32(c.HeadDim))
		w.SetUint32(a+"attention.value_length", uint32(c.HeadDim))
	}
	w.SetUint32(a+"rope.dimension_count", uint32(c.RopeDim))
	if c.MoE() { // what llama.cpp wants of glm4moe even at 0
		w.SetUint32(a+"leading_dense_block_count", uint32(c.DenseLayers))
		w.SetUint32(a+"expert_shared_count", uint32(c.SharedExperts))
		w.SetUint32(a+"expert_gating_func", 2) // sigmoid
		w.SetBool(a+"expert_weights_norm", c.ExpertWeightsNorm)
	}
}
