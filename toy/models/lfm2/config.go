// The flat configuration of an LFM2 model, declared with its GGUF keys and
// its card symbols.

package lfm2

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/toyml/toy/toy/gguf"
	"github.com/toyml/toy/toy/models"
)

// Archs lists the GGUF architectures this package loads: LFM2 and its
// mixture of experts (LFM2-8B-A1B).
var Archs = []string{"lfm2", "lfm2moe"}

// ErrUnsupported marks files of this family that use features toy lacks.
var ErrUnsupported = models.ErrUnsupported

// Config holds every hyperparameter of an LFM2 model.
type Config struct {
	Arch          string // "lfm2" or "lfm2moe"
	VocabSize     int    `range:"[1, 1<<24]" card:"N_V, vocabulary size"`
	ContextLength int    `gguf:"context_length" range:"[1, *]" card:"ℓ_max, trained context length"`
	Embed         int    `gguf:"embedding_length" range:"[1, 1<<20]" multiple:"2*Heads" card:"d_e, model width"`
	Layers        int    `gguf:"block_count" range:"[1, 1024]" card:"L, layers"`
	FFN           int    `gguf:"feed_forward_length" range:"[1, 1<<20]" card:"d_mlp, feed-forward width"`
	Heads         int    `gguf:"attention.head_count" range:"[1, *]" card:"H, query heads of the attention layers, each d_h = d_e/H wide"`
	// KVHeads[l] is layer l's key/value heads; 0 makes it a short
	// convolution layer (GGUF attention.head_count_kv, an array).
	KVHeads  []int
	ConvTaps int     `gguf:"shortconv.l_cache" range:"[2, 64]" card:"k, taps of each channel's causal convolution"`
	RopeBase float32 `gguf:"rope.freq_base,optional" range:"(1, 1e12)" card:"θ_rope, RoPE frequency base"`
	NormEps  float32 `gguf:"attention.layer_norm_rms_epsilon" range:"(0, 1)" card:"ε, RMSNorm epsilon"`
	// Window > 0 lets the attention layers see only the Window most recent
	// positions.
	Window int `gguf:"attention.sliding_window,optional" range:"[0, *]" card:"w, the attention layers' sliding window, in positions"`

	// lfm2moe: layers DenseLead … L−1 replace the SwiGLU with a mixture of
	// Experts SwiGLUs of width ExpertFFN, ExpertsUsed a token, scored by
	// the sigmoid of the router's logits (Sigmoid; else the softmax),
	// chosen by the scores plus a per-expert bias, weighted by the scores
	// renormalised to sum to 1.
	Experts     int  `gguf:"expert_count,optional" range:"[0, 1<<16]" card:"E, experts in each mixture layer"`
	ExpertsUsed int  `gguf:"expert_used_count,optional" range:"[0, Experts]" card:"k_e, experts run per token"`
	ExpertFFN   int  `gguf:"expert_feed_forward_length,optional" range:"[0, 1<<20]" card:"d_exp, each expert's feed-forward width"`
	DenseLead   int  `gguf:"leading_dense_block_count,optional" range:"[0, Layers]" card:"l_0, layers before the first mixture (dense)"`
	Sigmoid     bool `card:"σ_r, the router's scores are sigmoids (else a softmax)"`
}

// MoE reports whether layer l's feed-forward layer is the mixture.
func (c Config) MoE(l int) bool { return c.Experts > 0 && l >= c.DenseLead }

// HeadDim returns Dh = D/H.
func (c Config) HeadDim() int { return c.Embed / c.Heads }

// Conv reports whether layer l is a short convolution.
func (c Config) Conv(l int) bool { return c.KVHeads[l] == 0 }

// ConfigFromGGUF reads the configuration from f's metadata and tensor
// shapes. Files that need features toy lacks (RoPE scaling, an extra dense
// output layer, a bidirectional encoder) are refused with ErrUnsupported.
func ConfigFromGGUF(f *gguf.File) (Config, error) {
	c, lacking, err := readConfig(f)
	return c, cmp.Or(err, models.Unsupported("lfm2", lacking))
}

