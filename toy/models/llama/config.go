// The flat configuration of a Llama-family model, read from GGUF metadata.

package llama

import (
	"errors"
	"fmt"

	"github.com/toyml/toy/toy/gguf"
)

// Config holds every hyperparameter of a Llama-family model.
type Config struct {
	Arch          string  // GGUF architecture: "llama", "qwen2" or "qwen3"
	VocabSize     int     // V
	ContextLength int     // trained context length
	Embed         int     // D
	Layers        int     // L
	FFN           int     // F
	Heads         int     // H
	KVHeads       int     // KV (= H without grouped-query attention)
	HeadDim       int     // Dh
	RopeDim       int     // features rotated per head (usually Dh)
	RopeBase      float32 // θ base
	RopeNeoX      bool    // half-split RoPE pairs (qwen2)
	RopeFreqs     bool    // RoPE angles divided by per-pair factors (Llama 3.1+: rope_freqs.weight)
	NormEps       float32 // RMSNorm ε
	TiedOutput    bool    // the output head reuses the token embedding
}

// Archs lists the GGUF architectures this package loads.
var Archs = []string{"llama", "qwen2", "qwen3"}

// ErrUnsupported marks files of this family that use features toy lacks.
var ErrUnsupported = errors.New("llama: unsupported model feature")

// ConfigFromGGUF reads the configuration from f's metadata and tensor shapes.
// Files that need features toy lacks (RoPE scaling by metadata: linear,
// YaRN) are refused with ErrUnsupported; Llama 3.1's scaling, a
// rope_freqs.weight tensor, is supported (Model.RopeFreqs).
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
	if arch != "llama" && arch != "qwen2" && arch != "qwen3" {
		return c, nil, fmt.Errorf("llama: architecture %q is not llama, qwen2 or qwen3", arch)
	}
	c.Arch, c.RopeNeoX = arch, arch == "qwen2" || arch == "qwen3"
	key := func(k string) string { return arch + "." + k }
	u := func(k string, def int) int { // def < 0: required
		if err != nil {
			return 0
		}
		if def >= 0 && !f.Has(key(k)) {
			return def
		}
		var v uint32
		v, err = f.Uint32(key(k))
		return int(v)
	}
	c.ContextLength = u("context_length", -1)
	c.Embed = u("embedding_length", -1)
	c.Layers = u("block_count", -1)
	c.FFN = u("feed_forward_length", -1)
	c.Heads = u("attention.head_count", -1)
	if err != nil {
		return c, nil, err
	}
	if c.Heads <= 0 || c.Embed <= 0 {
		return c, nil, fmt.Errorf("llama: %d heads, width %d", c.Heads, c.Embed)
	}
	c.KVHeads = u("attention.head_count_kv", c.Heads)
	c.HeadDim = u("attention.key_length", c.Embed/c.Heads)
	c.RopeDim = u("rope.dimension_count", c.HeadDim)
	if err != nil {
		return c, nil, err
	}
	if c.NormEps, err = f.Float32(key("attention.layer_norm_rms_epsilon")); err != nil {
		return c, nil, err
	}
	c.RopeBase = 10000
	if f.Has(key("rope.freq_base")) {
		if c.RopeBase, err = f.Float32(key("rope.freq_base")); err != nil {
			return c, nil, err
		}
	}
	var lacking []string
	if s, _ := f.String(key("rope.scaling.type")); s != "" && s != "none" {
		lacking = append(lacking, fmt.Sprintf("RoPE scaling %q", s))
	}
	emb, err := f.Info("token_embd.weight")
	if err != nil {
		return c, nil, err
	}
	c.VocabSize = emb.Shape()[0]
	_, err = f.Info("output.weight")
	c.TiedOutput = err != nil
	_, err = f.Info("rope_freqs.weight")
	c.RopeFreqs = err == nil
	return c, lacking, c.Validate()
}

// QKVBias reports whether the query, key and value projections have biases
// (qwen2).
func (c Config) QKVBias() bool { return c.Arch == "qwen2" }

// QKNorm reports whether each head of the queries and keys is RMS-normalised
// before RoPE (qwen3).
func (c Config) QKNorm() bool { return c.Arch == "qwen3" }

// Validate checks that the numbers describe a buildable model.
func (c Config) Validate() error {
	const big = 1 << 20
	switch {
	case c.VocabSize <= 0 || c.VocabSize > 1<<24:
		return fmt.Errorf("llama: vocabulary size %d", c.VocabSize)
	case c.Embed <= 0 || c.Embed > big || c.FFN <= 0 || c.FFN > big:
		return fmt.Errorf("llama: width %d, feed-forward width %d", c.Embed, c.FFN)
	case c.Layers <= 0 || c.Layers > 1024:
		return fmt.Errorf("llama: %d layers", c.Layers)
	case c.Heads <= 0 || c.KVHeads <= 0 || c.Heads%c.KVHeads != 0:
		return fmt.Errorf("llama: %d heads with %d KV heads", c.Heads, c.KVHeads)
	case c.HeadDim <= 0 || c.RopeDim <= 0 || c.RopeDim > c.HeadDim || c.RopeDim%2 != 0:
		return fmt.Errorf("llama: head width %d, RoPE width %d", c.HeadDim, c.RopeDim)
	case c.ContextLength <= 0:
		return fmt.Errorf("llama: context length %d", c.ContextLength)
	case !(c.NormEps > 0 && c.NormEps < 1):
		return fmt.Errorf("llama: RMSNorm epsilon %g", c.NormEps)
	}
	return nil
}

// SetMetadata writes the configuration as GGUF metadata, in llama.cpp's keys
// and types (counts uint32, epsilon and RoPE base float32).
func (c Config) SetMetadata(w *gguf.Writer) {
	a := c.Arch
	w.SetString("general.architecture", a)
	w.SetUint32(a+".context_length", uint32(c.ContextLength))
	w.SetUint32(a+".embedding_length", uint32(c.Embed))
	w.SetUint32(a+".block_count", uint32(c.Layers))
	w.SetUint32(a+".feed_forward_length", uint32(c.FFN))
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
