// The flat configuration of a StarCoder2 model, declared with its GGUF keys
// (under "starcoder2.") and its card symbols.

package starcoder2

import (
	"errors"
	"fmt"

	"github.com/toyml/toy/toy/gguf"
	"github.com/toyml/toy/toy/models"
)

// Arch is the GGUF architecture this package loads.
const Arch = "starcoder2"

// ErrUnsupported marks StarCoder2 files that use features toy lacks.
var ErrUnsupported = errors.New("starcoder2: unsupported model feature")

// Config holds every hyperparameter of a StarCoder2 model. Absent from a
// file, KVHeads is H and RopeBase 10000.
type Config struct {
	VocabSize     int     `card:"N_V, vocabulary size"`
	ContextLength int     `gguf:"context_length" card:"ℓ_max, trained context length"`
	Embed         int     `gguf:"embedding_length" card:"d_e, model width"`
	Layers        int     `gguf:"block_count" card:"L, layers"`
	FFN           int     `gguf:"feed_forward_length" card:"d_mlp, feed-forward width"`
	Heads         int     `gguf:"attention.head_count" card:"H, query heads, each d_h = d_e/H wide"`
	KVHeads       int     `gguf:"attention.head_count_kv,optional" card:"H_kv, key/value heads (grouped-query attention when < H)"`
	RopeBase      float32 `gguf:"rope.freq_base,optional" card:"θ_rope, RoPE frequency base"`
	NormEps       float32 `gguf:"attention.layer_norm_epsilon" card:"ε, LayerNorm epsilon"`
	TiedOutput    bool    `card:"tied, the unembedding is the token embedding (W_u = W_eᵀ)"`
}

// HeadDim returns Dh = D/H.
func (c Config) HeadDim() int { return c.Embed / max(c.Heads, 1) }

// ConfigFromGGUF reads the configuration from f's metadata and tensor
// shapes. RoPE rotates whole heads, as llama.cpp requires of this
// architecture; files that scale RoPE are refused with ErrUnsupported.
func ConfigFromGGUF(f *gguf.File) (Config, error) {
	c := Config{RopeBase: 10000}
	if err := models.ReadConfig(f, Arch, &c); err != nil {
		return c, err
	}
	m := f.Meta(Arch)
	if !m.Has("attention.head_count_kv") {
		c.KVHeads = c.Heads
	}
	rot := m.UintOr("rope.dimension_count", c.HeadDim())
	typ, factor := m.StringOr("rope.scaling.type", "none"), m.FloatOr("rope.scaling.factor", 0)
	switch {
	case m.Err() != nil:
		return c, m.Err()
	case rot != c.HeadDim():
		return c, fmt.Errorf("starcoder2: RoPE over %d features of heads %d wide (they must be equal)", rot, c.HeadDim())
	case typ != "none" && factor != 0 && factor != 1:
		return c, fmt.Errorf("%w: RoPE scaling %q by %g", ErrUnsupported, typ, factor)
	}
	return c, c.Validate()
}

// Validate checks that the numbers describe a buildable model.
func (c Config) Validate() error {
	const big = 1 << 20
	switch {
	case c.VocabSize <= 0 || c.VocabSize > 1<<24:
		return fmt.Errorf("starcoder2: vocabulary size %d", c.VocabSize)
	case c.Embed <= 0 || c.Embed > big || c.FFN <= 0 || c.FFN > big:
		return fmt.Errorf("starcoder2: width %d, feed-forward width %d", c.Embed, c.FFN)
	case c.Layers <= 0 || c.Layers > 1024:
		return fmt.Errorf("starcoder2: %d layers", c.Layers)
	case c.Heads <= 0 || c.KVHeads <= 0 || c.Heads%c.KVHeads != 0 || c.Embed%c.Heads != 0 || c.HeadDim()%2 != 0:
		return fmt.Errorf("starcoder2: %d heads with %d KV heads, width %d", c.Heads, c.KVHeads, c.Embed)
	case c.ContextLength <= 0:
		return fmt.Errorf("starcoder2: context length %d", c.ContextLength)
	case !(c.NormEps > 0 && c.NormEps < 1):
		return fmt.Errorf("starcoder2: LayerNorm epsilon %g", c.NormEps)
	case !(c.RopeBase > 1 && c.RopeBase < 1e12):
		return fmt.Errorf("starcoder2: RoPE base %g", c.RopeBase)
	}
	return nil
}

// SetMetadata writes the configuration as GGUF metadata, in llama.cpp's keys,
// with RoPE over whole heads.
func (c Config) SetMetadata(w *gguf.Writer) {
	w.SetConfig(Arch, c)
	w.SetUint32(Arch+".rope.dimension_count", uint32(c.HeadDim()))
}
