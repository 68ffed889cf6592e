// The flat configuration of a Gemma model (Gemma, Gemma 2, Gemma 3 text),
// read from GGUF metadata.

package gemma

import (
	"fmt"
	"math"
	"slices"

	"github.com/toyml/toy/toy/gguf"
	"github.com/toyml/toy/toy/tensor"
)

// Config holds every hyperparameter of a Gemma model. What the generations
// fix (post-norms, QK-norm, the pattern of local layers) follows from Arch;
// see the methods.
type Config struct {
	Arch          string  // GGUF architecture: "gemma", "gemma2" or "gemma3"
	VocabSize     int     // V
	ContextLength int     // trained context length
	Embed         int     // D
	Layers        int     // L
	FFN           int     // F
	Heads         int     // H
	KVHeads       int     // KV
	HeadDim       int     // Dh
	RopeBase      float32 // θ base (of the global layers)
	NormEps       float32 // RMSNorm ε
	TiedOutput    bool    // the output head reuses the token embedding

	Window int // sliding window of the local layers (see Sliding), in positions
	// RopeScaleFactor > 0 divides the global layers' RoPE angles (linear
	// scaling: Gemma 3 4B and larger, 8).
	RopeScaleFactor float32
	AttnSoftCap     float32 // attention scores s ← c·tanh(s/c); 0: none (Gemma 2: 50)
	FinalSoftCap    float32 // output logits z ← c·tanh(z/c); 0: none (Gemma 2: 30)
	QueryScale      float32 // multiplies the scores q·k: 1/√Dh, or 1/√(D/H) for the 27B models
}

// Archs lists the GGUF architectures this package loads.
var Archs = []string{"gemma", "gemma2", "gemma3"}

