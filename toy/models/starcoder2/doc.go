// Package starcoder2 is BigCode's StarCoder2 (Lozhkov et al. 2024; 3B, 7B,
// 15B), the code model Continue and other editors run for completion: GPT-2's
// block — pre-LayerNorm with biases, a GELU MLP with biases — around Llama's
// attention — grouped-query heads with rotary positions (half-split "NeoX"
// pairs) — with biases on the query, key, value and output projections.
//
// Dimensions (row-major):
//
//	T  tokens in this call       V  vocabulary size
//	D  model width (Embed)       F  feed-forward width
//	H  query heads               KV key/value heads
//	Dh head width (D/H)          L  layers
package starcoder2
