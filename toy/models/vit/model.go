// The ViT forward pass, top to bottom: patches, tokens, blocks, the [CLS]
// token's logits.

package vit

import (
	"fmt"
	"math"

	"github.com/toyml/toy/toy/gguf"
	"github.com/toyml/toy/toy/models"
	"github.com/toyml/toy/toy/nn"
	"github.com/toyml/toy/toy/tensor"
)

// Model is a ViT image classifier. Weights are declared with their GGUF
// names and shapes, in the order Weights lists them: the blocks (v.blk.N.…)
// last.
type Model struct {
	Config Config

	// The patch embedding [D, C·P·P] (the file's [D, C, P, P]) and bias [D].
	PatchEmbed *nn.Linear     `gguf:"v.patch_embd" shape:"Embed, 3, PatchSize, PatchSize | Embed, 3*PatchSize*PatchSize" card:"W_p, patch embedding (a convolution with stride P)"`
	Class      *tensor.Tensor `gguf:"v.class_embd" shape:"Embed" card:"e_cls, the [CLS] token"`
	Pos        *nn.Embedding  `gguf:"v.position_embd" shape:"(ImageSize/PatchSize)*(ImageSize/PatchSize) + 1, Embed" card:"W_pos, position embeddings"` // [S, D]
	PostNorm   *nn.LayerNorm  `gguf:"v.post_ln" shape:"Embed" card:"γ, final LayerNorm scale"`
	Head       *nn.Linear     `gguf:"cls" shape:"Classes, Embed" init:"-" card:"W_c, classifier"` // [K, D], bias [K]; NewRandom draws it last
	Blocks     []Block        `gguf:"v.blk"`                                                      // L pre-LayerNorm encoder blocks

	file *gguf.File // the file the weights view, when Open opened it
}

// Block is one encoder block: pre-LayerNorm, bidirectional attention, MLP.
type Block struct {
	Norm1 *nn.LayerNorm `gguf:"ln1" shape:"Embed" card:"γ_a, attention LayerNorm scale"`
	Attn  SelfAttention
	Norm2 *nn.LayerNorm `gguf:"ln2" shape:"Embed" card:"γ_f, MLP LayerNorm scale"`
	MLP   MLP
}

// SelfAttention is multi-head attention without a mask (Vaswani et al. 2017),
// every projection with a bias:
//
//	q, k, v = x·Wqᵀ + bq, x·Wkᵀ + bk, x·Wvᵀ + bv
//	o_h = softmax(q_h·k_hᵀ / √Dh)·v_h
//	y = [o_1 … o_H]·Woᵀ + bo
//
// (toy/nn's Attention computes the same with Bidirectional set; its output
// projection is named attn_output, llama.cpp's CLIP tensors attn_out.)
type SelfAttention struct {
	Q     *nn.Linear `gguf:"attn_q" shape:"Embed, Embed" card:"W_q, query projection"`
	K     *nn.Linear `gguf:"attn_k" shape:"Embed, Embed" card:"W_k, key projection"`
	V     *nn.Linear `gguf:"attn_v" shape:"Embed, Embed" card:"W_v, value projection"`
	Out   *nn.Linear `gguf:"attn_out" shape:"Embed, Embed" card:"W_o, attention output projection"`
	Heads int
}

// MLP is the feed-forward layer with the exact GELU: Down(GELU(Up(x))).
// (toy/nn's MLP uses the tanh approximation, as GPT-2 does.)
type MLP struct {
	Up   *nn.Linear `gguf:"ffn_up" shape:"FFN, Embed" card:"W_up, MLP up projection"`
	Down *nn.Linear `gguf:"ffn_down" shape:"Embed, FFN" card:"W_down, MLP down projection"`
}

// Load builds the model from a GGUF file; the weights view the file's memory,
// which must stay open while the model is used.
func Load(f *gguf.File) (*Model, error) {
	c, err := ConfigFromGGUF(f)
	if err != nil {
		return nil, err
	}
	m := New(c)
	if err := models.LoadWeights(f, Arch, m, c); err != nil {
		return nil, err
	}
	// The convolution kernel [D, C, P, P] is the patch projection [D, C·P·P]:
	// a patch flattened channel by channel, row by row, is a row of Patches.
	m.PatchEmbed.W = m.PatchEmbed.W.Reshape(c.Embed, Channels*c.PatchSize*c.PatchSize)
	return m, m.check()
}

// New returns a model with the shape of c and no weights yet.
func New(c Config) *Model {
	m := &Model{Config: c, PostNorm: &nn.LayerNorm{Eps: c.NormEps}}
	m.Blocks = make([]Block, c.Layers)
	for i := range m.Blocks {
		m.Blocks[i] = Block{
			Norm1: &nn.LayerNorm{Eps: c.NormEps},
			Attn:  SelfAttention{Heads: c.Heads},
			Norm2: &nn.LayerNorm{Eps: c.NormEps},
		}
	}
	return m
}

