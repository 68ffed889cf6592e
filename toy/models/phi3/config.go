// The flat configuration of a Phi-3-family model, read from GGUF metadata.

package phi3

import (
	"errors"
	"fmt"

	"github.com/toyml/toy/toy/gguf"
	"github.com/toyml/toy/toy/tensor"
)

// Config holds every hyperparameter of a Phi-3-family model.
type Config struct {
	VocabSize     int     // V
	ContextLength int     // trained context length (131072 for the 128k models)
	Embed         int     // D
	Layers        int     // L
	FFN           int     // F (ffn_up holds 2F rows: gate, then up)
	Heads         int     // H
	KVHeads       int     // KV (= H in Phi-3-mini; fewer in Phi-3-medium, Phi-4, Phi-4-mini)
	HeadDim       int     // Dh
	RopeDim       int     // R: features rotated per head, from the first (Dh, or 3/4 of it in Phi-4-mini)
	RopeBase      float32 // θ base
	NormEps       float32 // RMSNorm ε
	TiedOutput    bool    // the output head reuses the token embedding (Phi-4-mini)

	// LongRoPE: with RopeFactors the file holds rope_factors_short and
	// rope_factors_long [R/2], and a context longer than RopeOrigContext
	// runs with the long ones (see LongFactors). RopeAttnFactor multiplies
	// RoPE's cos and sin (0 means 1).
	RopeFactors     bool
	RopeOrigContext int
	RopeAttnFactor  float32
}

// Arch is the GGUF architecture this package loads.
const Arch = "phi3"

// ErrUnsupported marks Phi-3 files that use features toy lacks.
var ErrUnsupported = errors.New("phi3: unsupported model feature")

// ConfigFromGGUF reads the configuration from f's metadata and tensor shapes.
// Files that ask for a RoPE scaling other than LongRoPE's factors (linear or
// YaRN by metadata, which no Phi release has) are refused with ErrUnsupported.
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
		return c, nil, fmt.Errorf("phi3: architecture %q is not phi3", arch)
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
	c.NormEps = m.Float("attention.layer_norm_rms_epsilon")
	c.RopeOrigContext = m.UintOr("rope.scaling.original_context_length", c.ContextLength)
	c.RopeAttnFactor = m.FloatOr("rope.scaling.attn_factor", 0)
	var lacking []string
	// LongRoPE is the factor tensors; a scaling by metadata must be the
	// identity (llama.cpp would also stretch every angle by a factor).
	typ, factor := m.StringOr("rope.scaling.type", "longrope"), m.FloatOr("rope.scaling.factor", 0)
	switch {
	case typ == "none" || factor == 0 || factor == 1:
	default:
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
	_, err = f.Info("output.weight")
	c.TiedOutput = err != nil
	_, err = f.Info("rope_factors_long.weight")
	c.RopeFactors = err == nil
	return c, lacking, c.Validate()
}

// LongFactors reports whether a context of n positions runs with LongRoPE's
// long factors: when the model has factors and n exceeds the original
// context (llama.cpp's choice for its context size, see the package doc).
func (c Config) LongFactors(n int) bool { return c.RopeFactors && n > c.RopeOrigContext }

// RoPEScaling returns what tensor.RoPEWith applies besides the factors: the
// attention factor on cos and sin.
func (c Config) RoPEScaling() tensor.RoPEScaling {
	return tensor.RoPEScaling{AttnFactor: c.RopeAttnFactor}
}

// Validate checks that the numbers describe a buildable model.
func (c Config) Validate() error {
	const big = 1 << 20
	switch {
	case c.VocabSize <= 0 || c.VocabSize > 1<<24:
		return fmt.Errorf("phi3: vocabulary size %d", c.VocabSize)
	case c.Embed <= 0 || c.Embed > big || c.FFN <= 0 || c.FFN > big:
		return fmt.Errorf("phi3: width %d, feed-forward width %d", c.Embed, c.FFN)
	case c.Layers <= 0 || c.Layers > 1024:
		return fmt.Errorf("phi3: %d layers", c.Layers)
	case c.Heads <= 0 || c.KVHeads <= 0 || c.Heads%c.KVHeads != 0:
		return fmt.Errorf("phi3: %d heads with %d KV heads", c.Heads, c.KVHeads)
	case c.HeadDim <= 0 || c.HeadDim > big || c.RopeDim <= 0 || c.RopeDim > c.HeadDim || c.RopeDim%2 != 0:
		return fmt.Errorf("phi3: head width %d, RoPE width %d", c.HeadDim, c.RopeDim)
	case c.ContextLength <= 0:
		return fmt.Errorf("phi3: context length %d", c.ContextLength)
	case !(c.NormEps > 0 && c.NormEps < 1):
		return fmt.Errorf("phi3: RMSNorm epsilon %g", c.NormEps)
	case !(c.RopeBase > 0):
		return fmt.Errorf("phi3: RoPE base %g", c.RopeBase)
	case c.RopeOrigContext < 0 || (c.RopeFactors && c.RopeOrigContext == 0):
		return fmt.Errorf("phi3: LongRoPE over an original context of %d", c.RopeOrigContext)
	case !(c.RopeAttnFactor >= 0 && c.RopeAttnFactor < 100):
		return fmt.Errorf("phi3: RoPE attention factor %g", c.RopeAttnFactor)
	}
	return nil
}

// SetMetadata writes the configuration as GGUF metadata, in llama.cpp's keys
// and types (counts uint32, epsilon and RoPE base float32). The LongRoPE
// factors are tensors, written with the weights.
func (c Config) SetMetadata(w *gguf.Writer) {
	a := Arch
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
	if c.RopeOrigContext != 0 {
		w.SetUint32(a+".rope.scaling.original_context_length", uint32(c.RopeOrigContext))
	}
	if c.RopeAttnFactor != 0 {
		w.SetFloat32(a+".rope.scaling.attn_factor", c.RopeAttnFactor)
	}
}
