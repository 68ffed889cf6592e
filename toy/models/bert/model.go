// The BERT forward pass, top to bottom: embeddings, post-norm blocks, pooling.

package bert

import (
	"errors"
	"fmt"

	"github.com/toyml/toy/toy/gguf"
	"github.com/toyml/toy/toy/models"
	"github.com/toyml/toy/toy/nn"
	"github.com/toyml/toy/toy/tensor"
)

// Model is a BERT-family encoder. Weights are declared with their GGUF
// names and shapes.
type Model struct {
	Config Config

	Embed     *nn.Embedding `gguf:"token_embd" shape:"VocabSize, Embed" card:"W_e, token embedding"`
	Types     *nn.Embedding `gguf:"token_types,optional" shape:"TokenTypes, Embed" card:"W_t, token type embedding"`    // nil when the file has none
	Pos       *nn.Embedding `gguf:"position_embd,optional" shape:"ContextLength, Embed" card:"W_p, position embedding"` // bert only (nomic-bert: RoPE)
	EmbedNorm *nn.LayerNorm `gguf:"token_embd_norm" shape:"Embed" card:"γ_e, embedding LayerNorm scale"`
	Blocks    []Block       `gguf:"blk"` // L post-norm encoder blocks

	// A reranker's classification head (rank pooling), each part optional
	// as in llama.cpp: the pooler Head with tanh, and the classifier Out
	// (C outputs: the labels, ARCH.classifier.output_labels).
	Head *nn.Linear `gguf:"cls,optional" shape:"Embed, Embed" card:"W_h, reranker pooler"`
	Out  *nn.Linear `gguf:"cls.output,optional" shape:"Labels, Embed" card:"W_c, reranker classifier"`
}

// Block is one post-LayerNorm encoder block:
//
//	x = LN₁(x + Attn(x))
//	x = LN₂(x + FFN(x))
type Block struct {
	Attn     nn.Attention  // Bidirectional; Q, K, V (bert) or QKV (nomic-bert), O "attn_output"
	AttnNorm *nn.LayerNorm `gguf:"attn_output_norm" shape:"Embed" card:"γ_a, attention LayerNorm scale"` // LN₁
	FFN      nn.Layer      // *MLP (bert) or *nn.SwiGLU (nomic-bert)
	OutNorm  *nn.LayerNorm `gguf:"layer_output_norm" shape:"Embed" card:"γ_f, output LayerNorm scale"` // LN₂
}

// MLP is BERT's feed-forward layer: Down(GELU(Up(x))), both with biases,
// GELU the exact x·Φ(x) unless Approx (llama.cpp's tanh form).
type MLP struct {
	Up     *nn.Linear `gguf:"ffn_up" shape:"FFN, Embed" card:"W_up, MLP up projection"`
	Down   *nn.Linear `gguf:"ffn_down" shape:"Embed, FFN" card:"W_down, MLP down projection"`
	Approx bool
}

// Load builds the model from a GGUF file; the weights view the file's memory,
// which must stay open while the model is used.
func Load(f *gguf.File) (*Model, error) {
	c, err := ConfigFromGGUF(f)
	if err != nil {
		return nil, err
	}
	m := New(c)
	if err := models.LoadWeights(f, "bert", m, c); err != nil {
		return nil, err
	}
	return m, m.check()
}

// New returns a model with the shape of c and no weights yet.
func New(c Config) *Model {
	m := &Model{Config: c, EmbedNorm: &nn.LayerNorm{Eps: c.NormEps}}
	m.Blocks = make([]Block, c.Layers)
	for i := range m.Blocks {
		b := &m.Blocks[i]
		b.Attn = nn.Attention{Heads: c.Heads, KVHeads: c.Heads, HeadDim: c.HeadDim(), Options: tensor.AttentionOptions{Bidirectional: !c.Causal}}
		b.AttnNorm, b.OutNorm = &nn.LayerNorm{Eps: c.NormEps}, &nn.LayerNorm{Eps: c.NormEps}
		b.FFN = &MLP{Approx: c.ApproxGELU}
		if c.Nomic() {
			b.Attn.RoPE = &nn.RoPE{Dim: c.HeadDim(), Base: c.RopeBase, NeoX: true}
			b.FFN = &nn.SwiGLU{}
		}
	}
	return m
}

// Hidden runs the encoder over one sequence ids [T] (usually [CLS] … [SEP])
// and returns its final states [T, D]. It panics on an empty sequence or one
// longer than the position table.
func (m *Model) Hidden(ids []int32) *tensor.Tensor {
	T := len(ids)
	if T == 0 || (m.Pos != nil && T > m.Pos.W.Rows()) {
		panic(fmt.Sprintf("bert.Hidden: %d tokens, want 1 … %d", T, m.Config.ContextLength))
	}
	x := m.Embed.Forward(ids) // [T, D]
	if m.Types != nil {
		x = tensor.Add(x, m.Types.Forward(make([]int32, T))) // token type 0 everywhere: one text, "sentence A"
	}
	if m.Pos != nil {
		x = tensor.Add(x, m.Pos.Forward(positions(T))) // absolute positions 0 … T−1
	}
	x = m.EmbedNorm.Forward(x) // [T, D]
	for i := range m.Blocks {
		x = m.Blocks[i].Forward(x)
	}
	return x
}

