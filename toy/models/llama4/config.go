// The flat configuration of a Llama 4 model, declared with its GGUF keys
// (under "llama4.") and its card symbols.

package llama4

import (
	"cmp"
	"fmt"

	"github.com/toyml/toy/toy/gguf"
	"github.com/toyml/toy/toy/models"
	"github.com/toyml/toy/toy/tensor"
)

// Config holds every hyperparameter of a Llama 4 model. Absent from a file,
// KVHeads is H, HeadDim D/H and RopeBase 10000.
type Config struct {
	VocabSize     int `range:"[1, 1<<24]" card:"N_V, vocabulary size"`
	ContextLength int `gguf:"context_length" range:"[1, *]" card:"ℓ_max, trained context length"`
	Embed         int `gguf:"embedding_length" range:"[1, 1<<20]" card:"d_e, model width"`
	Layers        int `gguf:"block_count" range:"[1, 1024]" card:"L, layers"`
	FFN           int `gguf:"feed_forward_length" range:"[1, 1<<20]" card:"d_mlp, width of the dense layers' MLP"`
	ExpertFFN     int `gguf:"expert_feed_forward_length" range:"[1, 1<<20]" card:"d_exp, width of each expert and of the shared expert"`
	Experts       int `gguf:"expert_count" range:"[1, 1024]" card:"N_E, experts per mixture layer"`   // at most tensor.MaxExperts
	ExpertsUsed   int `gguf:"expert_used_count" range:"[1, Experts]" card:"k, experts run per token"` // 1 in Scout and Maverick
	// MoePeriod: layer l (from 0) is a mixture when (l+1) mod MoePeriod = 0; 0: none.
	MoePeriod int     `gguf:"interleave_moe_layer_step" range:"[0, 1024]" card:"P_moe, layer l is a mixture when l mod P_moe = 0 (0: none)"`
	Heads     int     `gguf:"attention.head_count" range:"[1, *]" multiple:"KVHeads" card:"H, query heads"`
	KVHeads   int     `gguf:"attention.head_count_kv,optional" default:"Heads" range:"[1, *]" card:"H_kv, key/value heads"`
	HeadDim   int     `gguf:"attention.key_length,optional" default:"Embed/Heads" range:"[1, 1<<20]" multiple:"2" card:"d_h, head width, all of it rotated"`
	RopeBase  float32 `gguf:"rope.freq_base,optional" range:"(0, *]" card:"θ_rope, RoPE frequency base"`
	// ChunkRopeBase is θ of the chunked layers; 0 means RopeBase.
	ChunkRopeBase float32 `gguf:"rope.freq_base_swa,optional" range:"[0, *]" card:"θ_c, RoPE base of the chunked layers (0: θ_rope)"`
	// RopeScale, when not 0, divides every RoPE angle (linear scaling, GGUF
	// rope.scaling.factor). RopeFreqs: the angles are also divided by
	// per-pair factors, rope_freqs.weight (Llama 3.1's long-context
	// scaling, which Llama 4's converter writes).
	RopeScale float32 `range:"[0, 1e6)" card:"s_rope, every RoPE angle is divided by s_rope (0: none)"`
	RopeFreqs bool    `card:"f_rope, pair i's RoPE angle is divided by the frequency factor f[i]"`

	// Interleaved attention, as llama.cpp runs llama4 files (its constants
	// below; none of them is in the file). Layer l has no RoPE when (l+1)
	// mod NoRopePeriod = 0 (NoRopePeriod 0: no layer has RoPE); with Chunk
	// > 0, layer l attends within chunks of Chunk positions when l mod
	// ChunkPeriod < ChunkPeriod−1 (ChunkPeriod 0: every layer). The NoPE
	// layers multiply each query at position p by 1 + TempScale·ln(⌊(p +
	// TempOffset)/TempFloor⌋ + 1); TempScale 0 is off.
	NoRopePeriod int     `range:"[0, 1024]" card:"P_nope, layer l has no RoPE when l mod P_nope = 0 (0: no layer has RoPE)"`
	Chunk        int     `range:"[0, *]" card:"c, the chunked layers attend within chunks of c positions (0: none)"`
	ChunkPeriod  int     `range:"[0, 1024]" card:"P_c, layer l is chunked when (l − 1) mod P_c < P_c − 1 (0: every layer)"`
	TempScale    float32 `range:"(-1e3, 1e3)" card:"τ, the NoPE layers' attention temperature (0: none)"`
	TempFloor    int     `card:"n_τ, the temperature's step, in positions"`
	TempOffset   float32 `card:"o_τ, the temperature counts positions from o_τ"`
	// L2Norm RMS-normalises each query and key head of the RoPE layers
	// after RoPE, with no weights (all but the 128-expert Maverick).
	L2Norm bool `card:"l2, the RoPE layers RMS-normalise each query and key head after RoPE"`

	NormEps    float32 `gguf:"attention.layer_norm_rms_epsilon" range:"(0, 1)" card:"ε, RMSNorm epsilon"` // also the L2 norm's
	TiedOutput bool    `card:"tied, the unembedding is the token embedding (W_u = W_eᵀ)"`
}

