// The flat configuration of an ERNIE 4.5 model, read from GGUF metadata and
// tensor shapes.

package ernie

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/toyml/toy/toy/gguf"
	"github.com/toyml/toy/toy/models"
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
var ErrUnsupported = models.ErrUnsupported

// Config holds every hyperparameter of an ERNIE 4.5 model. Absent from a
// file, KVHeads is H, HeadDim D/H and RopeBase 10000; QKVBias and
// ExpertBias follow from the file's tensors.
type Config struct {
	Arch          string // Arch or ArchMoE
	VocabSize     int    `range:"[1, 1<<24]" card:"N_V, vocabulary size"`
	ContextLength int    `gguf:"context_length" range:"[1, *]" card:"ℓ_max, trained context length"`
	Embed         int    `gguf:"embedding_length" range:"[1, 1<<20]" card:"d_e, model width"`
	Layers        int    `gguf:"block_count" range:"[1, 1024]" card:"L, layers"`
	FFN           int    `gguf:"feed_forward_length" range:"[0, 1<<20]" card:"d_mlp, width of the dense SwiGLUs"`

	// H query heads and KV key/value heads of width Dh, each turned whole
	// by RoPE in adjacent pairs (2i, 2i+1).
	Heads    int     `gguf:"attention.head_count" range:"[1, 4096]" multiple:"KVHeads" card:"H, query heads"`
	KVHeads  int     `gguf:"attention.head_count_kv,optional" default:"Heads" range:"[1, *]" card:"H_kv, key/value heads (grouped-query attention when < H)"`
	HeadDim  int     `gguf:"attention.key_length,optional" default:"Embed/Heads" range:"[1, 4096]" multiple:"2" card:"d_h, head width, all of it turned by RoPE"`
	RopeBase float32 `gguf:"rope.freq_base,optional" range:"(1, 1e12)" card:"θ_rope, RoPE frequency base"`
	NormEps  float32 `gguf:"attention.layer_norm_rms_epsilon" range:"(0, 1)" card:"ε, RMSNorm epsilon"`
	// QKVBias: the query, key and value projections have biases (the
	// checkpoints' use_bias; none of the releases has them).
	QKVBias    bool `card:"bias, the query, key and value projections have biases"`
	TiedOutput bool `card:"tied, the unembedding is the token embedding (W_u = W_eᵀ)"`

	// ernie4_5-moe: layer l's FFN is a mixture when l ≥ DenseLayers and
	// (l+1) is a multiple of MoeStep, a dense SwiGLU otherwise. A mixture
	// holds Experts SwiGLUs of width ExpertFFN and runs ExpertsUsed a
	// token, chosen by their softmax probability plus the choice bias
	// exp_probs_b (when ExpertBias) and weighted by the unbiased
	// probabilities divided by their sum; beside them a shared SwiGLU of
	// width SharedFFN (0: none) whose output is added ungated.
	DenseLayers int  `gguf:"leading_dense_block_count,optional" range:"[0, Layers]" card:"L_d, the first L_d layers have a dense SwiGLU"`
	MoeStep     int  `gguf:"interleave_moe_layer_step,optional" range:"[0, 1024]" card:"s, after them, layers l with l mod s = 0 have experts, the others a dense SwiGLU"`
	Experts     int  `gguf:"expert_count,optional" range:"[0, 1<<16]" card:"E, experts in each mixture"`
	ExpertsUsed int  `gguf:"expert_used_count,optional" range:"[0, Experts]" card:"k_e, experts run per token"`
	ExpertFFN   int  `gguf:"expert_feed_forward_length,optional" range:"[0, 1<<20]" card:"d_exp, each expert's width"`
	SharedFFN   int  `gguf:"expert_shared_feed_forward_length,optional" range:"[0, 1<<20]" card:"d_s, the shared expert's width (0: none)"`
	ExpertBias  bool `card:"b, a bias b_r^l is added to the probabilities to choose the experts"`
}

// MoE reports whether the model is a mixture of experts (ernie4_5-moe).
func (c Config) MoE() bool { return c.Arch == ArchMoE }

// Dense reports whether layer l's feed-forward layer is a dense SwiGLU:
// every layer of ernie4_5; in ernie4_5-moe the first DenseLayers and those
// off the MoeStep pattern.
func (c Config) Dense(l int) bool {
	return !c.MoE() || l < c.DenseLayers || c.MoeStep < 1 || (l+1)%c.MoeStep != 0
}

// ConfigFromGGUF reads the configuration from f's metadata and tensor
// shapes. Files that need features toy lacks (RoPE scaling, a fused
// attn_qkv, an attention output bias, expert groups) are refused with
// ErrUnsupported.
func ConfigFromGGUF(f *gguf.File) (Config, error) {
	c, lacking, err := readConfig(f)
	return c, cmp.Or(err, models.Unsupported(c.Arch, lacking))
}

