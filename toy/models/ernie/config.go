// The flat configuration of an ERNIE 4.5 model, read from GGUF metadata and
// tensor shapes.

package ernie

import (
	"errors"
	"fmt"
	"slices"

	"github.com/toyml/toy/toy/gguf"
)

// Arch is the GGUF architecture of the dense models (ERNIE-4.5-0.3B);
// ArchMoE that of the mixtures of experts (ERNIE-4.5-21B-A3B,
// ERNIE-4.5-300B-A47B).
const (
	Arch    = "ernie4_5"
	ArchMoE = "ernie4_5-moe"
)

// Archs lists the GGUF architectures this package loads.
var Archs = []string{Arch, ArchMoE}

// ErrUnsupported marks files of this family that use features toy lacks.
var ErrUnsupported = errors.New("ernie: unsupported model feature")

// Config holds every hyperparameter of an ERNIE 4.5 model.
type Config struct {
	Arch          string // Arch or ArchMoE
	VocabSize     int    // V
	ContextLength int    // trained context length
	Embed         int    // D
	Layers        int    // L
	FFN           int    // F, the width of the dense SwiGLUs

	// H query heads and KV key/value heads of width Dh, each turned whole
	// by RoPE in adjacent pairs (2i, 2i+1).
	Heads, KVHeads, HeadDim int
	RopeBase                float32 // θ base
	NormEps                 float32 // RMSNorm ε
	// QKVBias: the query, key and value projections have biases (the
	// checkpoints' use_bias; none of the releases has them).
	QKVBias bool

	// ernie4_5-moe: layer l's FFN is a mixture when l ≥ DenseLayers and
	// (l+1) is a multiple of MoEStep, a dense SwiGLU otherwise. A mixture
	// holds Experts SwiGLUs of width ExpertFFN and runs ExpertsUsed a
	// token, chosen by their softmax probability plus the choice bias
	// exp_probs_b (when ExpertBias) and weighted by the unbiased
	// probabilities divided by their sum; beside them a shared SwiGLU of
	// width SharedFFN (0: none) whose output is added ungated.
	DenseLayers, MoEStep            int
	Experts, ExpertsUsed, ExpertFFN int
	SharedFFN                       int
	ExpertBias                      bool

	// TiedOutput: the output head reuses the token embedding.
	TiedOutput bool
}

// MoE reports whether the model is a mixture of experts (ernie4_5-moe).
func (c Config) MoE() bool { return c.Arch == ArchMoE }

// Dense reports whether layer l's feed-forward layer is a dense SwiGLU:
// every layer of ernie4_5; in ernie4_5-moe the first DenseLayers and those
// off the MoEStep pattern.
func (c Config) Dense(l int) bool {
	return !c.MoE() || l < c.DenseLayers || c.MoEStep < 1 || (l+1)%c.MoEStep != 0
}

// ConfigFromGGUF reads the configuration from f's metadata and tensor
// shapes. Files that need features toy lacks (RoPE scaling, a fused
// attn_qkv, an attention output bias, expert groups) are refused with
// ErrUnsupported.
func ConfigFromGGUF(f *gguf.File) (Config, error) {
	c, lacking, err := readConfig(f)
	if err == nil && len(lacking) > 0 {
		err = fmt.Errorf("%w: %s", ErrUnsupported, lacking[0])
	}
	return c, err
}

