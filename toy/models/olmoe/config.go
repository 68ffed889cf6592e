// The flat configuration of an OLMoE model, declared with its GGUF keys
// (under "olmoe.") and its card symbols.

package olmoe

import (
	"cmp"

	"github.com/toyml/toy/toy/gguf"
	"github.com/toyml/toy/toy/models"
)

// Config holds every hyperparameter of an OLMoE model. Absent from a file,
// KVHeads is H, HeadDim D/H, RopeDim Dh and RopeBase 10000.
type Config struct {
	VocabSize     int     `range:"[1, 1<<24]" card:"N_V, vocabulary size"`
	ContextLength int     `gguf:"context_length" range:"[1, *]" card:"ℓ_max, trained context length"`
	Embed         int     `gguf:"embedding_length" range:"[1, 1<<20]" card:"d_e, model width"`
	Layers        int     `gguf:"block_count" range:"[1, 1024]" card:"L, layers"`
	FFN           int     `gguf:"feed_forward_length" range:"[1, 1<<20]" card:"d_exp, width of each expert"`
	Experts       int     `gguf:"expert_count" range:"[1, 1024]" card:"N_E, experts per layer"`
	ExpertsUsed   int     `gguf:"expert_used_count" range:"[1, Experts]" card:"k, experts run per token"`
	Heads         int     `gguf:"attention.head_count" range:"[1, *]" multiple:"KVHeads" card:"H, query heads"`
	KVHeads       int     `gguf:"attention.head_count_kv,optional" default:"Heads" range:"[1, *]" card:"H_kv, key/value heads (grouped-query attention when < H)"` // = H in OLMoE-1B-7B
	HeadDim       int     `gguf:"attention.key_length,optional" default:"Embed/Heads" range:"[1, *]" card:"d_h, head width"`
	RopeDim       int     `gguf:"rope.dimension_count,optional" default:"HeadDim" range:"[1, HeadDim]" multiple:"2" card:"d_rope, features rotated per head"` // usually Dh
	RopeBase      float32 `gguf:"rope.freq_base,optional" card:"θ_rope, RoPE frequency base"`
	NormEps       float32 `gguf:"attention.layer_norm_rms_epsilon" range:"(0, 1)" card:"ε, RMSNorm epsilon"`
}

// Arch is the GGUF architecture this package loads.
const Arch = "olmoe"

// ErrUnsupported marks OLMoE files that use features toy lacks.
var ErrUnsupported = models.ErrUnsupported

// ConfigFromGGUF reads the configuration from f's metadata and tensor
// shapes. Files with RoPE scaling are refused with ErrUnsupported.
func ConfigFromGGUF(f *gguf.File) (Config, error) {
	c, lacking, err := readConfig(f)
	return c, cmp.Or(err, models.Unsupported(Arch, lacking))
}

// readConfig reads the configuration, listing the features the file uses
// that toy does not run yet (describing a model needs no more).
func readConfig(f *gguf.File) (Config, []string, error) {
	c := Config{RopeBase: 10000}
	if err := models.ReadConfig(f, Arch, &c); err != nil {
		return c, nil, err
	}
	m := f.Meta(Arch)
	return c, models.RoPEScalingLacking(m, "none"), cmp.Or(m.Err(), c.Validate())
}

// Validate checks that the numbers describe a buildable model: the declared
// ranges and relations.
func (c Config) Validate() error { return models.CheckRanges(Arch, c) }

// SetMetadata writes the configuration as GGUF metadata, in llama.cpp's keys
// and types; value_length beside key_length, as llama.cpp reads both.
func (c Config) SetMetadata(w *gguf.Writer) {
	w.SetConfig(Arch, c)
	w.SetUint32(Arch+".attention.value_length", uint32(c.HeadDim))
}
