// Package gpt2 is GPT-2 (Radford et al. 2019): learned absolute position
// embeddings, LayerNorm, multi-head attention with a fused QKV projection, and
// a GELU MLP, all with biases.
//
// Dimensions (row-major):
//
//	T  tokens in this call   V  vocabulary size
//	D  model width           F  feed-forward width (4D)
//	H  heads                 Dh head width (D/H)
//	L  layers                P  positions (context length)
package gpt2
