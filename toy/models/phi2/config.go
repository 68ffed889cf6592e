// The flat configuration of a Phi-2 model, declared with its GGUF keys
// (under "phi2.") and its card symbols.

package phi2

import (
	"errors"
	"fmt"

	"github.com/toyml/toy/toy/gguf"
	"github.com/toyml/toy/toy/models"
)

// Config holds every hyperparameter of a Phi-2 model. Absent from a file,
// KVHeads is H, HeadDim D/H and RopeDim Dh.
type Config struct {
	VocabSize     int     `card:"N_V, vocabulary size"`
	ContextLength int     `gguf:"context_length" card:"ℓ_max, trained context length"`
	Embed         int     `gguf:"embedding_length" card:"d_e, model width"`
	Layers        int     `gguf:"block_count" card:"L, layers"`
	FFN           int     `gguf:"feed_forward_length" card:"d_mlp, feed-forward width"`
	Heads         int     `gguf:"attention.head_count" card:"H, query heads"`
	KVHeads       int     `gguf:"attention.head_count_kv,optional" card:"H_kv, key/value heads (grouped-query attention when < H)"` // H in Phi-2 and Phi-1.5
	HeadDim       int     `gguf:"attention.key_length,optional" card:"d_h, head width"`
	RopeDim       int     `gguf:"rope.dimension_count,optional" card:"d_rope, features rotated per head, from the first"` // partial rotary
	RopeBase      float32 `gguf:"rope.freq_base,optional" card:"θ_rope, RoPE frequency base"`
	NormEps       float32 `gguf:"attention.layer_norm_epsilon" card:"ε, LayerNorm epsilon"`
}

// Arch is the GGUF architecture this package loads.
const Arch = "phi2"

// ErrUnsupported marks Phi-2 files that use features toy lacks.
var ErrUnsupported = errors.New("phi2: unsupported model feature")

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
	if err := models.ReadConfig(f, Arch, &c); err != nil {
		return c, nil, err
	}
	if c.Heads <= 0 || c.Embed <= 0 {
		return c, nil, fmt.Errorf("phi2: %d heads, width %d", c.Heads, c.Embed)
	}
	m := f.Meta(Arch)
	if !m.Has("attention.head_count_kv") {
		c.KVHeads = c.Heads
	}
	if !m.Has("attention.key_length") {
		c.HeadDim = c.Embed / c.Heads
	}
	if !m.Has("rope.dimension_count") {
		c.RopeDim = c.HeadDim
	}
	var lacking []string
	if typ, factor := m.StringOr("rope.scaling.type", "none"), m.FloatOr("rope.scaling.factor", 0); typ != "none" && factor != 0 && factor != 1 {
		lacking = append(lacking, fmt.Sprintf("RoPE scaling %q by %g", typ, factor))
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
		return fmt.Errorf("phi2: vocabulary size %d", c.VocabSize)
	case c.Embed <= 0 || c.Embed > big || c.FFN <= 0 || c.FFN > big:
		return fmt.Errorf("phi2: width %d, feed-forward width %d", c.Embed, c.FFN)
	case c.Layers <= 0 || c.Layers > 1024:
		return fmt.Errorf("phi2: %d layers", c.Layers)
	case c.Heads <= 0 || c.KVHeads <= 0 || c.Heads%c.KVHeads != 0:
		return fmt.Errorf("phi2: %d heads with %d KV heads", c.Heads, c.KVHeads)
	case c.HeadDim <= 0 || c.HeadDim > big || c.RopeDim <= 0 || c.RopeDim > c.HeadDim || c.RopeDim%2 != 0:
		return fmt.Errorf("phi2: head width %d, RoPE width %d", c.HeadDim, c.RopeDim)
	case c.ContextLength <= 0:
		return fmt.Errorf("phi2: context length %d", c.ContextLength)
	case !(c.NormEps > 0 && c.NormEps < 1):
		return fmt.Errorf("phi2: LayerNorm epsilon %g", c.NormEps)
	case !(c.RopeBase > 0):
		return fmt.Errorf("phi2: RoPE base %g", c.RopeBase)
	}
	return nil
}

// SetMetadata writes the configuration as GGUF metadata, in llama.cpp's keys
// and types; value_length beside key_length, as llama.cpp reads both.
func (c Config) SetMetadata(w *gguf.Writer) {
	w.SetConfig(Arch, c)
	w.SetUint32(Arch+".attention.value_length", uint32(c.HeadDim))
}