// readConfig reads the configuration, listing the features the file uses
// that toy does not run yet (describing a model needs no more).
func readConfig(f *gguf.File) (Config, []string, error) {
	arch, err := models.ArchIn(f, "lfm2", Archs)
	c := Config{Arch: arch, RopeBase: 1000000}
	if err != nil {
		return c, nil, err
	}
	if err := models.ReadConfig(f, arch, &c); err != nil {
		return c, nil, err
	}
	m := f.Meta(arch)
	if arch == "lfm2" { // the dense model reads no expert keys
		c.Experts, c.ExpertsUsed, c.ExpertFFN, c.DenseLead = 0, 0, 0, 0
	} else {
		switch g := m.Uint("expert_gating_func"); g {
		case 1:
		case 2:
			c.Sigmoid = true
		default:
			return c, nil, fmt.Errorf("lfm2: expert gating function %d (1: softmax, 2: sigmoid)", g)
		}
	}
	if err := m.Err(); err != nil {
		return c, nil, err
	}
	if c.Layers <= 0 || c.Layers > 1024 {
		return c, nil, fmt.Errorf("lfm2: %d layers", c.Layers)
	}
	// One count for every layer, or one per layer (0: a convolution).
	key := m.Key("attention.head_count_kv")
	if kv, err := f.Int32s(key); err == nil {
		if len(kv) != c.Layers {
			return c, nil, fmt.Errorf("lfm2: %s has %d entries for %d layers", key, len(kv), c.Layers)
		}
		for _, n := range kv {
			c.KVHeads = append(c.KVHeads, int(n))
		}
	} else if n, err2 := f.Uint32(key); err2 == nil {
		c.KVHeads = slices.Repeat([]int{int(n)}, c.Layers)
	} else {
		return c, nil, err
	}
	var lacking []string
	if c.Heads > 0 {
		if err := models.WholeHeadRoPE(m, "lfm2", c.HeadDim()); err != nil {
			return c, nil, err
		}
	}
	lacking = append(lacking, models.RoPEScalingLacking(m, "none")...)
	if !m.BoolOr("attention.causal", true) {
		lacking = append(lacking, "bidirectional attention (an LFM2 encoder)")
	}
	if models.HasTensor(f, "dense_2_out.weight") {
		lacking = append(lacking, "the extra dense output layer dense_2_out (LFM2-ColBERT)")
	}
	return c, lacking, cmp.Or(m.Err(), c.Validate())
}

// Validate checks that the numbers describe a buildable model: the declared
// ranges, then how they fit together.
func (c Config) Validate() error {
	if err := models.CheckRanges("lfm2", c); err != nil {
		return err
	}
	switch {
	case !slices.Contains(Archs, c.Arch):
		return fmt.Errorf("lfm2: architecture %q", c.Arch)
	case len(c.KVHeads) != c.Layers:
		return fmt.Errorf("lfm2: %d layers, %d key/value head counts", c.Layers, len(c.KVHeads))
	case c.Arch == "lfm2" && (c.Experts != 0 || c.DenseLead != 0 || c.ExpertsUsed != 0 || c.ExpertFFN != 0 || c.Sigmoid):
		return fmt.Errorf("lfm2: an lfm2 model with experts (they are lfm2moe)")
	case c.Arch == "lfm2moe" && (c.Experts < 2 || c.ExpertsUsed < 1 || c.ExpertFFN == 0):
		return fmt.Errorf("lfm2: %d experts, %d a token, width %d, after %d dense layers", c.Experts, c.ExpertsUsed, c.ExpertFFN, c.DenseLead)
	}
	for l, kv := range c.KVHeads {
		if kv < 0 || kv > 0 && c.Heads%kv != 0 {
			return fmt.Errorf("lfm2: layer %d: %d heads with %d KV heads", l, c.Heads, kv)
		}
	}
	return nil
}

// SetMetadata writes the configuration as GGUF metadata, in llama.cpp's
// keys: the declared ones, and those a tag cannot say.
func (c Config) SetMetadata(w *gguf.Writer) {
	a := c.Arch
	w.SetConfig(a, c)
	kv := make([]int32, len(c.KVHeads))
	for i, n := range c.KVHeads {
		kv[i] = int32(n)
	}
	w.SetInt32s(a+".attention.head_count_kv", kv)
	w.SetUint32(a+".rope.dimension_count", uint32(c.HeadDim()))
	w.SetUint32(a+".vocab_size", uint32(c.VocabSize))
	if a == "lfm2moe" { // written even when 0, and the gating function 1 (softmax) or 2 (sigmoid)
		w.SetUint32(a+".leading_dense_block_count", uint32(c.DenseLead))
		w.SetUint32(a+".expert_gating_func", map[bool]uint32{false: 1, true: 2}[c.Sigmoid])
	}
}
