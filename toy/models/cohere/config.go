// The flat configuration of a Command R, Command R+ or Command R7B model,
// read from GGUF metadata and tensor names.

package cohere

import (
	"errors"
	"fmt"
	"slices"

	"github.com/toyml/toy/toy/gguf"
)

// Archs lists the GGUF architectures this package loads.
var Archs = []string{"command-r", "cohere2"}

// ErrUnsupported marks files of this family that use features toy lacks.
var ErrUnsupported = errors.New("cohere: unsupported model feature")

// Config holds every hyperparameter of a Command R, Command R+ or Command
// R7B model.
type Config struct {
	Arch          string  // "command-r" or "cohere2"
	VocabSize     int     // V
	ContextLength int     // trained context length
	Embed         int     // D
	Layers        int     // L
	FFN           int     // F
	Heads         int     // H
	KVHeads       int     // KV
	RopeBase      float32 // θ base
	NormEps       float32 // LayerNorm ε
	LogitScale    float32 // the logits are multiplied by it (0 means 1)

	// QKNorm (Command R+): each query and key head is LayerNormed before
	// RoPE, without an offset, head h scaled by row h of attn_q_norm
	// [H, Dh] or attn_k_norm [KV, Dh]. The file's tensors decide it.
	QKNorm bool

	// Command R7B: layer l attends within the last Window positions, with
	// RoPE, when l mod SlidingPattern < SlidingPattern − 1; the others
	// attend to everything, without positions.
	Window, SlidingPattern int
}

// HeadDim returns Dh = D/H.
func (c Config) HeadDim() int { return c.Embed / c.Heads }

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
	if !slices.Contains(Archs, arch) {
		return c, nil, fmt.Errorf("cohere: architecture %q is not one of %v", arch, Archs)
	}
	c.Arch = arch
	m := f.Meta(arch)
	d, err := m.Decoder()
	if err != nil {
		return c, nil, err
	}
	c.ContextLength, c.Embed, c.Layers, c.FFN, c.Heads, c.KVHeads = d.Context, d.Embed, d.Layers, d.FFN, d.Heads, d.KVHeads
	c.NormEps = m.Float("attention.layer_norm_epsilon")
	c.RopeBase = m.FloatOr("rope.freq_base", 10000)
	rot := m.UintOr("rope.dimension_count", c.HeadDim())
	var lacking []string
	if arch == "cohere2" {
		c.LogitScale = m.Float("logit_scale")
		c.Window = m.Uint("attention.sliding_window")
		c.SlidingPattern = 4 // llama.cpp's default
		if m.Has("attention.sliding_window_pattern") {
			if p, err := f.Uint32(m.Key("attention.sliding_window_pattern")); err == nil {
				c.SlidingPattern = int(p)
			} else {
				lacking = append(lacking, "a per-layer sliding-window pattern")
			}
		}
	} else {
		c.LogitScale = m.FloatOr("logit_scale", 0)
	}
	if t := m.StringOr("rope.scaling.type", "none"); t != "none" && m.FloatOr("rope.scaling.factor", 0) > 1 {
		lacking = append(lacking, fmt.Sprintf("RoPE scaling %q", t))
	}
	if err := m.Err(); err != nil {
		return c, nil, err
	}
	if rot != c.HeadDim() {
		return c, nil, fmt.Errorf("cohere: RoPE over %d features of heads %d wide (they must be equal)", rot, c.HeadDim())
	}
	// Command R+ normalises each query and key head when the file has
	// the weights; llama.cpp loads them in models of 64 layers or more
	// (and requires them there), toy wherever they are.
	for _, name := range []string{"blk.0.attn_q_norm.weight", "blk.0.attn_k_norm.weight"} {
		if _, err := f.Info(name); err == nil {
			c.QKNorm = true
		}
	}
	if c.QKNorm && arch == "cohere2" {
		c.QKNorm = false
		lacking = append(lacking, "query/key norms (attn_q_norm, attn_k_norm) in a cohere2 model")
	}
	for _, name := range []string{"rope_freqs.weight", "blk.0.rope_freqs.weight"} {
		if _, err := f.Info(name); err == nil {
			lacking = append(lacking, "tensor "+name)
		}
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
	case !slices.Contains(Archs, c.Arch):
		return fmt.Errorf("cohere: architecture %q", c.Arch)
	case c.VocabSize <= 0 || c.VocabSize > 1<<24:
		return fmt.Errorf("cohere: vocabulary size %d", c.VocabSize)
	case c.Embed <= 0 || c.Embed > big || c.FFN <= 0 || c.FFN > big:
		return fmt.Errorf("cohere: width %d, feed-forward width %d", c.Embed, c.FFN)
	case c.Layers <= 0 || c.Layers > 1024:
		return fmt.Errorf("cohere: %d layers", c.Layers)
	case c.Heads <= 0 || c.KVHeads <= 0 || c.Heads%c.KVHeads != 0 || c.Embed%c.Heads != 0 || c.HeadDim()%2 != 0:
		return fmt.Errorf("cohere: %d heads with %d KV heads, width %d", c.Heads, c.KVHeads, c.Embed)
	case c.ContextLength <= 0:
		return fmt.Errorf("cohere: context length %d", c.ContextLength)
	case !(c.NormEps > 0 && c.NormEps < 1):
		return fmt.Errorf("cohere: LayerNorm epsilon %g", c.NormEps)
	case !(c.RopeBase > 1 && c.RopeBase < 1e12):
		return fmt.Errorf("cohere: RoPE base %g", c.RopeBase)
	case !(c.LogitScale >= 0 && c.LogitScale < 1e6):
		return fmt.Errorf("cohere: logit scale %g", c.LogitScale)
	case c.Arch == "cohere2" && (c.Window <= 0 || c.Window > 1<<24 || c.SlidingPattern < 0 || c.SlidingPattern > 1024):
		return fmt.Errorf("cohere: window %d every %d layers", c.Window, c.SlidingPattern)
	case c.Arch == "command-r" && c.Window != 0:
		return fmt.Errorf("cohere: a command-r model with a window of %d", c.Window)
	case c.Arch == "cohere2" && c.QKNorm:
		return fmt.Errorf("cohere: a cohere2 model with query/key norms (Command R+'s are command-r)")
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
	w.SetFloat32(a+".attention.layer_norm_epsilon", c.NormEps)
	w.SetUint32(a+".rope.dimension_count", uint32(c.HeadDim()))
	w.SetFloat32(a+".rope.freq_base", c.RopeBase)
	if c.LogitScale != 0 {
		w.SetFloat32(a+".logit_scale", c.LogitScale)
	}
	if c.Window > 0 {
		w.SetUint32(a+".attention.sliding_window", uint32(c.Window))
		w.SetUint32(a+".attention.sliding_window_pattern", uint32(c.SlidingPattern))
	}
}