// Forward classifies one preprocessed image, pixels [C, R, R] (Preprocess),
// and returns the logits [1, K].
func (m *Model) Forward(pixels *tensor.Tensor) *tensor.Tensor {
	h := m.Hidden(pixels)                  // [S, D]
	cls := tensor.Embedding(h, []int32{0}) // [1, D]: the [CLS] token's state
	return m.Head.Forward(cls)             // [1, K]
}

// Hidden runs the encoder on pixels [C, R, R] and returns the final
// normalised states of all S tokens [S, D], the [CLS] token first.
func (m *Model) Hidden(pixels *tensor.Tensor) *tensor.Tensor {
	c := m.Config
	N, D := c.Patches(), c.Embed
	x := m.PatchEmbed.Forward(Patches(pixels, c.PatchSize)) // [N, D]: E·p_n + b, the strided convolution
	// X = [x_cls; patch embeddings] + W_pos, written as additions into the
	// position embeddings: row 0 gets the [CLS] token, row n+1 patch n.
	X := m.Pos.Forward(rowIDs(0, N+1))                                         // [S, D]
	X = tensor.ScatterAdd(X, rowIDs(1, N+1), x, nil)                           // [S, D]
	X = tensor.ScatterAdd(X, rowIDs(0, 1), tensor.Reshape(m.Class, 1, D), nil) // [S, D]
	for i := range m.Blocks {
		X = m.Blocks[i].Forward(X)
	}
	return m.PostNorm.Forward(X)
}

// Forward runs the block on x [S, D]:
//
//	x = x + Attn(LN₁(x))
//	x = x + MLP(LN₂(x))
func (b *Block) Forward(x *tensor.Tensor) *tensor.Tensor {
	x = tensor.Add(x, b.Attn.Forward(b.Norm1.Forward(x)))
	return tensor.Add(x, b.MLP.Forward(b.Norm2.Forward(x)))
}

// Forward attends every token of x [S, D] to every token.
func (a *SelfAttention) Forward(x *tensor.Tensor) *tensor.Tensor {
	q, k, v := a.Q.Forward(x), a.K.Forward(x), a.V.Forward(x) // [S, D] each: H heads of Dh
	dh := x.Cols() / a.Heads
	opt := tensor.AttentionOptions{Scale: float32(1 / math.Sqrt(float64(dh))), Bidirectional: true}
	o := tensor.AttentionWith(q, k, v, a.Heads, a.Heads, 0, opt) // [S, D]
	return a.Out.Forward(o)
}

// Forward maps x [S, D] to [S, D].
func (f *MLP) Forward(x *tensor.Tensor) *tensor.Tensor {
	return f.Down.Forward(tensor.GELUErf(f.Up.Forward(x))) // [S, F] inside
}

// Patches cuts pixels [C, R, R] into its N = (R/P)² patches of P×P, row of
// patches by row, and returns them flattened as [N, C·P·P]: patch n = gy·(R/P)
// + gx holds pixels[c][gy·P + i][gx·P + j] at column (c·P + i)·P + j, the
// order of a convolution kernel [D, C, P, P]. Multiplying by that kernel is
// the convolution with stride P. The pixels are input data: no gradient
// flows back to them.
func Patches(pixels *tensor.Tensor, P int) *tensor.Tensor {
	s := pixels.Shape()
	if len(s) != 3 || s[0] != Channels || s[1] != s[2] || P <= 0 || s[1]%P != 0 {
		panic(fmt.Sprintf("vit.Patches: pixels %v with patch %d: want [%d, R, R], R a multiple of %d", s, P, Channels, P))
	}
	R, G := s[1], s[1]/P // image side, patches per side
	src := pixels.Float32s()
	out := tensor.New(G*G, Channels*P*P)
	for gy := 0; gy < G; gy++ {
		for gx := 0; gx < G; gx++ {
			row := out.Row(gy*G + gx)
			for c := 0; c < Channels; c++ {
				for i := 0; i < P; i++ {
					y := gy*P + i
					copy(row[(c*P+i)*P:(c*P+i+1)*P], src[(c*R+y)*R+gx*P:][:P])
				}
			}
		}
	}
	return out
}

// rowIDs returns from, from+1, …, to−1.
func rowIDs(from, to int) []int32 {
	ids := make([]int32, to-from)
	for i := range ids {
		ids[i] = int32(from + i)
	}
	return ids
}

// check verifies every weight against its declared shape, and that every
// LayerNorm has its bias (which a shape tag leaves optional).
func (m *Model) check() error {
	err := nn.CheckShapes(m, m.Config)
	if err == nil && m.PostNorm.B == nil {
		err = fmt.Errorf("tensor v.post_ln.bias is missing")
	}
	for i, b := range m.Blocks {
		if err == nil && (b.Norm1.B == nil || b.Norm2.B == nil) {
			err = fmt.Errorf("tensor v.blk.%d.ln1.bias or ln2.bias is missing", i)
		}
	}
	if err != nil {
		return fmt.Errorf("vit: %w", err)
	}
	return nil
}

// Weights returns every weight tensor under its GGUF name, in file order.
// The patch kernel is listed as the model holds it, [D, C·P·P].
func (m *Model) Weights() []nn.Named { return nn.Collect("", m) }
