// Package phi2 is Microsoft's Phi-2 and Phi-1.5 (Li et al. 2023, "Textbooks
// Are All You Need II", arXiv:2309.05463; GGUF architecture "phi2"): a
// decoder-only transformer whose blocks run attention and the MLP side by
// side on one LayerNorm of the residual stream, as GPT-J does.
//
// Dimensions (row-major):
//
//	T  tokens in this call       V  vocabulary size
//	D  model width (Embed)       F  feed-forward width (4D)
//	H  heads                     Dh head width (D/H)
//	R  features rotated per head (RopeDim: 32 of 80 in Phi-2, 32 of 64 in Phi-1.5)
//	L  layers
//
// Each block, every projection with a bias:
//
//	h = LayerNorm(x)
//	[q; k; v] = h·W_qkvᵀ + b_qkv      attn_qkv [3D, D] (or attn_q, attn_k, attn_v)
//	q, k ← RoPE(q, k) on half-split pairs (i, i+R/2) of the first R features; the rest pass through
//	x = x + Attn(q, k, v)·W_oᵀ + b_o + Down(GELU(Up(h)))
//
// GELU is the tanh approximation. The output head has its own LayerNorm and
// a bias, and is never tied to the embedding.
package phi2
