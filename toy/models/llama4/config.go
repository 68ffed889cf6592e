// The flat configuration of a Llama 4 model, read from GGUF metadata.

package llama4

import (
	"errors"
	"fmt"

	"github.com/toyml/toy/toy/gguf"
	"github.com/toyml/toy/toy/tensor"
)

// Config holds every hyperparameter of a Llama 4 model.
type Config struct {
	VocabSize     int     // V
	ContextLength int     // trained context length
	Embed         int     // D
	Layers        int     // L
	FFN           int     // F: the width of the dense layers' SwiGLU
	ExpertFFN     int     // F_e: the width of each expert and of the shared expert
	Experts       int     // E: experts per mixture layer
	ExpertsUsed   int     // k: experts run per token (1 in Scout and Maverick)
	MoEPeriod     int     // layer l (from 0) is a mixture when (l+1) mod MoEPeriod = 0; 0: none
	Heads         int     // H
	KVHeads       int     // KV
	HeadDim       int     // Dh, all of it rotated
	RopeBase      float32 // θ base
	// RopeBaseChunked is θ of the chunked layers (GGUF rope.freq_base_swa);
	// 0 means RopeBase.
	RopeBaseChunked float32
	// RopeScale, when not 0, divides every RoPE angle (linear scaling, GGUF
	// rope.scaling.factor). RopeFreqs: the angles are also divided by
	// per-pair factors, rope_freqs.weight (Llama 3.1's long-context
	// scaling, which Llama 4's converter writes).
	RopeScale  float32
	RopeFreqs  bool
	NormEps    float32 // RMSNorm ε, also the L2 norm's
	TiedOutput bool    // the output head reuses the token embedding

	// Interleaved attention, as llama.cpp runs llama4 files (its constants
	// below; none of them is in the file).
	NoRoPEPeriod int // layer l has no RoPE when (l+1) mod NoRoPEPeriod = 0; 0: no layer has RoPE
	Chunk        int // Chunk > 0: the chunked layers attend within chunks of Chunk positions
	ChunkPeriod  int // layer l is chunked when l mod ChunkPeriod < ChunkPeriod−1; 0: every layer
	// The NoPE layers multiply each query at position p by
	// 1 + TempScale·ln(⌊(p + TempOffset)/TempFloor⌋ + 1); TempScale 0 is off.
	TempScale  float32
	TempFloor  int
	TempOffset float32
	// L2Norm RMS-normalises each query and key head of the RoPE layers
	// after RoPE, with no weights (all but the 128-expert Maverick).
	L2Norm bool
}

// llama.cpp's constants for llama4 files: Meta's attention_chunk_size,
// floor_scale and attn_scale, no RoPE in every fourth layer, and three
// chunked layers to one global.
const (
	DefaultChunk        = 8192
	DefaultChunkPeriod  = 4
	DefaultNoRoPEPeriod = 4
	DefaultTempScale    = 0.1
	DefaultTempFloor    = 8192
	DefaultTempOffset   = 1
)

// Arch is the GGUF architecture this package loads.
const Arch = "llama4"

// ErrUnsupported marks llama4 files that use features toy lacks.
var ErrUnsupported = errors.New("llama4: unsupported model feature")

// ConfigFromGGUF reads the configuration from f's metadata and tensor
// shapes.
func ConfigFromGGUF(f *gguf.File) (Config, error) {
	c, lacking, err := readConfig(f)
	if err == nil && len(lacking) > 0 {
		err = fmt.Errorf("%w: %s", ErrUnsupported, lacking[0])
	}
	return c, err
}

