// The flat configuration of an OLMoE model, read from GGUF metadata.

package olmoe

import (
	"errors"
	"fmt"

	"github.com/toyml/toy/toy/gguf"
)

// Config holds every hyperparameter of an OLMoE model.
type Config struct {
	VocabSize     int     // V
	ContextLength int     // trained context length
	Embed         int     // D
	Layers        int     // L
	FFN           int     // F: the width of each expert
	Experts       int     // E: experts per layer
	ExpertsUsed   int     // k: experts run per token
	Heads         int     // H
	KVHeads       int     // KV (= H in OLMoE-1B-7B)
	HeadDim       int     // Dh
	RopeDim       int     // features rotated per head (usually Dh)
	RopeBase      float32 // θ base
	NormEps       float32 // RMSNorm ε
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
	var c Config
	arch, err := f.Architecture()
	if err != nil {
		return c, nil, err
	}
	if arch != Arch {
		return c, nil, fmt.Errorf("olmoe: architecture %q is not olmoe", arch)
	}
	m := f.Meta(Arch)
	d, err := m.Decoder()
	if err != nil {
		return c, nil, err
	}
	c.ContextLength, c.Embed, c.Layers, c.FFN, c.Heads, c.KVHeads = d.Context, d.Embed, d.Layers, d.FFN, d.Heads, d.KVHeads
	c.Experts = m.Uint("expert_count")
	c.ExpertsUsed = m.Uint("expert_used_count")
	c.HeadDim = m.UintOr("attention.key_length", c.Embed/c.Heads)
	c.RopeDim = m.UintOr("rope.dimension_count", c.HeadDim)
	c.NormEps = m.Float("attention.layer_norm_rms_epsilon")
	c.RopeBase = m.FloatOr("rope.freq_base", 10000)
	var lacking []string
	if s := m.StringOr("rope.scaling.type", ""); s != "" && s != "none" {
		lacking = append(lacking, fmt.Sprintf("RoPE scaling %q", s))
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
// and types (counts uint32, epsilon and RoPE base float32).
func (c Config) SetMetadata(w *gguf.Writer) {
	a := Arch
	w.SetString("general.architecture", a)
	w.SetUint32(a+".context_length", uint32(c.ContextLength))
	w.SetUint32(a+".embedding_length", uint32(c.Embed))
	w.SetUint32(a+".block_count", uint32(c.Layers))
	w.SetUint32(a+".feed_forward_length", uint32(c.FFN))
	w.SetUint32(a+".expert_count", uint32(c.Experts))
	w.SetUint32(a+".expert_used_count", uint32(c.ExpertsUsed))
	w.SetUint32(a+".attention.head_count", uint32(c.Heads))
	w.SetUint32(a+".attention.head_count_kv", uint32(c.KVHeads))
	w.SetFloat32(a+".attention.layer_norm_rms_epsilon", c.NormEps)
	w.SetUint32(a+".rope.dimension_count", uint32(c.RopeDim))
	w.SetFloat32(a+".rope.freq_base", c.RopeBase)
	if c.HeadDim != c.Embed/c.Heads {
		w.SetUint32(a+".attention.key_length", uint32(c.HeadDim))
		w.SetUint32(a+".attention.value_length", uint32(c.HeadDim))
	}
}
