// The GPT-2 configuration and forward pass, top to bottom.

package gpt2

import (
	"fmt"

	"github.com/toyml/toy/toy/gguf"
	"github.com/toyml/toy/toy/nn"
	"github.com/toyml/toy/toy/tensor"
)

// Config holds every hyperparameter of a GPT-2 model.
type Config struct {
	VocabSize     int     // V
	ContextLength int     // P
	Embed         int     // D
	Layers        int     // L
	FFN           int     // F
	Heads         int     // H
	NormEps       float32 // LayerNorm ε
	TiedOutput    bool    // the output head reuses the token embedding (OpenAI's checkpoints do)
}

// ConfigFromGGUF reads the configuration from f's metadata (keys "gpt2.*").
func ConfigFromGGUF(f *gguf.File) (Config, error) {
	var c Config
	if arch, err := f.Architecture(); err != nil {
		return c, err
	} else if arch != "gpt2" {
		return c, fmt.Errorf("gpt2: architecture %q is not gpt2", arch)
	}
	for _, k := range []struct {
		key string
		dst *int
	}{
		{"gpt2.context_length", &c.ContextLength},
		{"gpt2.embedding_length", &c.Embed},
		{"gpt2.block_count", &c.Layers},
		{"gpt2.feed_forward_length", &c.FFN},
		{"gpt2.attention.head_count", &c.Heads},
	} {
		v, err := f.Uint32(k.key)
		if err != nil {
			return c, err
		}
		*k.dst = int(v)
	}
	var err error
	if c.NormEps, err = f.Float32("gpt2.attention.layer_norm_epsilon"); err != nil {
		return c, err
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

// SetMetadata writes the configuration as GGUF metadata (keys "gpt2.*").
func (c Config) SetMetadata(w *gguf.Writer) {
	w.SetString("general.architecture", "gpt2")
	w.SetUint32("gpt2.context_length", uint32(c.ContextLength))
	w.SetUint32("gpt2.embedding_length", uint32(c.Embed))
	w.SetUint32("gpt2.block_count", uint32(c.Layers))
	w.SetUint32("gpt2.feed_forward_length", uint32(c.FFN))
	w.SetUint32("gpt2.attention.head_count", uint32(c.Heads))
	w.SetFloat32("gpt2.attention.layer_norm_epsilon", c.NormEps)
}

// Validate checks that the numbers describe a buildable model.
func (c Config) Validate() error {
	const big = 1 << 20
	switch {
	case c.VocabSize <= 0 || c.VocabSize > 1<<24:
		return fmt.Errorf("gpt2: vocabulary size %d", c.VocabSize)
	case c.Embed <= 0 || c.Embed > big || c.FFN <= 0 || c.FFN > big:
		return fmt.Errorf("gpt2: width %d, feed-forward width %d", c.Embed, c.FFN)
	case c.Layers <= 0 || c.Layers > 1024:
		return fmt.Errorf("gpt2: %d layers", c.Layers)
	case c.Heads <= 0 || c.Embed%c.Heads != 0:
		return fmt.Errorf("gpt2: %d heads for width %d", c.Heads, c.Embed)
	case c.ContextLength <= 0 || c.ContextLength > 1<<24:
		return fmt.Errorf("gpt2: context length %d", c.ContextLength)
	case !(c.NormEps > 0 && c.NormEps < 1):
		return fmt.Errorf("gpt2: LayerNorm epsilon %g", c.NormEps)
	}
	return nil
}

// Model is GPT-2. Weights are tagged with their GGUF tensor names; blocks are
// named "blk.N.".
type Model struct {
	Config Config

	Embed      *nn.Embedding `gguf:"token_embd"`    // [V, D]
	Pos        *nn.Embedding `gguf:"position_embd"` // [P, D]
	Blocks     []nn.Block    // L pre-norm blocks
	OutputNorm *nn.LayerNorm `gguf:"output_norm"`     // [D]
	Output     *nn.Linear    `gguf:"output,optional"` // [V, D]; a Linear over Embed.W when tied
}

// Load builds the model from a GGUF file; the weights view the file's memory.
func Load(f *gguf.File) (*Model, error) {
	c, err := ConfigFromGGUF(f)
	if err != nil {
		return nil, err
	}
	m := New(c)
	if err := nn.LoadModel(f, m, m.Blocks); err != nil {
		return nil, err
	}
	if m.Output == nil {
		m.Output = &nn.Linear{W: m.Embed.W}
	}
	return m, m.check()
}

// New returns a model with the shape of c and no weights yet.
func New(c Config) *Model {
	m := &Model{Config: c, OutputNorm: &nn.LayerNorm{Eps: c.NormEps}}
	m.Blocks = make([]nn.Block, c.Layers)
	for i := range m.Blocks {
		m.Blocks[i] = nn.Block{
			AttnNorm: &nn.LayerNorm{Eps: c.NormEps},
			Attn:     nn.Attention{Heads: c.Heads, KVHeads: c.Heads, HeadDim: c.Embed / c.Heads},
			FFNNorm:  &nn.LayerNorm{Eps: c.NormEps},
			FFN:      &nn.MLP{},
		}
	}
	return m
}

// Forward runs ids [T] at positions cache.Len() … and returns logits [T, V].
func (m *Model) Forward(ids []int32, cache *nn.Cache) *tensor.Tensor {
	return m.Logits(m.Hidden(ids, cache))
}

// Hidden runs the transformer and returns the final normalised states [T, D].
// A nil cache runs ids as one whole sequence from position 0 (training).
func (m *Model) Hidden(ids []int32, cache *nn.Cache) *tensor.Tensor {
	positions := make([]int32, len(ids))
	for t := range positions {
		positions[t] = int32(cache.Len() + t)
	}
	x := tensor.Add(m.Embed.Forward(ids), m.Pos.Forward(positions)) // [T, D]
	for i := range m.Blocks {
		// x = x + Attn(LayerNorm(x)); x = x + MLP(LayerNorm(x))
		x = m.Blocks[i].Forward(x, cache.Layer(i))
	}
	return m.OutputNorm.Forward(x)
}

// Logits projects hidden states [T, D] to vocabulary logits [T, V].
func (m *Model) Logits(h *tensor.Tensor) *tensor.Tensor { return m.Output.Forward(h) }

// NewCache returns an empty KV cache for up to capacity positions (at most
// the context length: GPT-2 has no position embeddings beyond it).
func (m *Model) NewCache(capacity int) *nn.Cache {
	return nn.NewCache(m.Config.Layers, min(capacity, m.Config.ContextLength), m.Config.Embed)
}

// VocabSize returns V.
func (m *Model) VocabSize() int { return m.Config.VocabSize }

// ContextLength returns P.
func (m *Model) ContextLength() int { return m.Config.ContextLength }

// check verifies every weight's shape against the config.
func (m *Model) check() error {
	c := m.Config
	D, F := c.Embed, c.FFN
	errs := []error{
		nn.CheckShape("token_embd.weight", m.Embed.W, c.VocabSize, D),
		nn.CheckShape("position_embd.weight", m.Pos.W, c.ContextLength, D),
		checkNorm("output_norm", m.OutputNorm, D),
		nn.CheckLinear("output", m.Output, c.VocabSize, D),
	}
	for i := range m.Blocks {
		b := &m.Blocks[i]
		mlp := b.FFN.(*nn.MLP)
		p := fmt.Sprintf("blk.%d.", i)
		errs = append(errs,
			checkNorm(p+"attn_norm", b.AttnNorm.(*nn.LayerNorm), D),
			checkNorm(p+"ffn_norm", b.FFNNorm.(*nn.LayerNorm), D),
			nn.CheckLinear(p+"attn_qkv", b.Attn.QKV, 3*D, D),
			nn.CheckLinear(p+"attn_output", b.Attn.O, D, D),
			nn.CheckLinear(p+"ffn_up", mlp.Up, F, D),
			nn.CheckLinear(p+"ffn_down", mlp.Down, D, F),
		)
	}
	for _, err := range errs {
		if err != nil {
			return fmt.Errorf("gpt2: %w", err)
		}
	}
	return nil
}

func checkNorm(name string, n *nn.LayerNorm, d int) error {
	if err := nn.CheckShape(name+".weight", n.W, d); err != nil {
		return err
	}
	if n.B != nil {
		return nn.CheckShape(name+".bias", n.B, d)
	}
	return nil
}

// Weights returns every weight tensor under its GGUF name, each once (a tied
// output head is listed as token_embd.weight only).
func (m *Model) Weights() []nn.Named { return nn.ModelWeights(m, m.Blocks) }

// SetMetadata writes the model's configuration as GGUF metadata.
func (m *Model) SetMetadata(w *gguf.Writer) { m.Config.SetMetadata(w) }
