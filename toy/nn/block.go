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
//
// OLMo 2 keeps only the norms after each sublayer (AttnNorm and FFNNorm
// nil: x = x + AttnPostNorm(Attn(x))). Granite scales each sublayer's output by ResidualScale before the sum:
// x = x + s·Attn(AttnNorm(x)), and so for the FFN.
type Block struct {
	AttnNorm     Layer `gguf:"attn_norm,optional" shape:"Embed" card:"γ_a, attention input norm scale"` // nil: none (OLMo 2)
	Attn         Attention
	AttnPostNorm Layer `gguf:"post_attention_norm,optional" shape:"Embed" card:"γ̂_a, attention output norm scale"` // nil: none
	FFNNorm      Layer `gguf:"ffn_norm,optional" shape:"Embed" card:"γ_f, feed-forward input norm scale"`           // nil: none (OLMo 2)
	FFN          Layer
	FFNPostNorm  Layer `gguf:"post_ffw_norm,optional" shape:"Embed" card:"γ̂_f, feed-forward output norm scale"` // nil: none

	ResidualScale float32 // multiplies each sublayer's output; 0 means 1
}

// Forward runs the block on x [T, D] with this layer's KV cache.
func (b *Block) Forward(x *tensor.Tensor, cache *KVCache) *tensor.Tensor {
	a := b.Attn.Forward(apply(b.AttnNorm, x), cache)
	x = tensor.Add(x, b.scaled(apply(b.AttnPostNorm, a)))
	f := b.FFN.Forward(apply(b.FFNNorm, x))
	return tensor.Add(x, b.scaled(apply(b.FFNPostNorm, f)))
}

// apply returns norm(x), or x when the block has no such norm.
func apply(norm Layer, x *tensor.Tensor) *tensor.Tensor {
	if norm == nil {
		return x
	}
	return norm.Forward(x)
}

// scaled returns a sublayer's output times ResidualScale.
func (b *Block) scaled(y *tensor.Tensor) *tensor.Tensor {
	if b.ResidualScale == 0 {
		return y
	}
	return tensor.Scale(y, b.ResidualScale)
}

// Mixer is a sequence mixer: attention, or a layer that carries a state
// along the sequence in its cache (LFM2's short convolution, Qwen3.5's
// delta rule).
type Mixer interface {
	Forward(x *tensor.Tensor, cache *KVCache) *tensor.Tensor
}

// MixerBlock is the pre-norm block of the hybrid models, whose layers
// differ in their sequence mixer:
//
//	x = x + Mixer(RMSNorm(x))
//	x = x + FFN(RMSNorm(x))
//
// A family whose file names the second norm otherwise renames it where it
// embeds the block (Qwen3.5: `gguf-names:"ffn_norm=post_attention_norm"`).
type MixerBlock struct {
	Norm    *RMSNorm `gguf:"attn_norm" shape:"Embed" card:"γ_a, mixer input norm scale"`
	Mixer   Mixer
	FFNNorm *RMSNorm `gguf:"ffn_norm" shape:"Embed" card:"γ_f, feed-forward input norm scale"`
	FFN     Layer    // SwiGLU or MoE
}

// Forward runs the block on x [T, D] with this layer's cache.
func (b *MixerBlock) Forward(x *tensor.Tensor, cache *KVCache) *tensor.Tensor {
	x = tensor.Add(x, b.Mixer.Forward(b.Norm.Forward(x), cache))
	return tensor.Add(x, b.FFN.Forward(b.FFNNorm.Forward(x)))
}