// readConfig reads the configuration as llama.cpp does, listing the
// features the file uses that toy does not run yet (describing a model
// needs no more).
func readConfig(f *gguf.File) (Config, []string, error) {
	var c Config
	arch, err := f.Architecture()
	if err != nil {
		return c, nil, err
	}
	if arch != Arch {
		return c, nil, fmt.Errorf("llama4: architecture %q is not llama4", arch)
	}
	m := f.Meta(Arch)
	d, err := m.Decoder()
	if err != nil {
		return c, nil, err
	}
	c.ContextLength, c.Embed, c.Layers, c.FFN, c.Heads, c.KVHeads = d.Context, d.Embed, d.Layers, d.FFN, d.Heads, d.KVHeads
	c.HeadDim = m.UintOr("attention.key_length", c.Embed/c.Heads)
	c.NormEps = m.Float("attention.layer_norm_rms_epsilon")
	c.RopeBase = m.FloatOr("rope.freq_base", 10000)
	c.Experts = m.Uint("expert_count")
	c.ExpertsUsed = m.Uint("expert_used_count")
	c.ExpertFFN = m.Uint("expert_feed_forward_length")
	c.MoEPeriod = m.Uint("interleave_moe_layer_step")
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
	c.Chunk, c.ChunkPeriod, c.NoRoPEPeriod = DefaultChunk, DefaultChunkPeriod, DefaultNoRoPEPeriod
	c.TempScale, c.TempFloor, c.TempOffset = DefaultTempScale, DefaultTempFloor, DefaultTempOffset
	if f.Has(Arch + ".attention.sliding_window_pattern") {
		if p, err := f.Int(Arch + ".attention.sliding_window_pattern"); err == nil {
			c.ChunkPeriod = p
		} else {
			lacking = append(lacking, "a per-layer chunking pattern")
		}
	}
	if b := m.FloatOr("rope.freq_base_swa", c.RopeBase); b != c.RopeBase {
		c.RopeBaseChunked = b
	}
	c.L2Norm = c.Experts != 128 // llama.cpp: every llama4 but the 17B-128E (Maverick)
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
	_, err = f.Info("rope_freqs.weight")
	c.RopeFreqs = err == nil
	return c, lacking, c.Validate()
}

// Validate checks that the numbers describe a buildable model.
func (c Config) Validate() error {
	const big = 1 << 20
	switch {
	case c.VocabSize <= 0 || c.VocabSize > 1<<24:
		return fmt.Errorf("llama4: vocabulary size %d", c.VocabSize)
	case c.Embed <= 0 || c.Embed > big || c.FFN <= 0 || c.FFN > big || c.ExpertFFN <= 0 || c.ExpertFFN > big:
		return fmt.Errorf("llama4: width %d, feed-forward width %d, expert width %d", c.Embed, c.FFN, c.ExpertFFN)
	case c.Experts <= 0 || c.Experts > tensor.MaxExperts || c.ExpertsUsed <= 0 || c.ExpertsUsed > c.Experts:
		return fmt.Errorf("llama4: %d experts used of %d", c.ExpertsUsed, c.Experts)
	case c.Layers <= 0 || c.Layers > 1024 || c.MoEPeriod < 0 || c.MoEPeriod > 1024:
		return fmt.Errorf("llama4: %d layers, a mixture every %d", c.Layers, c.MoEPeriod)
	case c.Heads <= 0 || c.KVHeads <= 0 || c.Heads%c.KVHeads != 0:
		return fmt.Errorf("llama4: %d heads with %d KV heads", c.Heads, c.KVHeads)
	case c.HeadDim <= 0 || c.HeadDim > big || c.HeadDim%2 != 0:
		return fmt.Errorf("llama4: head width %d", c.HeadDim)
	case c.ContextLength <= 0:
		return fmt.Errorf("llama4: context length %d", c.ContextLength)
	case !(c.NormEps > 0 && c.NormEps < 1):
		return fmt.Errorf("llama4: RMSNorm epsilon %g", c.NormEps)
	case !(c.RopeBase > 0) || !(c.RopeBaseChunked >= 0) || !(c.RopeScale >= 0 && c.RopeScale < 1e6):
		return fmt.Errorf("llama4: RoPE base %g (chunked layers %g), scale %g", c.RopeBase, c.RopeBaseChunked, c.RopeScale)
	case c.NoRoPEPeriod < 0 || c.Chunk < 0 || c.ChunkPeriod < 0 || c.NoRoPEPeriod > 1024 || c.ChunkPeriod > 1024:
		return fmt.Errorf("llama4: no RoPE every %d layers, chunks of %d every %d layers", c.NoRoPEPeriod, c.Chunk, c.ChunkPeriod)
	case c.TempScale != 0 && (c.TempFloor <= 0 || !(c.TempScale > -1e3 && c.TempScale < 1e3) || !(c.TempOffset >= 0 && c.TempOffset < 1e6)):
		return fmt.Errorf("llama4: attention temperature %g over %d positions from %g", c.TempScale, c.TempFloor, c.TempOffset)
	}
	return nil
}

