// Package cohere is Cohere's Command R and Command R+ (and Aya 23 and Aya
// Expanse, which share them; GGUF architecture "command-r") and Command R7B
// ("cohere2"): decoders whose blocks run attention and a SwiGLU side by side
// on one LayerNorm without a bias,
//
//	h = LayerNorm(x)
//	x = x + SwiGLU(h) + Attn(h)
//
// with rotary positions on adjacent pairs, a tied output head and logits
// multiplied by a scale. Command R+ (command-r with attn_q_norm and
// attn_k_norm) LayerNorms each query and key head before RoPE, each head
// with its own scale and no offset. Command R7B makes three of every four
// layers attend within a sliding window, with RoPE, and the fourth to
// everything, without positions.
//
// Dimensions (row-major):
//
//	T  tokens in this call       V  vocabulary size
//	D  model width (Embed)       F  feed-forward width
//	H  query heads               KV key/value heads
//	Dh head width (D/H)          L  layers
package cohere
