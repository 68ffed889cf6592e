// The flat configuration of a Phi-2 model, declared with its GGUF keys
// (under "phi2.") and its card symbols.

package phi2

import (
	"cmp"

	"github.com/toyml/toy/toy/gguf"
	"github.com/toyml/toy/toy/models"
)

// Config holds every hyperparameter of a Phi-2 model. Absent from a file,
// KVHeads is H, HeadDim D/H and RopeDim Dh.
type Config struct {
	VocabSize     int     `range:"[1, 1<<24]" card:"N_V, vocabulary size"`
	ContextLength int     `gguf:"context_length" range:"[1, *]" card:"ℓ_max, trained context length"`
	Embed         int     `gguf:"embedding_length" range:"[1, 1<<20]" card:"d_e, model width"`
	Layers        int     `gguf:"block_count" range:"[1, 1024]" card:"L, layers"`
	FFN           int     `gguf:"feed_forward_length" range:"[1, 1<<20]" card:"d_mlp, feed-forward width"`
	Heads         int     `gguf:"attention.head_count" range:"[1, *]" multiple:"KVHeads" card:"H, query heads"`
	KVHeads       int     `gguf:"attention.head_count_kv,optional" default:"Heads" range:"[1, *]" card:"H_kv, key/value heads (grouped-query attention when < H)"` // H in Phi-2 and Phi-1.5
	HeadDim       int     `gguf:"attention.key_length,optional" default:"Embed/Heads" range:"[1, 1<<20]" card:"d_h, head width"`
	RopeDim       int     `gguf:"rope.dimension_count,optional" default:"HeadDim" range:"[1, HeadDim]" multiple:"2" card:"d_rope, features rotated per head, from the first"` // partial rotary
	RopeBase      float32 `gguf:"rope.freq_base,optional" range:"(0, *]" card:"θ_rope, RoPE frequency base"`
	NormEps       float32 `gguf:"attention.layer_norm_epsilon" range:"(0, 1)" card:"ε, LayerNorm epsilon"`
}

// Arch is the GGUF architecture this package loads.
const Arch = "phi2"

// ErrUnsupported marks Phi-2 files that use features toy lacks.
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
	lacking := models.RoPEScalingLacking(m, "none")
	return c, lacking, cmp.Or(m.Err(), c.Validate())
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
