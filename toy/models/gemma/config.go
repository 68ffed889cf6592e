// The flat configuration of a Gemma model (Gemma, Gemma 2, Gemma 3 text),
// declared with its GGUF keys and card symbols.

package gemma

import (
	"fmt"
	"math"
	"slices"

	"github.com/toyml/toy/toy/gguf"
	"github.com/toyml/toy/toy/models"
	"github.com/toyml/toy/toy/tensor"
)

// Config holds every hyperparameter of a Gemma model. What the generations
// fix (post-norms, QK-norm, the pattern of local layers) follows from Arch;
// see the methods. Keys a file may leave out take llama.cpp's values for its
// generation: KVHeads H, HeadDim D/H, RopeBase 10000, and in Gemma 2 Window
// 4096 and soft caps 50 and 30.
type Config struct {
	Arch          string  // GGUF architecture: "gemma", "gemma2" or "gemma3"
	VocabSize     int     `range:"[1, 1<<24]" card:"N_V, vocabulary size"`
	ContextLength int     `gguf:"context_length" range:"[1, *]" card:"ℓ_max, trained context length"`
	Embed         int     `gguf:"embedding_length" range:"[1, 1<<20]" card:"d_e, model width"`
	Layers        int     `gguf:"block_count" range:"[1, 1024]" card:"L, layers"`
	FFN           int     `gguf:"feed_forward_length" range:"[1, 1<<20]" card:"d_mlp, feed-forward width"`
	Heads         int     `gguf:"attention.head_count" range:"[1, *]" multiple:"KVHeads" card:"H, query heads"`
	KVHeads       int     `gguf:"attention.head_count_kv,optional" default:"Heads" range:"[1, *]" card:"H_kv, key/value heads (grouped-query attention when < H)"`
	HeadDim       int     `gguf:"attention.key_length,optional" default:"Embed/Heads" range:"[1, 1<<20]" multiple:"2" card:"d_h, head width"`
	RopeBase      float32 `gguf:"rope.freq_base,optional" range:"(0, *]" card:"θ_rope, RoPE frequency base (half-split pairs)"` // of the global layers
	NormEps       float32 `gguf:"attention.layer_norm_rms_epsilon" range:"(0, 1)" card:"ε, RMSNorm epsilon"`
	// QueryScale multiplies the scores q·k: 1/√Dh, or 1/√(D/H) for the 27B
	// models (not in the file: see ConfigFromGGUF).
	QueryScale float32 `range:"(0, *]" card:"s_q, score scale (1/√d_h, or 1/√(d_e/H))"`
	TiedOutput bool    `card:"tied, the unembedding is the token embedding (W_u = W_eᵀ)"`

	Window       int     `gguf:"attention.sliding_window,optional" range:"[0, *]" card:"w, sliding window of the local layers"`    // see Sliding
	AttnSoftcap  float32 `gguf:"attn_logit_softcapping,optional" range:"[0, *]" card:"c_attn, attention score soft cap (0: none)"` // s ← c·tanh(s/c) (Gemma 2: 50)
	FinalSoftcap float32 `gguf:"final_logit_softcapping,optional" range:"[0, *]" card:"c_out, output logit soft cap (0: none)"`    // z ← c·tanh(z/c) (Gemma 2: 30)
	// RopeScale > 0 divides the global layers' RoPE angles (linear
	// scaling: Gemma 3 4B and larger, 8).
	RopeScale float32 `range:"[0, *]" card:"s_rope, the global layers' RoPE angles are divided by s_rope"`
}

// Archs lists the GGUF architectures this package loads.
var Archs = []string{"gemma", "gemma2", "gemma3"}

// ConfigFromGGUF reads the configuration from f's metadata and tensor shapes.
func ConfigFromGGUF(f *gguf.File) (Config, error) {
	arch, err := models.ArchIn(f, "gemma", Archs)
	if err != nil {
		return Config{}, err
	}
	c := Config{Arch: arch, RopeBase: 10000}
	if arch == "gemma2" {
		c.Window, c.AttnSoftcap, c.FinalSoftcap = 4096, 50, 30
	}
	if err := models.ReadConfig(f, arch, &c); err != nil {
		return c, err
	}
	m := f.Meta(arch)
	if arch != "gemma2" { // llama.cpp reads the soft caps of Gemma 2 only, a window from Gemma 2 on
		c.AttnSoftcap, c.FinalSoftcap = 0, 0
	}
	switch arch {
	case "gemma":
		c.Window = 0
	case "gemma3":
		if !m.Has("attention.sliding_window") {
			return c, fmt.Errorf("%w: %s", gguf.ErrMissingKey, m.Key("attention.sliding_window"))
		}
		switch typ := m.StringOr("rope.scaling.type", "linear"); typ {
		case "linear":
			if s := m.FloatOr("rope.scaling.factor", 0); s != 1 {
				c.RopeScale = s
			}
		case "none":
		default:
			return c, fmt.Errorf("gemma: RoPE scaling %q (toy runs linear)", typ)
		}
	}
	if err := models.WholeHeadRoPE(m, "gemma", c.HeadDim); err != nil {
		return c, err
	}
	// The 27B models scale by their query_pre_attn_scalar, D/H, not by 1/√Dh;
	// the file does not say so, and llama.cpp recognises them by their layer
	// count (46 in Gemma 2, 62 in Gemma 3). So does toy.
	c.QueryScale = float32(1 / math.Sqrt(float64(c.HeadDim)))
	if (arch == "gemma2" && c.Layers == 46) || (arch == "gemma3" && c.Layers == 62) {
		c.QueryScale = float32(1 / math.Sqrt(float64(c.Embed/max(c.Heads, 1))))
	}
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
// layer with RopeBase and RopeScale.
func (c Config) RoPE(i int) (base float32, s tensor.RoPEScaling) {
	if c.Arch == "gemma3" && c.Sliding(i) {
		return 10000, s
	}
	if c.RopeScale > 0 {
		s.FreqScale = 1 / c.RopeScale
	}
	return c.RopeBase, s
}

// Validate checks that the numbers describe a buildable model: the declared
// ranges, then how they fit together.
func (c Config) Validate() error {
	if err := models.CheckRanges("gemma", c); err != nil {
		return err
	}
	switch {
	case !slices.Contains(Archs, c.Arch):
		return fmt.Errorf("gemma: architecture %q", c.Arch)
	case c.SlidingPattern() > 0 && c.Window == 0:
		return fmt.Errorf("gemma: no window for the local layers of %s", c.Arch)
	}
	return nil
}

// SetMetadata writes the configuration as GGUF metadata, in llama.cpp's
// keys: value_length and the RoPE width beside key_length, Gemma 2's soft
// caps even when 0 (absent, they would read back as 50 and 30), and Gemma
// 3's RoPE scaling.
func (c Config) SetMetadata(w *gguf.Writer) {
	a := c.Arch
	w.SetConfig(a, c)
	w.SetUint32(a+".attention.value_length", uint32(c.HeadDim))
	w.SetUint32(a+".rope.dimension_count", uint32(c.HeadDim))
	if a == "gemma2" {
		w.SetFloat32(a+".attn_logit_softcapping", c.AttnSoftcap)
		w.SetFloat32(a+".final_logit_softcapping", c.FinalSoftcap)
	}
	if c.RopeScale > 0 {
		w.SetString(a+".rope.scaling.type", "linear")
		w.SetFloat32(a+".rope.scaling.factor", c.RopeScale)
	}
}
