// The ViT forward pass, top to bottom: patches, tokens, blocks, the [CLS]
// token's logits.

package vit

import (
	"fmt"
	"math"

	"github.com/toyml/toy/toy/gguf"
	"github.com/toyml/toy/toy/nn"
	"github.com/toyml/toy/toy/tensor"
)

// Model is a ViT image classifier. Weights are tagged with their GGUF tensor
// names; blocks are named "v.blk.N.".
type Model struct {
	Config Config

	PatchEmbed *nn.Linear     `gguf:"v.patch_embd"`    // [D, C·P·P] (stored [D, C, P, P]) and bias [D]
	Class      *tensor.Tensor `gguf:"v.class_embd"`    // [D], the [CLS] token
	Pos        *nn.Embedding  `gguf:"v.position_embd"` // [S, D]
	Blocks     []Block        // L pre-LayerNorm encoder blocks
	PostNorm   *nn.LayerNorm  `gguf:"v.post_ln"` // [D]
	Head       *nn.Linear     `gguf:"cls"`       // [K, D] and bias [K]

	file *gguf.File // the file the weights view, when Open opened it
}

// Block is one encoder block: pre-LayerNorm, bidirectional attention, MLP.
type Block struct {
	Norm1 *nn.LayerNorm `gguf:"ln1"` // [D]
	Attn  SelfAttention
	Norm2 *nn.LayerNorm `gguf:"ln2"` // [D]
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
	Q     *nn.Linear `gguf:"attn_q"`   // [D, D]
	K     *nn.Linear `gguf:"attn_k"`   // [D, D]
	V     *nn.Linear `gguf:"attn_v"`   // [D, D]
	Out   *nn.Linear `gguf:"attn_out"` // [D, D]
	Heads int
}

// MLP is the feed-forward layer with the exact GELU: Down(GELU(Up(x))).
// (toy/nn's MLP uses the tanh approximation, as GPT-2 does.)
type MLP struct {
	Up   *nn.Linear `gguf:"ffn_up"`   // [F, D]
	Down *nn.Linear `gguf:"ffn_down"` // [D, F]
}

// Load builds the model from a GGUF file; the weights view the file's memory,
// which must stay open while the model is used.
func Load(f *gguf.File) (*Model, error) {
	c, err := ConfigFromGGUF(f)
	if err != nil {
		return nil, err
	}
	m := New(c)
	if err := nn.Load(f, "", m); err != nil {
		return nil, err
	}
	for i := range m.Blocks {
		if err := nn.Load(f, fmt.Sprintf("v.blk.%d.", i), &m.Blocks[i]); err != nil {
			return nil, err
		}
	}
	// The convolution kernel [D, C, P, P] is the patch projection [D, C·P·P]:
	// a patch flattened channel by channel, row by row, is a row of Patches.
	P := c.PatchSize
	if err := nn.CheckShape("v.patch_embd.weight", m.PatchEmbed.W, c.Embed, Channels, P, P); err != nil {
		return nil, fmt.Errorf("vit: %w", err)
	}
	m.PatchEmbed.W = m.PatchEmbed.W.Reshape(c.Embed, Channels*P*P)
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

// check verifies every weight's shape against the config, so that a file
// whose tensors disagree with its metadata fails at load, not mid-forward.
func (m *Model) check() error {
	c := m.Config
	D, F, P := c.Embed, c.FFN, c.PatchSize
	errs := []error{
		nn.CheckLinear("v.patch_embd", m.PatchEmbed, D, Channels*P*P),
		nn.CheckShape("v.class_embd", m.Class, D),
		nn.CheckShape("v.position_embd.weight", m.Pos.W, c.Tokens(), D),
		checkNorm("v.post_ln", m.PostNorm, D),
		nn.CheckLinear("cls", m.Head, c.Classes, D),
	}
	for i := range m.Blocks {
		b := &m.Blocks[i]
		p := fmt.Sprintf("v.blk.%d.", i)
		errs = append(errs,
			checkNorm(p+"ln1", b.Norm1, D),
			nn.CheckLinear(p+"attn_q", b.Attn.Q, D, D),
			nn.CheckLinear(p+"attn_k", b.Attn.K, D, D),
			nn.CheckLinear(p+"attn_v", b.Attn.V, D, D),
			nn.CheckLinear(p+"attn_out", b.Attn.Out, D, D),
			checkNorm(p+"ln2", b.Norm2, D),
			nn.CheckLinear(p+"ffn_up", b.MLP.Up, F, D),
			nn.CheckLinear(p+"ffn_down", b.MLP.Down, D, F),
		)
	}
	for _, err := range errs {
		if err != nil {
			return fmt.Errorf("vit: %w", err)
		}
	}
	return nil
}

func checkNorm(name string, n *nn.LayerNorm, d int) error {
	if err := nn.CheckShape(name+".weight", n.W, d); err != nil {
		return err
	}
	return nn.CheckShape(name+".bias", n.B, d)
}

// Weights returns every weight tensor under its GGUF name, in file order.
// The patch kernel is listed as the model holds it, [D, C·P·P].
func (m *Model) Weights() []nn.Named {
	all := nn.Collect("", m)
	for i := range m.Blocks {
		all = append(all, nn.Collect(fmt.Sprintf("v.blk.%d.", i), &m.Blocks[i])...)
	}
	return all
}