// readConfig reads the configuration as llama.cpp's ernie4_5 and
// ernie4_5-moe loaders do, listing the features the file uses that toy does
// not run yet (describing a model needs no more).
//
// llama.cpp reads neither expert_gating_func nor expert_weights_norm nor
// expert_weights_scale for these architectures: its mixture is always a
// softmax, normalised, unscaled. toy reads them neither.
func readConfig(f *gguf.File) (Config, []string, error) {
	arch, err := models.ArchIn(f, "ernie", Archs)
	if err != nil {
		return Config{}, nil, err
	}
	c := Config{Arch: arch, RopeBase: 10000}
	if err := models.ReadConfig(f, arch, &c); err != nil {
		return c, nil, err
	}
	m := f.Meta(arch)
	var lacking []string
	if !c.MoE() { // the mixture's keys are ernie4_5-moe's
		c.DenseLayers, c.MoeStep, c.Experts, c.ExpertsUsed, c.ExpertFFN, c.SharedFFN = 0, 0, 0, 0, 0, 0
	} else if n := m.UintOr("expert_group_count", 0); n > 1 {
		lacking = append(lacking, fmt.Sprintf("expert routing in %d groups", n))
	}
	lacking = append(lacking, models.RoPEScalingLacking(m, "linear")...)
	v := m.UintOr("attention.value_length", c.HeadDim)
	if err := m.Err(); err != nil {
		return c, nil, err
	}
	if v != c.HeadDim {
		return c, nil, fmt.Errorf("ernie: attention keys %d and values %d wide (they must be equal)", c.HeadDim, v)
	}
	if err := models.WholeHeadRoPE(m, "ernie", c.HeadDim); err != nil {
		return c, nil, err
	}
	if models.HasTensor(f, "blk.0.attn_qkv.weight") {
		lacking = append(lacking, "a fused attn_qkv projection")
	}
	if models.HasTensor(f, "blk.0.attn_output.bias") {
		lacking = append(lacking, "an attn_output.bias (llama.cpp loads it and does not add it)")
	}
	c.QKVBias = models.HasTensor(f, "blk.0.attn_q.bias")
	if err := c.Validate(); err != nil {
		return c, lacking, err
	}
	// The choice bias is optional; all mixture layers have it or none.
	for l := range c.Layers {
		if !c.Dense(l) {
			c.ExpertBias = models.HasTensor(f, fmt.Sprintf("blk.%d.exp_probs_b.bias", l))
			break
		}
	}
	return c, lacking, nil
}

// Validate checks that the numbers describe a buildable model: the
// architecture, the declared ranges, then how they fit together.
func (c Config) Validate() error {
	if !slices.Contains(Archs, c.Arch) {
		return fmt.Errorf("ernie: architecture %q", c.Arch)
	}
	if err := models.CheckRanges(c.Arch, c); err != nil {
		return err
	}
	dense := false // some layer has a dense SwiGLU
	for l := range c.Layers {
		dense = dense || c.Dense(l)
	}
	switch {
	case dense && c.FFN == 0:
		return fmt.Errorf("ernie: width %d, feed-forward width %d", c.Embed, c.FFN)
	case !c.MoE() && (c.DenseLayers != 0 || c.MoeStep != 0 || c.Experts != 0 || c.ExpertsUsed != 0 || c.ExpertFFN != 0 ||
		c.SharedFFN != 0 || c.ExpertBias):
		return fmt.Errorf("ernie: an ernie4_5 model with experts (they are ernie4_5-moe's)")
	case !c.MoE():
		return nil
	case c.MoeStep < 1:
		return fmt.Errorf("ernie: experts every %d layers after the first %d of %d", c.MoeStep, c.DenseLayers, c.Layers)
	case c.Experts < 1 || c.ExpertsUsed < 1 || c.ExpertFFN == 0:
		return fmt.Errorf("ernie: %d experts, %d a token, of width %d", c.Experts, c.ExpertsUsed, c.ExpertFFN)
	}
	return nil
}

// SetMetadata writes the configuration as GGUF metadata, in llama.cpp's
// keys; value_length beside key_length, as llama.cpp reads both, the RoPE
// width (all of each head), and in ernie4_5-moe the leading dense layers,
// which llama.cpp requires, 0 included.
func (c Config) SetMetadata(w *gguf.Writer) {
	w.SetConfig(c.Arch, c)
	w.SetUint32(c.Arch+".attention.value_length", uint32(c.HeadDim))
	w.SetUint32(c.Arch+".rope.dimension_count", uint32(c.HeadDim))
	if c.MoE() {
		w.SetUint32(c.Arch+".leading_dense_block_count", uint32(c.DenseLayers))
	}
}
