// The flat configuration of a Phi-2 model, read from GGUF metadata.

package phi2

import (
	"errors"
	"fmt"

	"github.com/toyml/toy/toy/gguf"
)

// Config holds every hyperparameter of a Phi-2 model.
type Config struct {
	VocabSize     int     // V
	ContextLength int     // trained context length
	Embed         int     // D
	Layers        int     // L
	FFN           int     // F
	Heads         int     // H
	KVHeads       int     // KV (= H in Phi-2 and Phi-1.5)
	HeadDim       int     // Dh
	RopeDim       int     // R: features rotated per head, from the first (partial rotary)
	RopeBase      float32 // θ base
	NormEps       float32 // LayerNorm ε
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
	var c Config
	arch, err := f.Architecture()
	if err != nil {
		return c, nil, err
	}
	if arch != Arch {
		return c, nil, fmt.Errorf("phi2: architecture %q is not phi2", arch)
	}
	m := f.Meta(Arch)
	d, err := m.Decoder()
	if err != nil {
		return c, nil, err
	}
	c.ContextLength, c.Embed, c.Layers, c.FFN, c.Heads, c.KVHeads = d.Context, d.Embed, d.Layers, d.FFN, d.Heads, d.KVHeads
	c.HeadDim = m.UintOr("attention.key_length", c.Embed/c.Heads)
	c.RopeDim = m.UintOr("rope.dimension_count", c.HeadDim)
	c.RopeBase = m.FloatOr("rope.freq_base", 10000)
	c.NormEps = m.Float("attention.layer_norm_epsilon")
	var lacking []string
	if typ, factor := m.StringOr("rope.scaling.type", "none"), m.FloatOr("rope.scaling.factor", 0); typ != "none" && factor != 0 && factor != 1 {
		lacking = append(lacking, fmt.Sprintf("RoPE scaling %q by %g", typ, factor))
	}
	if err := m.Err(); err != nil {
		return c, nil, err
	}
	emb, err := f.Info("token_embd.weight")
	if err != nil {
		return c, nil, err
	}
	c.VocabSize = emb.Shape()[0]
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
// and types (counts uint32, epsilon and RoPE base float32).
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
	w.SetUint32(a+".rope.dimension_count", uint32(c.RopeDim))
	w.SetFloat32(a+".rope.freq_base", c.RopeBase)
	if c.HeadDim != c.Embed/c.Heads {
		w.SetUint32(a+".attention.key_length", uint32(c.HeadDim))
		w.SetUint32(a+".attention.value_length", uint32(c.HeadDim))
	}
}
