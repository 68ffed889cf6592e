// The frame every decoder-only architecture shares: token embedding, a stack
// of blocks, final norm, output head.

package models

import (
	"github.com/toyml/toy/toy/nn"
	"github.com/toyml/toy/toy/tensor"
)

// Block is one layer of a Decoder: it maps the residual stream x [T, D] to
// the next, reading and appending to its layer's cache (nil in training).
type Block interface {
	Forward(x *tensor.Tensor, cache *nn.KVCache) *tensor.Tensor
}

// Decoder is a decoder-only language model less its block:
//
//	X ← W_e[x] (· EmbedScale)
//	for l = 1 … L: X ← Block_l(X)
//	logits ← W_u · Norm(X) (· LogitScale, then soft-capped at LogitSoftCap)
//
// An architecture embeds it in its Model, fills Blocks with its own block
// type and the sizes below, and so has the engine.Model methods, Weights
// and loading by tag; it writes Hidden (and Forward) itself only where the
// frame differs (GPT-2's position embeddings). Weights are tagged as for
// nn.Load; shapes name the enclosing Config's VocabSize and Embed.
type Decoder struct {
	Embed      *nn.Embedding `gguf:"token_embd" shape:"VocabSize, Embed" card:"W_e, token embedding"`
	Blocks     []Block       `gguf:"blk"`
	OutputNorm nn.Layer      `gguf:"output_norm" shape:"Embed" card:"γ, final norm scale"`
	Output     *nn.Linear    `gguf:"output,optional" shape:"VocabSize, Embed" card:"W_u, unembedding"`

	EmbedScale   float32 // multiplies the embeddings when not 0 (Gemma's √D, Granite's scale)
	LogitScale   float32 // multiplies the logits when not 0 (Command R's; Granite's 1/s)
	LogitSoftCap float32 // caps the logits at ±c, c·tanh(z/c), when not 0 (Gemma 2's final soft cap)
	Vocab        int     // V
	Context      int     // the trained context length
	CacheWidth   int     // features a layer's cache holds per position (KVHeads·HeadDim)
}

// Forward runs ids [T] at positions cache.Len() … and returns logits [T, V].
func (d *Decoder) Forward(ids []int32, cache *nn.Cache) *tensor.Tensor {
	return d.Logits(d.Hidden(ids, cache))
}

// Hidden runs the blocks and returns the final normalised states [T, D]. A
// nil cache runs ids as one whole sequence from position 0 (training).
func (d *Decoder) Hidden(ids []int32, cache *nn.Cache) *tensor.Tensor {
	x := d.Embed.Forward(ids) // [T, D]
	if d.EmbedScale != 0 {
		x = tensor.Scale(x, d.EmbedScale)
	}
	for i, b := range d.Blocks {
		x = b.Forward(x, cache.Layer(i))
	}
	return d.OutputNorm.Forward(x)
}

// Logits projects hidden states [T, D] to vocabulary logits [T, V].
func (d *Decoder) Logits(h *tensor.Tensor) *tensor.Tensor {
	z := d.Output.Forward(h)
	if s := d.LogitScale; s != 0 {
		z = tensor.Scale(z, s)
	}
	if c := d.LogitSoftCap; c > 0 {
		z = tensor.Scale(tensor.Tanh(tensor.Scale(z, 1/c)), c)
	}
	return z
}

// NewCache returns an empty cache of CacheWidth features a position for up
// to capacity positions in every layer.
func (d *Decoder) NewCache(capacity int) *nn.Cache {
	return nn.NewCache(len(d.Blocks), capacity, d.CacheWidth)
}

// VocabSize returns V.
func (d *Decoder) VocabSize() int { return d.Vocab }

// ContextLength returns the trained context length.
func (d *Decoder) ContextLength() int { return d.Context }

// Weights returns the frame's and the blocks' weights under their GGUF
// names, each once (a tied head is token_embd.weight). A Model with weights
// of its own outside the frame lists them with nn.Collect instead.
func (d *Decoder) Weights() []nn.Named { return nn.Unique(nn.Collect("", d)) }