// ConfigFromGGUF reads the configuration from f's metadata and tensor shapes.
// Keys a file may leave out take llama.cpp's values for its generation.
func ConfigFromGGUF(f *gguf.File) (Config, error) {
	var c Config
	arch, err := f.Architecture()
	if err != nil {
		return c, err
	}
	if !slices.Contains(Archs, arch) {
		return c, fmt.Errorf("gemma: architecture %q is not gemma, gemma2 or gemma3", arch)
	}
	c.Arch = arch
	m := f.Meta(arch)
	d, err := m.Decoder()
	if err != nil {
		return c, err
	}
	c.ContextLength, c.Embed, c.Layers, c.FFN, c.Heads, c.KVHeads = d.Context, d.Embed, d.Layers, d.FFN, d.Heads, d.KVHeads
	c.HeadDim = m.UintOr("attention.key_length", c.Embed/c.Heads)
	c.RopeBase = m.FloatOr("rope.freq_base", 10000)
	c.NormEps = m.Float("attention.layer_norm_rms_epsilon")
	switch arch {
	case "gemma2":
		c.Window = m.UintOr("attention.sliding_window", 4096)
		c.AttnSoftCap = m.FloatOr("attn_logit_softcapping", 50)
		c.FinalSoftCap = m.FloatOr("final_logit_softcapping", 30)
	case "gemma3":
		c.Window = m.Uint("attention.sliding_window")
		switch typ := m.StringOr("rope.scaling.type", "linear"); typ {
		case "linear":
			if s := m.FloatOr("rope.scaling.factor", 0); s != 1 {
				c.RopeScaleFactor = s
			}
		case "none":
		default:
			return c, fmt.Errorf("gemma: RoPE scaling %q (toy runs linear)", typ)
		}
	}
	if rd := m.UintOr("rope.dimension_count", c.HeadDim); m.Err() == nil && rd != c.HeadDim {
		return c, fmt.Errorf("gemma: RoPE width %d, head width %d: partial RoPE is not Gemma's", rd, c.HeadDim)
	}
	if err := m.Err(); err != nil {
		return c, err
	}
	// The 27B models scale by their query_pre_attn_scalar, D/H, not by 1/√Dh;
	// the file does not say so, and llama.cpp recognises them by their layer
	// count (46 in Gemma 2, 62 in Gemma 3). So does toy.
	c.QueryScale = float32(1 / math.Sqrt(float64(c.HeadDim)))
	if (arch == "gemma2" && c.Layers == 46) || (arch == "gemma3" && c.Layers == 62) {
		c.QueryScale = float32(1 / math.Sqrt(float64(c.Embed/c.Heads)))
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

// PostNorms reports whether each sublayer's output is RMS-normalised too
// before it joins the residual stream (Gemma 2 and 3).
func (c Config) PostNorms() bool { return c.Arch != "gemma" }

// QKNorm reports whether each query and key head is RMS-normalised before
// RoPE (Gemma 3).
func (c Config) QKNorm() bool { return c.Arch == "gemma3" }

// SlidingPattern is the period of the local layers: layer l is local when
// l mod p < p − 1 — every other layer from the first in Gemma 2 (p = 2),
// five of every six in Gemma 3 (p = 6); 0 (Gemma): none.
func (c Config) SlidingPattern() int { return map[string]int{"gemma2": 2, "gemma3": 6}[c.Arch] }

// Sliding reports whether layer i is local: it attends within the last
// Window positions rather than to the whole context.
func (c Config) Sliding(i int) bool {
	p := c.SlidingPattern()
	return p > 0 && i%p < p-1
}

// RoPE returns layer i's RoPE base and scaling: Gemma 3's local layers turn
// with base 10000 and no scaling, its global layers and every other Gemma
// layer with RopeBase and RopeScaleFactor.
func (c Config) RoPE(i int) (base float32, s tensor.RoPEScaling) {
	if c.Arch == "gemma3" && c.Sliding(i) {
		return 10000, s
	}
	if c.RopeScaleFactor > 0 {
		s.FreqScale = 1 / c.RopeScaleFactor
	}
	return c.RopeBase, s
}

// Validate checks that the numbers describe a buildable model.
func (c Config) Validate() error {
	const big = 1 << 20
	switch {
	case !slices.Contains(Archs, c.Arch):
		return fmt.Errorf("gemma: architecture %q", c.Arch)
	case c.VocabSize <= 0 || c.VocabSize > 1<<24:
		return fmt.Errorf("gemma: vocabulary size %d", c.VocabSize)
	case c.Embed <= 0 || c.Embed > big || c.FFN <= 0 || c.FFN > big:
		return fmt.Errorf("gemma: width %d, feed-forward width %d", c.Embed, c.FFN)
	case c.Layers <= 0 || c.Layers > 1024:
		return fmt.Errorf("gemma: %d layers", c.Layers)
	case c.Heads <= 0 || c.KVHeads <= 0 || c.Heads%c.KVHeads != 0:
		return fmt.Errorf("gemma: %d heads with %d KV heads", c.Heads, c.KVHeads)
	case c.HeadDim <= 0 || c.HeadDim%2 != 0 || c.HeadDim > big:
		return fmt.Errorf("gemma: head width %d", c.HeadDim)
	case c.ContextLength <= 0:
		return fmt.Errorf("gemma: context length %d", c.ContextLength)
	case !(c.NormEps > 0 && c.NormEps < 1):
		return fmt.Errorf("gemma: RMSNorm epsilon %g", c.NormEps)
	case c.Window < 0 || (c.SlidingPattern() > 0 && c.Window == 0) ||
		!(c.AttnSoftCap >= 0) || !(c.FinalSoftCap >= 0) || !(c.QueryScale > 0):
		return fmt.Errorf("gemma: window %d, soft caps %g and %g, query scale %g", c.Window, c.AttnSoftCap, c.FinalSoftCap, c.QueryScale)
	case !(c.RopeBase > 0) || !(c.RopeScaleFactor >= 0):
		return fmt.Errorf("gemma: RoPE base %g, scale factor %g", c.RopeBase, c.RopeScaleFactor)
	}
	return nil
}

// SetMetadata writes the configuration as GGUF metadata, in llama.cpp's keys.
func (c Config) SetMetadata(w *gguf.Writer) {
	a := c.Arch
	w.SetString("general.architecture", a)
	w.SetUint32(a+".context_length", uint32(c.ContextLength))
	w.SetUint32(a+".embedding_length", uint32(c.Embed))
	w.SetUint32(a+".block_count", uint32(c.Layers))
	w.SetUint32(a+".feed_forward_length", uint32(c.FFN))
	w.SetUint32(a+".attention.head_count", uint32(c.Heads))
	w.SetUint32(a+".attention.head_count_kv", uint32(c.KVHeads))
	w.SetUint32(a+".attention.key_length", uint32(c.HeadDim))
	w.SetUint32(a+".attention.value_length", uint32(c.HeadDim))
	w.SetFloat32(a+".attention.layer_norm_rms_epsilon", c.NormEps)
	w.SetUint32(a+".rope.dimension_count", uint32(c.HeadDim))
	w.SetFloat32(a+".rope.freq_base", c.RopeBase)
	if c.SlidingPattern() > 0 {
		w.SetUint32(a+".attention.sliding_window", uint32(c.Window))
	}
	if a == "gemma2" {
		w.SetFloat32(a+".attn_logit_softcapping", c.AttnSoftCap)
		w.SetFloat32(a+".final_logit_softcapping", c.FinalSoftCap)
	}
	if c.RopeScaleFactor > 0 {
		w.SetString(a+".rope.scaling.type", "linear")
		w.SetFloat32(a+".rope.scaling.factor", c.RopeScaleFactor)
	}
}
