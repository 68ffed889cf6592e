// The flat configuration of a BERT-family encoder, read from GGUF metadata,
// and the pooling that makes one vector of its states.

package bert

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/toyml/toy/toy/gguf"
	"github.com/toyml/toy/toy/models"
)

// Archs lists the GGUF architectures this package loads.
var Archs = []string{"bert", "nomic-bert"}

// ErrUnsupported marks files of this family that use features toy lacks.
var ErrUnsupported = models.ErrUnsupported

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

// Config holds every hyperparameter of a BERT-family encoder, declared with
// its GGUF key (under ARCH.) and its card symbol. The rest is read from the
// tensors: VocabSize (token_embd rows), TokenTypes (token_types rows: 0 when
// the file has none) and a reranker's head.
type Config struct {
	Arch          string  // "bert" or "nomic-bert"
	VocabSize     int     `range:"[1, 1<<24]" card:"N_V, vocabulary size"`
	ContextLength int     `gguf:"context_length" range:"[1, 1<<20]" card:"ℓ_max, positions"` // bert: rows of the position table
	Embed         int     `gguf:"embedding_length" range:"[1, 1<<20]" card:"d_e, model width"`
	Layers        int     `gguf:"block_count" range:"[1, 1024]" card:"L, layers"`
	FFN           int     `gguf:"feed_forward_length" range:"[1, 1<<20]" card:"d_mlp, MLP width"`
	Heads         int     `gguf:"attention.head_count" range:"[1, *]" card:"H, attention heads"` // Dh = D/H
	TokenTypes    int     `range:"[0, 1<<16]" card:"N_T, token types (segments); only type 0 is used"`
	NormEps       float32 `gguf:"attention.layer_norm_epsilon" range:"(0, 1)" card:"ε, LayerNorm epsilon"`
	Pooling       Pooling `gguf:"pooling_type,optional"` // how Embed makes one vector of the T states; on the card by name
	// Causal masks each token's view of the tokens after it, as in a
	// decoder. No BERT is trained so; it is llama.cpp's reading of a file
	// without ARCH.attention.causal.
	Causal bool `gguf:"attention.causal,optional" card:"causal, causal mask (false for every BERT)"`
	// A reranker's head (rank pooling): its C outputs
	// (ARCH.classifier.output_labels; 1 when absent), and the pooler
	// (tensor cls) and the classifier (cls.output) it has.
	Labels     int     `range:"[0, 1<<16]" card:"N_C, classifier outputs"` // 0 unless the pooling is rank
	Pooler     bool    `card:"pooler, the head has the pooler W_h (tensor cls)"`
	Classifier bool    `card:"classifier, the head has the classifier W_c (tensor cls.output)"`
	RopeBase   float32 `gguf:"rope.freq_base,optional" range:"[0, 1e9)" card:"θ_rope, RoPE frequency base"` // nomic-bert only (bert: 0)

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
	return c, cmp.Or(err, models.Unsupported("bert", lacking))
}

// readConfig reads the configuration, listing the features the file uses
// that toy does not run (describing a model needs no more).
func readConfig(f *gguf.File) (Config, []string, error) {
	arch, err := models.ArchIn(f, "bert", Archs)
	if err != nil {
		return Config{}, nil, err
	}
	c := Config{Arch: arch, Causal: true} // llama.cpp's default without attention.causal
	if c.Nomic() {
		c.RopeBase = 10000
	}
	if err := models.ReadConfig(f, arch, &c); err != nil {
		return c, nil, err
	}
	if !c.Nomic() {
		c.RopeBase = 0 // bert's positions are a table: a rope.freq_base means nothing
	}
	m := f.Meta(arch)
	var lacking []string
	if c.Nomic() && c.Heads > 0 && c.Embed%c.Heads == 0 && m.UintOr("rope.dimension_count", c.HeadDim()) != c.HeadDim() {
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
	c.Pooler, c.Classifier = models.HasTensor(f, "cls.weight"), models.HasTensor(f, "cls.output.weight")
	if t, err := f.Info("token_types.weight"); err == nil {
		c.TokenTypes = t.Shape()[0]
	}
	return c, lacking, c.Validate()
}

// Validate checks that the numbers describe a buildable model: the declared
// ranges, then how they fit together.
func (c Config) Validate() error {
	if err := models.CheckRanges("bert", c); err != nil {
		return err
	}
	switch {
	case !slices.Contains(Archs, c.Arch):
		return fmt.Errorf("bert: architecture %q is not one of %v", c.Arch, Archs)
	case c.Embed%c.Heads != 0:
		return fmt.Errorf("bert: %d heads for width %d", c.Heads, c.Embed)
	case c.Nomic() && c.HeadDim()%2 != 0:
		return fmt.Errorf("bert: RoPE on heads of odd width %d", c.HeadDim())
	case c.Pooling < PoolNone || c.Pooling > PoolRank:
		return fmt.Errorf("bert: pooling type %d", int(c.Pooling))
	case c.Pooling == PoolRank && c.Labels == 0:
		return fmt.Errorf("bert: %d classifier labels", c.Labels)
	case (c.Pooler || c.Classifier) && c.Pooling != PoolRank:
		return fmt.Errorf("bert: a classification head (cls) with pooling %v: a reranker's pooling is rank", c.Pooling)
	case c.Nomic() != (c.RopeBase != 0):
		return fmt.Errorf("bert: RoPE base %g for architecture %s", c.RopeBase, c.Arch)
	}
	return nil
}

// SetMetadata writes the configuration as GGUF metadata, in llama.cpp's keys
// and types (token_type_count is the tokenizer's, written with the vocabulary).
// The pooling and the mask are written even when zero: llama.cpp reads a
// file without attention.causal as causal.
func (c Config) SetMetadata(w *gguf.Writer) {
	a := c.Arch + "."
	w.SetConfig(c.Arch, c)
	w.SetBool(a+"attention.causal", c.Causal)
	w.SetUint32(a+"pooling_type", uint32(c.Pooling))
	if c.Classifier && c.Labels > 0 {
		labels := make([]string, c.Labels)
		for i := range labels {
			labels[i] = fmt.Sprintf("LABEL_%d", i)
		}
		w.SetStrings(a+"classifier.output_labels", labels)
	}
}
