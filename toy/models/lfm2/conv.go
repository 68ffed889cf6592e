// LFM2's gated short convolution.

package lfm2

import (
	"fmt"

	"github.com/toyml/toy/toy/nn"
	"github.com/toyml/toy/toy/tensor"
)

// ShortConv is the gated short convolution that replaces attention in most
// of LFM2's layers:
//
//	b, c, h = split(x·W_inᵀ)               three [T, D] thirds, in that order
//	u       = b ⊙ h
//	y_t     = Σ_{j<L} w_j ⊙ u_{t−L+1+j}    depthwise and causal: u_s = 0 for s < 0
//	out     = (c ⊙ y)·W_outᵀ
//
// Each channel has its own kernel of L taps (a row of Conv), which looks at
// the channel's last L values of u, the current one included; the sum runs
// over the taps in order, as llama.cpp's ggml_ssm_conv adds them.
type ShortConv struct {
	Conv *tensor.Tensor `gguf:"shortconv.conv.weight" shape:"Embed, ConvTaps" init:"-" card:"K, convolution taps, a row per channel"` // F32; NewRandom draws them after In and Out
	In   *nn.Linear     `gguf:"shortconv.in_proj" shape:"3*Embed, Embed" card:"W_in, convolution input projection to B, C, H̃"`
	Out  *nn.Linear     `gguf:"shortconv.out_proj" shape:"Embed, Embed" init:"resid" card:"W_out, convolution output projection"`
}

// Forward runs the convolution on x [T, D]. With a cache, its K rows hold
// u of every position seen (position p in row p): the taps reach back into
// them, and the new rows are appended, so that truncating the cache forgets
// them as it forgets keys and values. Without one (training), x is the whole
// sequence from position 0.
func (s *ShortConv) Forward(x *tensor.Tensor, cache *nn.KVCache) *tensor.Tensor {
	T, D := x.Rows(), x.Cols()
	L := s.Conv.Dim(1)
	bch := s.In.Forward(x) // [T, 3D]
	b, c, h := tensor.Columns(bch, 0, D), tensor.Columns(bch, D, 2*D), tensor.Columns(bch, 2*D, 3*D)
	u := tensor.Mul(b, h) // [T, D]

	// past: the L−1 rows of u before this call's, flat; zeros before
	// position 0.
	n := 0
	if cache != nil {
		n = min(cache.Len, L-1)
	}
	var past *tensor.Tensor // [1, (L−1)·D]
	switch {
	case n == 0:
		past = tensor.New(1, (L-1)*D)
	case n == L-1:
		past = tensor.Reshape(cache.K.Slice(cache.Len-n, cache.Len), 1, n*D)
	default:
		past = tensor.ConcatColumns(tensor.New(1, (L-1-n)*D), tensor.Reshape(cache.K.Slice(cache.Len-n, cache.Len), 1, n*D))
	}
	if cache != nil {
		if cache.Len+T > cache.K.Rows() {
			panic(fmt.Sprintf("lfm2: %d positions + %d new exceed the context of %d", cache.Len, T, cache.K.Rows()))
		}
		tensor.SetRows(cache.K, cache.Len, u)
		cache.Len += T
	}
	return s.Out.Forward(tensor.Mul(c, tensor.CausalConv(past, u, s.Conv)))
}
