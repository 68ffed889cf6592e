// The pre-norm transformer block.

package nn

import "github.com/toyml/toy/toy/tensor"

// Layer is anything that maps [T, D] to [T, D]: norms and feed-forward layers.
type Layer interface {
	Forward(x *tensor.Tensor) *tensor.Tensor
}

// Block is the pre-norm transformer block shared by GPT-2 and Llama
// (Radford et al. 2019; Touvron et al. 2023):
//
//	x = x + Attn(AttnNorm(x))
//	x = x + FFN(FFNNorm(x))
//
// The architecture chooses the norms (LayerNorm or RMSNorm) and the
// feed-forward layer (MLP, SwiGLU or GeGLU) by filling the interface fields.
// Gemma 2 also normalises each sublayer's output before adding it to the
// residual stream ("sandwich" norms):
//
//	x = x + AttnPostNorm(Attn(AttnNorm(x)))
//	x = x + FFNPostNorm(FFN(FFNNorm(x)))
type Block struct {
	AttnNorm     Layer `gguf:"attn_norm"`
	Attn         Attention
	AttnPostNorm Layer `gguf:"post_attention_norm,optional"` // nil: none
	FFNNorm      Layer `gguf:"ffn_norm"`
	FFN          Layer
	FFNPostNorm  Layer `gguf:"post_ffw_norm,optional"` // nil: none
}

// Forward runs the block on x [T, D] with this layer's KV cache.
func (b *Block) Forward(x *tensor.Tensor, cache *KVCache) *tensor.Tensor {
	a := b.Attn.Forward(b.AttnNorm.Forward(x), cache)
	if b.AttnPostNorm != nil {
		a = b.AttnPostNorm.Forward(a)
	}
	x = tensor.Add(x, a)
	f := b.FFN.Forward(b.FFNNorm.Forward(x))
	if b.FFNPostNorm != nil {
		f = b.FFNPostNorm.Forward(f)
	}
	return tensor.Add(x, f)
}
