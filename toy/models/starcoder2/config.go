// The flat configuration of a StarCoder2 model, read from GGUF metadata.

package starcoder2

import (
	"errors"
	"fmt"

	"github.com/toyml/toy/toy/gguf"
)

// Arch is the GGUF architecture this package loads.
const Arch = "starcoder2"

// ErrUnsupported marks StarCoder2 files that use features toy lacks.
var ErrUnsupported = errors.New("starcoder2: unsupported model feature")

// Config holds every hyperparameter of a StarCoder2 model.
type Config struct {
	VocabSize     int     // V
	ContextLength int     // trained context length
	Embed         int     // D
	Layers        int     // L
	FFN           int     // F
	Heads         int     // H
	KVHeads       int     // KV
	RopeBase      float32 // θ base
	NormEps       float32 // LayerNorm ε
	TiedOutput    bool    // the output head reuses the token embedding
}

// HeadDim returns Dh = D/H.
func (c Config) HeadDim() int { return c.Embed / c.Heads }

// ConfigFromGGUF reads the configuration from f's metadata and tensor
// shapes. RoPE rotates whole heads, as llama.cpp requires of this
// architecture; files that scale RoPE are refused with ErrUnsupported.
func ConfigFromGGUF(f *gguf.File) (Config, error) {
	var c Config
	arch, err := f.Architecture()
	if err != nil {
		return c, err
	}
	if arch != Arch {
		return c, fmt.Errorf("starcoder2: architecture %q, want %q", arch, Arch)
	}
	m := f.Meta(arch)
	d, err := m.Decoder()
	if err != nil {
		return c, err
	}
	c.ContextLength, c.Embed, c.Layers, c.FFN, c.Heads, c.KVHeads = d.Context, d.Embed, d.Layers, d.FFN, d.Heads, d.KVHeads
	c.NormEps = m.Float("attention.layer_norm_epsilon")
	c.RopeBase = m.FloatOr("rope.freq_base", 10000)
	rot := m.UintOr("rope.dimension_count", c.HeadDim())
	typ := m.StringOr("rope.scaling.type", "none")
	factor := m.FloatOr("rope.scaling.factor", 0)
	if err := m.Err(); err != nil {
		return c, err
	}
	if rot != c.HeadDim() {
		return c, fmt.Errorf("starcoder2: RoPE over %d features of heads %d wide (they must be equal)", rot, c.HeadDim())
	}
	if typ != "none" && factor != 0 && factor != 1 {
		return c, fmt.Errorf("%w: RoPE scaling %q by %g", ErrUnsupported, typ, factor)
	}
	emb, err := f.Info("token_embd.weight")
	if err != nil {
		return c, err
	}
	c.VocabSize = emb.Shape()[0]
	_, err = f.Info("output.weight")
	c.TiedOutput = err != nil
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

// SetMetadata writes the configuration as GGUF metadata, in llama.cpp's keys.
func (c Config) SetMetadata(w *gguf.Writer) {
	a := Arch
	w.SetString("general.architecture", a)
	w.SetUint32(a+".context_length", uint32(c.ContextLength))
	w.SetUint32(a+".embedding_length", uint32(c.Embed))
	w.SetUint32(a+".block_count", uint32(c.Layers))
	w.SetUint32(a+".feed_forward_length", uint32(c.FFN))
	w.SetUint32(a+".attention.head_count", uint32(c.Heads))
	w.SetUint32(a+".attention.head_count_kv", uint32(c.KVHeads))
	w.SetFloat32(a+".attention.layer_norm_epsilon", c.NormEps)
	w.SetUint32(a+".rope.dimension_count", uint32(c.HeadDim()))
	w.SetFloat32(a+".rope.freq_base", c.RopeBase)
}
