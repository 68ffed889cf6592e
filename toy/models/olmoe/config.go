// The flat configuration of an OLMoE model, declared with its GGUF keys
// (under "olmoe.") and its card symbols.

package olmoe

import (
	"errors"
	"fmt"

	"github.com/toyml/toy/toy/gguf"
	"github.com/toyml/toy/toy/models"
)

// Config holds every hyperparameter of an OLMoE model. Absent from a file,
// KVHeads is H, HeadDim D/H, RopeDim Dh and RopeBase 10000.
type Config struct {
	VocabSize     int     `card:"N_V, vocabulary size"`
	ContextLength int     `gguf:"context_length" card:"ℓ_max, trained context length"`
	Embed         int     `gguf:"embedding_length" card:"d_e, model width"`
	Layers        int     `gguf:"block_count" card:"L, layers"`
	FFN           int     `gguf:"feed_forward_length" card:"d_exp, width of each expert"`
	Experts       int     `gguf:"expert_count" card:"N_E, experts per layer"`
	ExpertsUsed   int     `gguf:"expert_used_count" card:"k, experts run per token"`
	Heads         int     `gguf:"attention.head_count" card:"H, query heads"`
	KVHeads       int     `gguf:"attention.head_count_kv,optional" card:"H_kv, key/value heads (grouped-query attention when < H)"` // = H in OLMoE-1B-7B
	HeadDim       int     `gguf:"attention.key_length,optional" card:"d_h, head width"`
	RopeDim       int     `gguf:"rope.dimension_count,optional" card:"d_rope, features rotated per head"` // usually Dh
	RopeBase      float32 `gguf:"rope.freq_base,optional" card:"θ_rope, RoPE frequency base"`
	NormEps       float32 `gguf:"attention.layer_norm_rms_epsilon" card:"ε, RMSNorm epsilon"`
}

// Arch is the GGUF architecture this package loads.
const Arch = "olmoe"

// ErrUnsupported marks OLMoE files that use features toy lacks.
var ErrUnsupported = errors.New("olmoe: unsupported model feature")

// ConfigFromGGUF reads the configuration from f's metadata and tensor
// shapes. Files with RoPE scaling are refused with ErrUnsupported.
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
	c := Config{RopeBase: 10000}
	if arch, err := f.Architecture(); err != nil {
		return c, nil, err
	} else if arch != Arch {
		return c, nil, fmt.Errorf("olmoe: architecture %q is not olmoe", arch)
	}
	if err := models.ReadConfig(f, Arch, &c); err != nil {
		return c, nil, err
	}
	m := f.Meta(Arch)
	if !m.Has("attention.head_count_kv") {
		c.KVHeads = c.Heads
	}
	if !m.Has("attention.key_length") {
		c.HeadDim = c.Embed / max(c.Heads, 1)
	}
	if !m.Has("rope.dimension_count") {
		c.RopeDim = c.HeadDim
	}
	var lacking []string
	if s := m.StringOr("rope.scaling.type", ""); s != "" && s != "none" {
		lacking = append(lacking, fmt.Sprintf("RoPE scaling %q", s))
	}
	if err := m.Err(); err != nil {
		return c, nil, err
	}
	return c, lacking, c.Validate()
}

// Validate checks that the numbers describe a buildable model.
func (c Config) Validate() error {
	const big = 1 << 20
	switch {
	case c.VocabSize <= 0 || c.VocabSize > 1<<24:
		return fmt.Errorf("olmoe: vocabulary size %d", c.VocabSize)
	case c.Embed <= 0 || c.Embed > big || c.FFN <= 0 || c.FFN > big:
		return fmt.Errorf("olmoe: width %d, expert width %d", c.Embed, c.FFN)
	case c.Experts <= 0 || c.Experts > 1024 || c.ExpertsUsed <= 0 || c.ExpertsUsed > c.Experts:
		return fmt.Errorf("olmoe: %d experts used of %d", c.ExpertsUsed, c.Experts)
	case c.Layers <= 0 || c.Layers > 1024:
		return fmt.Errorf("olmoe: %d layers", c.Layers)
	case c.Heads <= 0 || c.KVHeads <= 0 || c.Heads%c.KVHeads != 0:
		return fmt.Errorf("olmoe: %d heads with %d KV heads", c.Heads, c.KVHeads)
	case c.HeadDim <= 0 || c.RopeDim <= 0 || c.RopeDim > c.HeadDim || c.RopeDim%2 != 0:
		return fmt.Errorf("olmoe: head width %d, RoPE width %d", c.HeadDim, c.RopeDim)
	case c.ContextLength <= 0:
		return fmt.Errorf("olmoe: context length %d", c.ContextLength)
	case !(c.NormEps > 0 && c.NormEps < 1):
		return fmt.Errorf("olmoe: RMSNorm epsilon %g", c.NormEps)
	}
	return nil
}

// SetMetadata writes the configuration as GGUF metadata, in llama.cpp's keys
// and types; value_length beside key_length, as llama.cpp reads both.
func (c Config) SetMetadata(w *gguf.Writer) {
	w.SetConfig(Arch, c)
	w.SetUint32(Arch+".attention.value_length", uint32(c.HeadDim))
}
