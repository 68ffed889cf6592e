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
// feed-forward layer (MLP or SwiGLU) by filling the interface fields.
type Block struct {
	AttnNorm Layer `gguf:"attn_norm"`
	Attn     Attention
	FFNNorm  Layer `gguf:"ffn_norm"`
	FFN      Layer
}

// Forward runs the block on x [T, D] with this layer's KV cache.
func (b *Block) Forward(x *tensor.Tensor, cache *KVCache) *tensor.Tensor {
	x = tensor.Add(x, b.Attn.Forward(b.AttnNorm.Forward(x), cache))
	x = tensor.Add(x, b.FFN.Forward(b.FFNNorm.Forward(x)))
	return x
}
