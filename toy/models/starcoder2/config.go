// The flat configuration of a StarCoder2 model, declared with its GGUF keys
// (under "starcoder2.") and its card symbols.

package starcoder2

import (
	"cmp"

	"github.com/toyml/toy/toy/gguf"
	"github.com/toyml/toy/toy/models"
)

// Arch is the GGUF architecture this package loads.
const Arch = "starcoder2"

// ErrUnsupported marks StarCoder2 files that use features toy lacks.
var ErrUnsupported = models.ErrUnsupported

// Config holds every hyperparameter of a StarCoder2 model. Absent from a
// file, KVHeads is H and RopeBase 10000.
type Config struct {
	VocabSize     int     `range:"[1, 1<<24]" card:"N_V, vocabulary size"`
	ContextLength int     `gguf:"context_length" range:"[1, *]" card:"ℓ_max, trained context length"`
	Embed         int     `gguf:"embedding_length" range:"[1, 1<<20]" multiple:"2*Heads" card:"d_e, model width"`
	Layers        int     `gguf:"block_count" range:"[1, 1024]" card:"L, layers"`
	FFN           int     `gguf:"feed_forward_length" range:"[1, 1<<20]" card:"d_mlp, feed-forward width"`
	Heads         int     `gguf:"attention.head_count" range:"[1, *]" multiple:"KVHeads" card:"H, query heads, each d_h = d_e/H wide"`
	KVHeads       int     `gguf:"attention.head_count_kv,optional" default:"Heads" range:"[1, *]" card:"H_kv, key/value heads (grouped-query attention when < H)"`
	RopeBase      float32 `gguf:"rope.freq_base,optional" range:"(1, 1e12)" card:"θ_rope, RoPE frequency base"`
	NormEps       float32 `gguf:"attention.layer_norm_epsilon" range:"(0, 1)" card:"ε, LayerNorm epsilon"`
	TiedOutput    bool    `card:"tied, the unembedding is the token embedding (W_u = W_eᵀ)"`
}

// HeadDim returns Dh = D/H.
func (c Config) HeadDim() int { return c.Embed / max(c.Heads, 1) }

// ConfigFromGGUF reads the configuration from f's metadata and tensor
// shapes. RoPE rotates whole heads, as llama.cpp requires of this
// architecture; files that scale RoPE are refused with ErrUnsupported.
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
	return c, lacking, cmp.Or(models.WholeHeadRoPE(m, "starcoder2", c.HeadDim()), c.Validate())
}

// Validate checks that the numbers describe a buildable model: the declared
// ranges and relations.
func (c Config) Validate() error { return models.CheckRanges(Arch, c) }

// SetMetadata writes the configuration as GGUF metadata, in llama.cpp's keys,
// with RoPE over whole heads.
func (c Config) SetMetadata(w *gguf.Writer) {
	w.SetConfig(Arch, c)
	w.SetUint32(Arch+".rope.dimension_count", uint32(c.HeadDim()))
}