// readConfig reads the configuration as llama.cpp's ernie4_5 and
// ernie4_5-moe loaders do, listing the features the file uses that toy does
// not run yet (describing a model needs no more).
//
// llama.cpp reads neither expert_gating_func nor expert_weights_norm nor
// expert_weights_scale for these architectures: its mixture is always a
// softmax, normalised, unscaled. toy reads them neither.
func readConfig(f *gguf.File) (Config, []string, error) {
	var c Config
	arch, err := f.Architecture()
	if err != nil {
		return c, nil, err
	}
	if !slices.Contains(Archs, arch) {
		return c, nil, fmt.Errorf("ernie: architecture %q is not one of %v", arch, Archs)
	}
	c.Arch = arch
	m := f.Meta(arch)
	d, err := m.Decoder()
	if err != nil {
		return c, nil, err
	}
	c.ContextLength, c.Embed, c.Layers, c.FFN, c.Heads, c.KVHeads = d.Context, d.Embed, d.Layers, d.FFN, d.Heads, d.KVHeads
	c.HeadDim = m.UintOr("attention.key_length", c.Embed/c.Heads)
	c.RopeBase = m.FloatOr("rope.freq_base", 10000)
	c.NormEps = m.Float("attention.layer_norm_rms_epsilon")
	var lacking []string
	if c.MoE() {
		c.Experts, c.ExpertsUsed = m.Uint("expert_count"), m.Uint("expert_used_count")
		c.ExpertFFN = m.Uint("expert_feed_forward_length")
		c.SharedFFN = m.UintOr("expert_shared_feed_forward_length", 0)
		c.MoEStep = m.Uint("interleave_moe_layer_step")
		c.DenseLayers = m.UintOr("leading_dense_block_count", 0)
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
	if v := m.UintOr("attention.value_length", c.HeadDim); v != c.HeadDim {
		return c, nil, fmt.Errorf("ernie: attention keys %d and values %d wide (they must be equal)", c.HeadDim, v)
	}
	if r := m.UintOr("rope.dimension_count", c.HeadDim); r != c.HeadDim {
		return c, nil, fmt.Errorf("ernie: RoPE over %d of each head's %d features (ERNIE turns them all)", r, c.HeadDim)
	}
	if hasTensor(f, "blk.0.attn_qkv.weight") {
		lacking = append(lacking, "a fused attn_qkv projection")
	}
	if hasTensor(f, "blk.0.attn_output.bias") {
		lacking = append(lacking, "an attn_output.bias (llama.cpp loads it and does not add it)")
	}
	c.QKVBias = hasTensor(f, "blk.0.attn_q.bias")
	c.TiedOutput = !hasTensor(f, "output.weight")
	emb, err := f.Info("token_embd.weight")
	if err != nil {
		return c, nil, err
	}
	c.VocabSize = emb.Shape()[0]
	if err := c.Validate(); err != nil {
		return c, lacking, err
	}
	// The choice bias is optional; all mixture layers have it or none.
	for l := range c.Layers {
		if !c.Dense(l) {
			c.ExpertBias = hasTensor(f, blockPrefix(l)+"exp_probs_b.bias")
			break
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
	dense := false // some layer has a dense SwiGLU
	for l := range min(c.Layers, 1024) {
		dense = dense || c.Dense(l)
	}
	switch {
	case !slices.Contains(Archs, c.Arch):
		return fmt.Errorf("ernie: architecture %q", c.Arch)
	case c.VocabSize <= 0 || c.VocabSize > 1<<24:
		return fmt.Errorf("ernie: vocabulary size %d", c.VocabSize)
	case c.Layers <= 0 || c.Layers > 1024:
		return fmt.Errorf("ernie: %d layers", c.Layers)
	case c.Embed <= 0 || c.Embed > big || c.FFN < 0 || c.FFN > big || dense && c.FFN == 0:
		return fmt.Errorf("ernie: width %d, feed-forward width %d", c.Embed, c.FFN)
	case c.Heads <= 0 || c.KVHeads <= 0 || c.Heads%c.KVHeads != 0 || c.Heads > 4096:
		return fmt.Errorf("ernie: %d heads with %d key/value heads", c.Heads, c.KVHeads)
	case c.HeadDim <= 0 || c.HeadDim > 4096 || c.HeadDim%2 != 0:
		return fmt.Errorf("ernie: heads %d wide (RoPE turns pairs)", c.HeadDim)
	case c.ContextLength <= 0:
		return fmt.Errorf("ernie: context length %d", c.ContextLength)
	case !(c.NormEps > 0 && c.NormEps < 1):
		return fmt.Errorf("ernie: RMSNorm epsilon %g", c.NormEps)
	case !(c.RopeBase > 1 && c.RopeBase < 1e12):
		return fmt.Errorf("ernie: RoPE base %g", c.RopeBase)
	case !c.MoE() && (c.DenseLayers != 0 || c.MoEStep != 0 || c.Experts != 0 || c.ExpertsUsed != 0 || c.ExpertFFN != 0 ||
		c.SharedFFN != 0 || c.ExpertBias):
		return fmt.Errorf("ernie: an ernie4_5 model with experts (they are ernie4_5-moe's)")
	case !c.MoE():
		return nil
	case c.MoEStep < 1 || c.MoEStep > 1024 || c.DenseLayers < 0 || c.DenseLayers > c.Layers:
		return fmt.Errorf("ernie: experts every %d layers after the first %d of %d", c.MoEStep, c.DenseLayers, c.Layers)
	case c.Experts < 1 || c.Experts > 1<<16 || c.ExpertsUsed < 1 || c.ExpertsUsed > c.Experts || c.ExpertFFN <= 0 || c.ExpertFFN > big:
		return fmt.Errorf("ernie: %d experts, %d a token, of width %d", c.Experts, c.ExpertsUsed, c.ExpertFFN)
	case c.SharedFFN < 0 || c.SharedFFN > big:
		return fmt.Errorf("ernie: a shared expert of width %d", c.SharedFFN)
	}
	return nil
}

// SetMetadata writes the configuration as GGUF metadata, in llama.cpp's keys.
func (c Config) SetMetadata(w *gguf.Writer) {
	a := c.Arch
	w.SetString("general.architecture", a)
	w.SetUint32(a+".context_length", uint32(c.ContextLength))
	w.SetUint32(a+".embedding_length", uint32(c.Embed))
	w.SetUint32(a+".block_count", uint32(c.Layers))
	w.SetUint32(a+".feed_forward_length", uint32(c.FFN))
	w.SetUint32(a+".attention.head_count", uint32(c.Heads))
	w.SetUint32(a+".attention.head_count_kv", uint32(c.KVHeads))
	if c.HeadDim != c.Embed/c.Heads {
		w.SetUint32(a+".attention.key_length", uint32(c.HeadDim))
		w.SetUint32(a+".attention.value_length", uint32(c.HeadDim))
	}
	w.SetFloat32(a+".attention.layer_norm_rms_epsilon", c.NormEps)
	w.SetUint32(a+".rope.dimension_count", uint32(c.HeadDim))
	w.SetFloat32(a+".rope.freq_base", c.RopeBase)
	if !c.MoE() {
		return
	}
	w.SetUint32(a+".expert_count", uint32(c.Experts))
	w.SetUint32(a+".expert_used_count", uint32(c.ExpertsUsed))
	w.SetUint32(a+".expert_feed_forward_length", uint32(c.ExpertFFN))
	w.SetUint32(a+".interleave_moe_layer_step", uint32(c.MoEStep))
	w.SetUint32(a+".leading_dense_block_count", uint32(c.DenseLayers))
	if c.SharedFFN > 0 {
		w.SetUint32(a+".expert_shared_feed_forward_length", uint32(c.SharedFFN))
	}
}
