// The flat configuration of a Phi-3-family model, declared with its GGUF keys
// (under "phi3.") and its card symbols.

package phi3

import (
	"cmp"
	"fmt"

	"github.com/toyml/toy/toy/gguf"
	"github.com/toyml/toy/toy/models"
	"github.com/toyml/toy/toy/tensor"
)

// Config holds every hyperparameter of a Phi-3-family model. Absent from a
// file, KVHeads is H, HeadDim D/H, RopeDim Dh, RopeBase 10000 and
// RopeOrigContext the context length.
type Config struct {
	VocabSize     int     `range:"[1, 1<<24]" card:"N_V, vocabulary size"`
	ContextLength int     `gguf:"context_length" range:"[1, *]" card:"ℓ_max, trained context length"` // 131072 for the 128k models
	Embed         int     `gguf:"embedding_length" range:"[1, 1<<20]" card:"d_e, model width"`
	Layers        int     `gguf:"block_count" range:"[1, 1024]" card:"L, layers"`
	FFN           int     `gguf:"feed_forward_length" range:"[1, 1<<20]" card:"d_mlp, feed-forward width"` // F (ffn_up holds 2F rows: gate, then up)
	Heads         int     `gguf:"attention.head_count" range:"[1, *]" multiple:"KVHeads" card:"H, query heads"`
	KVHeads       int     `gguf:"attention.head_count_kv,optional" default:"Heads" range:"[1, *]" card:"H_kv, key/value heads (grouped-query attention when < H)"`
	HeadDim       int     `gguf:"attention.key_length,optional" default:"Embed/Heads" range:"[1, 1<<20]" card:"d_h, head width"`
	RopeDim       int     `gguf:"rope.dimension_count,optional" default:"HeadDim" range:"[1, HeadDim]" multiple:"2" card:"d_rope, features rotated per head, from the first"` // Dh, or 3/4 of it in Phi-4-mini
	RopeBase      float32 `gguf:"rope.freq_base,optional" range:"(0, *]" card:"θ_rope, RoPE frequency base"`
	NormEps       float32 `gguf:"attention.layer_norm_rms_epsilon" range:"(0, 1)" card:"ε, RMSNorm epsilon"`
	TiedOutput    bool    `card:"tied, the unembedding is the token embedding (W_u = W_eᵀ)"` // Phi-4-mini

	// LongRoPE: with RopeFactors the file holds rope_factors_short and
	// rope_factors_long [R/2], and a context longer than RopeOrigContext
	// runs with the long ones (see LongFactors). RopeAttnFactor multiplies
	// RoPE's cos and sin (0 means 1).
	RopeFactors     bool    `card:"longrope, LongRoPE: pair i's angle is divided by f_s[i] or f_l[i]"`
	RopeOrigContext int     `gguf:"rope.scaling.original_context_length,optional" default:"ContextLength" range:"[0, *]" card:"ℓ_orig, original context: a longer context n_ctx runs with f_l"`
	RopeAttnFactor  float32 `gguf:"rope.scaling.attn_factor,optional" range:"[0, 100)" card:"m_rope, RoPE's cos and sin are multiplied by m_rope (0: by 1)"`
}

// Arch is the GGUF architecture this package loads.
const Arch = "phi3"

// ErrUnsupported marks Phi-3 files that use features toy lacks.
var ErrUnsupported = models.ErrUnsupported

// ConfigFromGGUF reads the configuration from f's metadata and tensor shapes.
// Files that ask for a RoPE scaling other than LongRoPE's factors (linear or
// YaRN by metadata, which no Phi release has) are refused with ErrUnsupported.
func ConfigFromGGUF(f *gguf.File) (Config, error) {
	c, lacking, err := readConfig(f)
	return c, cmp.Or(err, models.Unsupported(Arch, lacking))
}

// readConfig reads the configuration, listing the features the file uses
// that toy does not run yet (describing a model needs no more).
func readConfig(f *gguf.File) (Config, []string, error) {
	c := Config{RopeBase: 10000}
	if err := models.ReadConfig(f, Arch, &c); err != nil {
		return c, nil, err
	}
	m := f.Meta(Arch)
	// LongRoPE is the factor tensors; a scaling by metadata must be the
	// identity (llama.cpp would also stretch every angle by a factor).
	lacking := models.RoPEScalingLacking(m, "longrope")
	c.RopeFactors = models.HasTensor(f, "rope_factors_long.weight")
	return c, lacking, cmp.Or(m.Err(), c.Validate())
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

// Validate checks that the numbers describe a buildable model: the declared
// ranges, then how they fit together.
func (c Config) Validate() error {
	if err := models.CheckRanges(Arch, c); err != nil {
		return err
	}
	switch {
	case c.RopeFactors && c.RopeOrigContext == 0:
		return fmt.Errorf("phi3: LongRoPE over an original context of %d", c.RopeOrigContext)
	}
	return nil
}

// SetMetadata writes the configuration as GGUF metadata, in llama.cpp's keys
// and types; value_length beside key_length, as llama.cpp reads both. The
// LongRoPE factors are tensors, written with the weights.
func (c Config) SetMetadata(w *gguf.Writer) {
	w.SetConfig(Arch, c)
	w.SetUint32(Arch+".attention.value_length", uint32(c.HeadDim))
}
