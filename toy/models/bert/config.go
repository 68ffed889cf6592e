// The flat configuration of a BERT-family encoder, read from GGUF metadata,
// and the pooling that makes one vector of its states.

package bert

import (
	"errors"
	"fmt"
	"slices"

	"github.com/toyml/toy/toy/gguf"
)

// Archs lists the GGUF architectures this package loads.
var Archs = []string{"bert", "nomic-bert"}

// ErrUnsupported marks files of this family that use features toy lacks.
var ErrUnsupported = errors.New("bert: unsupported model feature")

// Pooling says how the T final states of a sequence become one embedding.
// The values are llama.cpp's (enum llama_pooling_type), as GGUF's
// ARCH.pooling_type stores them.
type Pooling int

// The pooling types.
const (
	PoolNone Pooling = 0 // no pooling: one state per token
	PoolMean Pooling = 1 // the mean of the T states
	PoolCLS  Pooling = 2 // the first state, the [CLS] token's
	PoolLast Pooling = 3 // the last state
	PoolRank Pooling = 4 // a reranker's scores from the [CLS] state (Model.Scores)
)

var poolingNames = []string{"none", "mean", "cls", "last", "rank"}

// String returns the pooling's name: "none", "mean", "cls", "last", "rank".
func (p Pooling) String() string {
	if p >= 0 && int(p) < len(poolingNames) {
		return poolingNames[p]
	}
	return fmt.Sprintf("pooling(%d)", int(p))
}

// ParsePooling reads a pooling name as String writes it.
func ParsePooling(s string) (Pooling, error) {
	if i := slices.Index(poolingNames, s); i >= 0 {
		return Pooling(i), nil
	}
	return 0, fmt.Errorf("bert: pooling %q: want none, mean, cls, last or rank", s)
}

// Config holds every hyperparameter of a BERT-family encoder.
type Config struct {
	Arch          string  // "bert" or "nomic-bert"
	VocabSize     int     // V
	ContextLength int     // P: positions (bert: rows of the position table)
	Embed         int     // D
	Layers        int     // L
	FFN           int     // F
	Heads         int     // H; Dh = D/H
	TokenTypes    int     // TT: rows of token_types (0: the file has none)
	NormEps       float32 // LayerNorm ε
	Pooling       Pooling // how Embed makes one vector of the T states
	// A reranker's head (rank pooling): the pooler (tensor cls) and the
	// classifier (cls.output) it has, and its C outputs
	// (ARCH.classifier.output_labels; 1 when absent).
	Pooler, Classifier bool
	Labels             int // 0 unless the pooling is rank
	// Causal masks each token's view of the tokens after it, as in a
	// decoder. No BERT is trained so; it is llama.cpp's reading of a file
	// without ARCH.attention.causal.
	Causal   bool
	RopeBase float32 // nomic-bert: RoPE θ base (0 for bert, which has a position table)

	// ApproxGELU computes GELU as llama.cpp does (tensor.GELU: the tanh
	// form through an fp16 table) instead of Hugging Face's exact x·Φ(x).
	// It is not in the file: set it to reproduce llama.cpp's numbers.
	ApproxGELU bool
}

// Nomic reports whether c is nomic-bert: rotary positions, fused QKV,
// SwiGLU, no biases on the projections.
func (c Config) Nomic() bool { return c.Arch == "nomic-bert" }

// HeadDim returns Dh = D/H.
func (c Config) HeadDim() int { return c.Embed / c.Heads }

// ConfigFromGGUF reads the configuration from f's metadata and tensor shapes.
func ConfigFromGGUF(f *gguf.File) (Config, error) {
	c, lacking, err := readConfig(f)
	if err == nil && len(lacking) > 0 {
		err = fmt.Errorf("%w: %s", ErrUnsupported, lacking[0])
	}
	return c, err
}

// readConfig reads the configuration, listing the features the file uses
// that toy does not run (describing a model needs no more).
func readConfig(f *gguf.File) (Config, []string, error) {
	var c Config
	arch, err := f.Architecture()
	if err != nil {
		return c, nil, err
	}
	if !slices.Contains(Archs, arch) {
		return c, nil, fmt.Errorf("bert: architecture %q is not one of %v", arch, Archs)
	}
	c.Arch = arch
	m := f.Meta(arch)
	c.ContextLength = m.Uint("context_length")
	c.Embed = m.Uint("embedding_length")
	c.Layers = m.Uint("block_count")
	c.FFN = m.Uint("feed_forward_length")
	c.Heads = m.Uint("attention.head_count")
	c.NormEps = m.Float("attention.layer_norm_epsilon")
	c.Pooling = Pooling(m.UintOr("pooling_type", int(PoolNone)))
	c.Causal = m.BoolOr("attention.causal", true)
	if c.Nomic() {
		c.RopeBase = m.FloatOr("rope.freq_base", 10000)
	}
	if err := m.Err(); err != nil {
		return c, nil, err
	}
	var lacking []string
	if c.Heads > 0 && c.Embed%c.Heads == 0 && m.UintOr("rope.dimension_count", c.Embed/c.Heads) != c.Embed/c.Heads && c.Nomic() {
		lacking = append(lacking, "RoPE on part of each head")
	}
	if m.UintOr("moe_every_n_layers", 0) > 0 {
		lacking = append(lacking, "a mixture of experts (nomic-bert-moe)")
	}
	if c.Pooling == PoolRank {
		c.Labels = 1
		if labels, err := f.Strings(arch + ".classifier.output_labels"); err == nil && len(labels) > 0 {
			c.Labels = len(labels)
		}
	}
	_, err = f.Info("cls.weight")
	c.Pooler = err == nil
	_, err = f.Info("cls.output.weight")
	c.Classifier = err == nil
	emb, err := f.Info("token_embd.weight")
	if err != nil {
		return c, nil, err
	}
	c.VocabSize = emb.Shape()[0]
	if t, err := f.Info("token_types.weight"); err == nil {
		c.TokenTypes = t.Shape()[0]
	}
	return c, lacking, c.Validate()
}