// UsesRoPE reports whether layer l (from 0) rotates its queries and keys;
// the others (NoPE) see no positions but the causal mask's (llama.cpp: not
// when (l+1) mod NoRoPEPeriod = 0).
func (c Config) UsesRoPE(l int) bool { return c.NoRoPEPeriod > 0 && (l+1)%c.NoRoPEPeriod != 0 }

// Chunked reports whether layer l attends within chunks of Chunk positions
// (llama.cpp's chunked SWA layers: l mod P < P − 1; P = 0 chunks every
// layer).
func (c Config) Chunked(l int) bool {
	return c.Chunk > 0 && (c.ChunkPeriod == 0 || l%c.ChunkPeriod < c.ChunkPeriod-1)
}

// MoE reports whether layer l's feed-forward layer is the mixture of experts
// (llama.cpp: when (l+1) mod MoEPeriod = 0), not the dense SwiGLU.
func (c Config) MoE(l int) bool { return c.MoEPeriod > 0 && (l+1)%c.MoEPeriod == 0 }

// ropeBase is θ of layer l: the chunked layers' own base if the file gives
// one.
func (c Config) ropeBase(l int) float32 {
	if c.Chunked(l) && c.RopeBaseChunked != 0 {
		return c.RopeBaseChunked
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
// and types (counts uint32, epsilon and RoPE base float32). The chunks, the
// NoPE layers, the temperature and the L2 norm are llama.cpp's constants
// for the architecture and have no keys: a file written from a Config with
// other values loads back with llama.cpp's (but for ChunkPeriod).
func (c Config) SetMetadata(w *gguf.Writer) {
	a := Arch
	w.SetString("general.architecture", a)
	w.SetUint32(a+".context_length", uint32(c.ContextLength))
	w.SetUint32(a+".embedding_length", uint32(c.Embed))
	w.SetUint32(a+".block_count", uint32(c.Layers))
	w.SetUint32(a+".feed_forward_length", uint32(c.FFN))
	w.SetUint32(a+".expert_feed_forward_length", uint32(c.ExpertFFN))
	w.SetUint32(a+".expert_count", uint32(c.Experts))
	w.SetUint32(a+".expert_used_count", uint32(c.ExpertsUsed))
	w.SetUint32(a+".interleave_moe_layer_step", uint32(c.MoEPeriod))
	w.SetUint32(a+".attention.head_count", uint32(c.Heads))
	w.SetUint32(a+".attention.head_count_kv", uint32(c.KVHeads))
	w.SetUint32(a+".attention.key_length", uint32(c.HeadDim))
	w.SetUint32(a+".attention.value_length", uint32(c.HeadDim))
	w.SetFloat32(a+".attention.layer_norm_rms_epsilon", c.NormEps)
	if c.ChunkPeriod != DefaultChunkPeriod {
		w.SetUint32(a+".attention.sliding_window_pattern", uint32(c.ChunkPeriod))
	}
	w.SetUint32(a+".rope.dimension_count", uint32(c.HeadDim))
	w.SetFloat32(a+".rope.freq_base", c.RopeBase)
	if c.RopeBaseChunked != 0 {
		w.SetFloat32(a+".rope.freq_base_swa", c.RopeBaseChunked)
	}
	if c.RopeScale != 0 {
		w.SetString(a+".rope.scaling.type", "linear")
		w.SetFloat32(a+".rope.scaling.factor", c.RopeScale)
	}
}
