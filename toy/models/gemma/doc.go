// Package gemma is Google's Gemma family, three generations in one Forward
// (Gemma Team 2024, 2024, 2025; GGUF architectures gemma, gemma2, gemma3,
// text only). Each is a decoder-only transformer like Llama (RMSNorm, rotary
// positions with half-split pairs, grouped-query attention) with:
//
//   - token embeddings scaled by √D on the way in, and a GeGLU feed-forward
//     layer, Down(GELU(Gate x) ⊙ Up x) — all three;
//   - "sandwich" norms: each sublayer's output is RMS-normalised again before
//     it joins the residual stream (post_attention_norm, post_ffw_norm) —
//     Gemma 2 and 3;
//   - local layers that attend within a sliding window: every other layer
//     from the first in Gemma 2 (window 4096), five of every six in Gemma 3
//     (window 512 or 1024, RoPE base 10000 where the global layers have 10⁶
//     and, from 4B on, linear RoPE scaling by 8);
//   - soft caps, s ← c·tanh(s/c), on the attention scores (c = 50) and the
//     output logits (c = 30) — Gemma 2 only;
//   - per-head RMSNorm of queries and keys before RoPE — Gemma 3;
//   - scores scaled by 1/√query_pre_attn_scalar: 1/√Dh, but 1/√(D/H) in the
//     27B models, which toy (as llama.cpp) recognises by their depth.
//
// llama.cpp's converter stores each RMSNorm weight as 1 + w (Gemma's norms
// scale by 1 + w), so the GGUF weights are used as they are.
//
// Dimensions (row-major):
//
//	T  tokens in this call       V  vocabulary size
//	D  model width (Embed)       F  feed-forward width
//	H  query heads               KV key/value heads
//	Dh head width (may differ from D/H: 256 in Gemma 2 2B, D/H = 288)
//	L  layers
package gemma