// llama.cpp's constants for llama4 files: Meta's attention_chunk_size,
// floor_scale and attn_scale, no RoPE in every fourth layer, and three
// chunked layers to one global.
const (
	DefaultChunk        = 8192
	DefaultChunkPeriod  = 4
	DefaultNoRopePeriod = 4
	DefaultTempScale    = 0.1
	DefaultTempFloor    = 8192
	DefaultTempOffset   = 1
)

// Arch is the GGUF architecture this package loads.
const Arch = "llama4"

// ErrUnsupported marks llama4 files that use features toy lacks.
var ErrUnsupported = models.ErrUnsupported

// ConfigFromGGUF reads the configuration from f's metadata and tensor
// shapes.
func ConfigFromGGUF(f *gguf.File) (Config, error) {
	c, lacking, err := readConfig(f)
	return c, cmp.Or(err, models.Unsupported(Arch, lacking))
}

// readConfig reads the configuration as llama.cpp does, listing the
// features the file uses that toy does not run yet (describing a model
// needs no more).
func readConfig(f *gguf.File) (Config, []string, error) {
	c := Config{RopeBase: 10000, Chunk: DefaultChunk, ChunkPeriod: DefaultChunkPeriod, NoRopePeriod: DefaultNoRopePeriod,
		TempScale: DefaultTempScale, TempFloor: DefaultTempFloor, TempOffset: DefaultTempOffset}
	if err := models.ReadConfig(f, Arch, &c); err != nil {
		return c, nil, err
	}
	m := f.Meta(Arch)
	if c.ChunkRopeBase == c.RopeBase {
		c.ChunkRopeBase = 0
	}
	c.L2Norm = c.Experts != 128 // llama.cpp: every llama4 but the 17B-128E (Maverick)
	c.RopeFreqs = models.HasTensor(f, "rope_freqs.weight")
	var lacking []string
	if m.UintOr("attention.value_length", c.HeadDim) != c.HeadDim || m.UintOr("rope.dimension_count", c.HeadDim) != c.HeadDim {
		lacking = append(lacking, "value heads or a RoPE width other than the key heads' width")
	}
	// sliding_window 0 (MobileLLM's converter writes it) turns llama.cpp's
	// chunks off and RoPE on in all but the last layer, and leaves the
	// temperature's scale 0, on which its release aborts
	// (GGML_ASSERT(f_attn_temp_scale != 0.0f)): nothing to gate against. Any
	// other value is ignored: the chunks are 8192 positions.
	if m.Has("attention.sliding_window") && m.Uint("attention.sliding_window") == 0 {
		lacking = append(lacking, "llama4 without chunked attention (attention.sliding_window 0)")
	}
	if m.Has("attention.sliding_window_pattern") {
		if p, err := f.Int(m.Key("attention.sliding_window_pattern")); err == nil {
			c.ChunkPeriod = p
		} else {
			lacking = append(lacking, "a per-layer chunking pattern")
		}
	}
	factor := m.FloatOr("rope.scaling.factor", m.FloatOr("rope.scale_linear", 0))
	switch typ := m.StringOr("rope.scaling.type", "linear"); {
	case typ == "none" || factor == 0 || factor == 1:
	case typ == "linear":
		c.RopeScale = factor
	default:
		lacking = append(lacking, fmt.Sprintf("RoPE scaling %q", typ))
	}
	if a := m.FloatOr("rope.scaling.attn_factor", 1); a != 1 {
		lacking = append(lacking, "a RoPE attention factor")
	}
	return c, lacking, cmp.Or(m.Err(), c.Validate())
}

