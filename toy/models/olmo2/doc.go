// Package olmo2 is AllenAI's OLMo 2 and Olmo 3 (OLMo et al. 2024, 2025):
// fully open decoder-only transformers that normalise each sublayer's
// output rather than its input, and RMS-normalise the whole query and key
// projections before rotary positions:
//
//	x = x + RMSNorm(Attn(x)),  q, k ← RMSNorm(x·Wqᵀ), RMSNorm(x·Wkᵀ), then RoPE
//	x = x + RMSNorm(SwiGLU(x))
//
// Olmo 3 (the same GGUF architecture, "olmo2") adds sliding-window layers:
// three of every four attend within a window and turn without RoPE scaling;
// the fourth attends to everything, with YaRN scaling when the file asks
// for it.
//
// Dimensions (row-major):
//
//	T  tokens in this call       V  vocabulary size
//	D  model width (Embed)       F  feed-forward width
//	H  query heads               KV key/value heads
//	Dh head width (D/H)          L  layers
package olmo2
