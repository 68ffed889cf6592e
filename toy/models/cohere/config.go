// The flat configuration of a Command R, Command R+ or Command R7B model,
// declared with its GGUF keys and card symbols.

package cohere

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/toyml/toy/toy/gguf"
	"github.com/toyml/toy/toy/models"
)

// Archs lists the GGUF architectures this package loads.
var Archs = []string{"command-r", "cohere2"}

// ErrUnsupported marks files of this family that use features toy lacks.
var ErrUnsupported = models.ErrUnsupported

// Config holds every hyperparameter of a Command R, Command R+ or Command
// R7B model. Absent from a file, KVHeads is H and RopeBase 10000.
type Config struct {
	Arch          string  // "command-r" or "cohere2"
	VocabSize     int     `range:"[1, 1<<24]" card:"N_V, vocabulary size"`
	ContextLength int     `gguf:"context_length" range:"[1, *]" card:"ℓ_max, trained context length"`
	Embed         int     `gguf:"embedding_length" range:"[1, 1<<20]" multiple:"2*Heads" card:"d_e, model width"`
	Layers        int     `gguf:"block_count" range:"[1, 1024]" card:"L, layers"`
	FFN           int     `gguf:"feed_forward_length" range:"[1, 1<<20]" card:"d_mlp, feed-forward width"`
	Heads         int     `gguf:"attention.head_count" range:"[1, *]" multiple:"KVHeads" card:"H, query heads, each d_h = d_e/H wide"`
	KVHeads       int     `gguf:"attention.head_count_kv,optional" default:"Heads" range:"[1, *]" card:"H_kv, key/value heads (grouped-query attention when < H)"`
	RopeBase      float32 `gguf:"rope.freq_base,optional" range:"(1, 1e12)" card:"θ_rope, RoPE frequency base"`
	NormEps       float32 `gguf:"attention.layer_norm_epsilon" range:"(0, 1)" card:"ε, LayerNorm epsilon"`
	LogitScale    float32 `gguf:"logit_scale,optional" range:"[0, 1e6)" card:"s_u, the logits are multiplied by s_u (0: 1)"` // required in cohere2

	// QKNorm (Command R+): each query and key head is LayerNormed before
	// RoPE, without an offset, head h scaled by row h of attn_q_norm
	// [H, Dh] or attn_k_norm [KV, Dh]. The file's tensors decide it.
	QKNorm bool `card:"qk_norm, each query and key head is LayerNormed before RoPE"`

	// Command R7B: layer l attends within the last Window positions, with
	// RoPE, when l mod SlidingPattern < SlidingPattern − 1; the others
	// attend to everything, without positions.
	Window         int `gguf:"attention.sliding_window,optional" range:"[0, 1<<24]" card:"w, the local layers' sliding window, in positions"`
	SlidingPattern int `card:"p, layer l is local when l mod p < p − 1 (every layer when p = 0)"`
}

// HeadDim returns Dh = D/H.
func (c Config) HeadDim() int { return c.Embed / max(c.Heads, 1) }

// Sliding reports whether layer i is local: windowed, with RoPE.
func (c Config) Sliding(i int) bool {
	return c.Window > 0 && (c.SlidingPattern == 0 || i%c.SlidingPattern < c.SlidingPattern-1)
}

// RoPE reports whether layer i rotates its queries and keys: every layer of
// Command R, the local layers of Command R7B.
func (c Config) RoPE(i int) bool { return c.Arch == "command-r" || c.Sliding(i) }

// ConfigFromGGUF reads the configuration from f's metadata and tensor
// shapes. Files that need features toy lacks (RoPE scaling or frequency
// factors, query/key norms in a Command R7B) are refused with
// ErrUnsupported.
func ConfigFromGGUF(f *gguf.File) (Config, error) {
	c, lacking, err := readConfig(f)
	return c, cmp.Or(err, models.Unsupported(c.Arch, lacking))
}

// readConfig reads the configuration, listing the features the file uses
// that toy does not run yet (describing a model needs no more).
func readConfig(f *gguf.File) (Config, []string, error) {
	arch, err := models.ArchIn(f, "cohere", Archs)
	if err != nil {
		return Config{}, nil, err
	}
	c := Config{Arch: arch, RopeBase: 10000}
	if err := models.ReadConfig(f, arch, &c); err != nil {
		return c, nil, err
	}
	m := f.Meta(arch)
	var lacking []string
	if arch == "cohere2" {
		for _, k := range []string{"logit_scale", "attention.sliding_window"} {
			if !m.Has(k) {
				return c, nil, fmt.Errorf("%w: %s", gguf.ErrMissingKey, m.Key(k))
			}
		}
		c.SlidingPattern = 4 // llama.cpp's default
		if m.Has("attention.sliding_window_pattern") {
			if p, err := f.Uint32(m.Key("attention.sliding_window_pattern")); err == nil {
				c.SlidingPattern = int(p)
			} else {
				lacking = append(lacking, "a per-layer sliding-window pattern")
			}
		}
	} else {
		c.Window = 0 // Command R has none; llama.cpp ignores the key
	}
	lacking = append(lacking, models.RoPEScalingLacking(m, "none")...)
	if err := models.WholeHeadRoPE(m, "cohere", c.HeadDim()); err != nil {
		return c, nil, err
	}
	// Command R+ normalises each query and key head when the file has
	// the weights; llama.cpp loads them in models of 64 layers or more
	// (and requires them there), toy wherever they are.
	for _, name := range []string{"blk.0.attn_q_norm.weight", "blk.0.attn_k_norm.weight"} {
		c.QKNorm = c.QKNorm || models.HasTensor(f, name)
	}
	if c.QKNorm && arch == "cohere2" {
		c.QKNorm = false
		lacking = append(lacking, "query/key norms (attn_q_norm, attn_k_norm) in a cohere2 model")
	}
	for _, name := range []string{"rope_freqs.weight", "blk.0.rope_freqs.weight"} {
		if models.HasTensor(f, name) {
			lacking = append(lacking, "tensor "+name)
		}
	}
	return c, lacking, c.Validate()
}

// Validate checks that the numbers describe a buildable model: the
// architecture, the declared ranges, then how they fit together.
func (c Config) Validate() error {
	if !slices.Contains(Archs, c.Arch) {
		return fmt.Errorf("cohere: architecture %q", c.Arch)
	}
	if err := models.CheckRanges(c.Arch, c); err != nil {
		return err
	}
	switch {
	case c.Arch == "cohere2" && (c.Window == 0 || c.SlidingPattern < 0 || c.SlidingPattern > 1024):
		return fmt.Errorf("cohere: window %d every %d layers", c.Window, c.SlidingPattern)
	case c.Arch == "command-r" && c.Window != 0:
		return fmt.Errorf("cohere: a command-r model with a window of %d", c.Window)
	case c.Arch == "cohere2" && c.QKNorm:
		return fmt.Errorf("cohere: a cohere2 model with query/key norms (Command R+'s are command-r)")
	}
	return nil
}

// SetMetadata writes the configuration as GGUF metadata, in llama.cpp's keys:
// RoPE over whole heads, and with a window its pattern (0 too).
func (c Config) SetMetadata(w *gguf.Writer) {
	w.SetConfig(c.Arch, c)
	w.SetUint32(c.Arch+".rope.dimension_count", uint32(c.HeadDim()))
	if c.Window > 0 {
		w.SetUint32(c.Arch+".attention.sliding_window_pattern", uint32(c.SlidingPattern))
	}
}