// Validate checks that the numbers describe a buildable model: the declared
// ranges, then how they fit together.
func (c Config) Validate() error {
	if err := models.CheckRanges(Arch, c); err != nil {
		return err
	}
	if c.TempScale != 0 && (c.TempFloor <= 0 || !(c.TempOffset >= 0 && c.TempOffset < 1e6)) {
		return fmt.Errorf("llama4: attention temperature %g over %d positions from %g", c.TempScale, c.TempFloor, c.TempOffset)
	}
	return nil
}

// UsesRoPE reports whether layer l (from 0) rotates its queries and keys;
// the others (NoPE) see no positions but the causal mask's (llama.cpp: not
// when (l+1) mod NoRopePeriod = 0).
func (c Config) UsesRoPE(l int) bool { return c.NoRopePeriod > 0 && (l+1)%c.NoRopePeriod != 0 }

// Chunked reports whether layer l attends within chunks of Chunk positions
// (llama.cpp's chunked SWA layers: l mod P < P − 1; P = 0 chunks every
// layer).
func (c Config) Chunked(l int) bool {
	return c.Chunk > 0 && (c.ChunkPeriod == 0 || l%c.ChunkPeriod < c.ChunkPeriod-1)
}

// MoE reports whether layer l's feed-forward layer is the mixture of experts
// (llama.cpp: when (l+1) mod MoePeriod = 0), not the dense SwiGLU.
func (c Config) MoE(l int) bool { return c.MoePeriod > 0 && (l+1)%c.MoePeriod == 0 }

// ropeBase is θ of layer l: the chunked layers' own base if the file gives
// one.
func (c Config) ropeBase(l int) float32 {
	if c.Chunked(l) && c.ChunkRopeBase != 0 {
		return c.ChunkRopeBase
	}
	return c.RopeBase
}

// RoPEScaling returns the linear scaling tensor.RoPEWith applies for c
// (none when RopeScale is 0).
func (c Config) RoPEScaling() tensor.RoPEScaling {
	if c.RopeScale == 0 {
		return tensor.RoPEScaling{}
	}
	return tensor.RoPEScaling{FreqScale: 1 / c.RopeScale}
}

// SetMetadata writes the configuration as GGUF metadata, in llama.cpp's keys
// and types. The chunks, the NoPE layers, the temperature and the L2 norm
// are llama.cpp's constants for the architecture and have no keys: a file
// written from a Config with other values loads back with llama.cpp's (but
// for ChunkPeriod).
func (c Config) SetMetadata(w *gguf.Writer) {
	w.SetConfig(Arch, c)
	w.SetUint32(Arch+".attention.value_length", uint32(c.HeadDim))
	w.SetUint32(Arch+".rope.dimension_count", uint32(c.HeadDim))
	if c.ChunkPeriod != DefaultChunkPeriod {
		w.SetUint32(Arch+".attention.sliding_window_pattern", uint32(c.ChunkPeriod))
	}
	if c.RopeScale != 0 {
		w.SetString(Arch+".rope.scaling.type", "linear")
		w.SetFloat32(Arch+".rope.scaling.factor", c.RopeScale)
	}
}