// Vector runs ids [T] and pools their final states as the config says
// (Pool): the embedding [D], not normalised.
func (m *Model) Vector(ids []int32) []float32 { return Pool(m.Hidden(ids), m.Config.Pooling) }

// Scores runs a reranker over ids [T] (a query and a document: see
// toy.Embedder.RankInput) and returns its classification head's C outputs
// from the first state, as llama.cpp's rank pooling does:
//
//	s = Out(tanh(Head(h[0])))
//
// where a missing part is skipped; without Out the first C values of what
// is left are returned. The relevance score is s[0], a logit (σ(s[0]) is a
// probability).
func (m *Model) Scores(ids []int32) []float32 {
	x := m.Hidden(ids)
	x = x.Slice(0, 1) // [1, D]: the [CLS] state
	if m.Head != nil {
		x = tensor.Tanh(m.Head.Forward(x))
	}
	if m.Out != nil {
		x = m.Out.Forward(x)
	}
	C := min(m.Config.Labels, x.Cols())
	return append([]float32(nil), x.Data()[:C]...)
}

// Forward runs the block on x [T, D]: post-norm, the residual added before
// each LayerNorm.
func (b *Block) Forward(x *tensor.Tensor) *tensor.Tensor {
	x = b.AttnNorm.Forward(tensor.Add(x, b.Attn.Forward(x, nil))) // LN₁(x + Attn(x))
	return b.OutNorm.Forward(tensor.Add(x, b.FFN.Forward(x)))     // LN₂(x + FFN(x))
}

// Forward maps x [T, D] to [T, D].
func (f *MLP) Forward(x *tensor.Tensor) *tensor.Tensor {
	h := f.Up.Forward(x) // [T, F]
	if f.Approx {
		h = tensor.GELU(h)
	} else {
		h = tensor.GELUErf(h)
	}
	return f.Down.Forward(h)
}

// Pool makes one vector of the states h [T, D]:
//
//	mean:  e = (1/T)·Σ_t h[t]
//	cls:   e = h[0]
//	last:  e = h[T−1]
//
// It panics for PoolNone and PoolRank, which make no single vector here.
func Pool(h *tensor.Tensor, p Pooling) []float32 {
	T, D := h.Rows(), h.Cols()
	rows := h.Float32s()
	e := make([]float32, D)
	switch p {
	case PoolMean:
		sum := make([]float64, D)
		for t := 0; t < T; t++ {
			for j, v := range rows[t*D : (t+1)*D] {
				sum[j] += float64(v)
			}
		}
		for j := range e {
			e[j] = float32(sum[j] / float64(T))
		}
	case PoolCLS:
		copy(e, rows[:D])
	case PoolLast:
		copy(e, rows[(T-1)*D:])
	default:
		panic(fmt.Sprintf("bert.Pool: pooling %v makes no single vector", p))
	}
	return e
}

// VocabSize returns V.
func (m *Model) VocabSize() int { return m.Config.VocabSize }

// ContextLength returns the most tokens a sequence may hold.
func (m *Model) ContextLength() int { return m.Config.ContextLength }

// positions returns 0, 1, …, T−1.
func positions(T int) []int32 {
	p := make([]int32, T)
	for i := range p {
		p[i] = int32(i)
	}
	return p
}

// check verifies what the shape tags cannot: the position table is bert's
// alone, the head's tensors agree with the config, each block's attention
// is complete (nn.Attention.Check) and every LayerNorm has its bias.
func (m *Model) check() error {
	c := m.Config
	var err error
	switch {
	case c.Nomic() && m.Pos != nil:
		err = errors.New("a nomic-bert file with position_embd.weight (its positions are rotary)")
	case !c.Nomic() && m.Pos == nil:
		err = errors.New("tensor position_embd.weight is missing")
	case (m.Head != nil) != c.Pooler || (m.Out != nil) != c.Classifier:
		err = errors.New("the classification head's tensors (cls, cls.output) disagree with the config")
	case m.EmbedNorm.B == nil:
		err = errors.New("tensor token_embd_norm.bias is missing")
	}
	for i, b := range m.Blocks {
		if err == nil {
			err = b.Attn.Check()
		}
		if err == nil && (b.AttnNorm.B == nil || b.OutNorm.B == nil) {
			err = fmt.Errorf("tensor blk.%d.attn_output_norm.bias or layer_output_norm.bias is missing", i)
		}
	}
	if err != nil {
		return fmt.Errorf("bert: %w", err)
	}
	return nil
}

// Weights returns every weight tensor under its GGUF name, in file order.
func (m *Model) Weights() []nn.Named { return nn.Collect("", m) }