// Validate checks that the numbers describe a buildable model.
func (c Config) Validate() error {
	const big = 1 << 20
	switch {
	case !slices.Contains(Archs, c.Arch):
		return fmt.Errorf("bert: architecture %q is not one of %v", c.Arch, Archs)
	case c.VocabSize <= 0 || c.VocabSize > 1<<24:
		return fmt.Errorf("bert: vocabulary size %d", c.VocabSize)
	case c.Embed <= 0 || c.Embed > big || c.FFN <= 0 || c.FFN > big:
		return fmt.Errorf("bert: width %d, feed-forward width %d", c.Embed, c.FFN)
	case c.Layers <= 0 || c.Layers > 1024:
		return fmt.Errorf("bert: %d layers", c.Layers)
	case c.Heads <= 0 || c.Embed%c.Heads != 0:
		return fmt.Errorf("bert: %d heads for width %d", c.Heads, c.Embed)
	case c.Nomic() && c.HeadDim()%2 != 0:
		return fmt.Errorf("bert: RoPE on heads of odd width %d", c.HeadDim())
	case c.ContextLength <= 0 || c.ContextLength > big:
		return fmt.Errorf("bert: context length %d", c.ContextLength)
	case c.TokenTypes < 0 || c.TokenTypes > 1<<16:
		return fmt.Errorf("bert: %d token types", c.TokenTypes)
	case !(c.NormEps > 0 && c.NormEps < 1):
		return fmt.Errorf("bert: LayerNorm epsilon %g", c.NormEps)
	case c.Pooling < PoolNone || c.Pooling > PoolRank:
		return fmt.Errorf("bert: pooling type %d", int(c.Pooling))
	case c.Labels < 0 || c.Labels > 1<<16 || (c.Pooling == PoolRank && c.Labels == 0):
		return fmt.Errorf("bert: %d classifier labels", c.Labels)
	case (c.Pooler || c.Classifier) && c.Pooling != PoolRank:
		return fmt.Errorf("bert: a classification head (cls) with pooling %v: a reranker's pooling is rank", c.Pooling)
	case c.Nomic() != (c.RopeBase != 0) || !(c.RopeBase >= 0 && c.RopeBase < 1e9):
		return fmt.Errorf("bert: RoPE base %g for architecture %s", c.RopeBase, c.Arch)
	}
	return nil
}

// SetMetadata writes the configuration as GGUF metadata, in llama.cpp's keys
// and types (token_type_count is the tokenizer's, written with the vocabulary).
func (c Config) SetMetadata(w *gguf.Writer) {
	a := c.Arch + "."
	w.SetString("general.architecture", c.Arch)
	w.SetUint32(a+"context_length", uint32(c.ContextLength))
	w.SetUint32(a+"embedding_length", uint32(c.Embed))
	w.SetUint32(a+"feed_forward_length", uint32(c.FFN))
	w.SetUint32(a+"block_count", uint32(c.Layers))
	w.SetUint32(a+"attention.head_count", uint32(c.Heads))
	w.SetFloat32(a+"attention.layer_norm_epsilon", c.NormEps)
	w.SetBool(a+"attention.causal", c.Causal)
	w.SetUint32(a+"pooling_type", uint32(c.Pooling))
	if c.Classifier && c.Labels > 0 {
		labels := make([]string, c.Labels)
		for i := range labels {
			labels[i] = fmt.Sprintf("LABEL_%d", i)
		}
		w.SetStrings(a+"classifier.output_labels", labels)
	}
	if c.Nomic() {
		w.SetFloat32(a+"rope.freq_base", c.RopeBase)
	}
}

// ParamCount is the number of weights a model with configuration c holds.
func (c Config) ParamCount() int64 {
	V, D, F, TT, P := int64(c.VocabSize), int64(c.Embed), int64(c.FFN), int64(c.TokenTypes), int64(c.ContextLength)
	norms := 4 * D // two LayerNorms, weight and bias
	var head int64
	if c.Pooler {
		head += D*D + D
	}
	if c.Classifier {
		head += int64(c.Labels) * (D + 1)
	}
	if c.Nomic() {
		layer := 3*D*D + D*D + 3*F*D + norms // fused QKV, output, gate/up/down: no biases
		return V*D + TT*D + 2*D + int64(c.Layers)*layer + head
	}
	layer := 4*(D*D+D) + (F*D + F) + (D*F + D) + norms
	return V*D + TT*D + P*D + 2*D + int64(c.Layers)*layer + head
}
