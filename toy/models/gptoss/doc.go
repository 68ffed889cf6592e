// Package gptoss is gpt-oss (OpenAI 2025, "gpt-oss-120b & gpt-oss-20b Model
// Card", arXiv:2508.10925): a decoder-only transformer whose feed-forward
// layers are sparse mixtures of experts, with attention sinks and
// alternating sliding-window attention. llama.cpp's architecture name is
// "gpt-oss".
//
// Dimensions (row-major):
//
//	T  tokens in this call       V  vocabulary size
//	D  model width (Embed)       F  width of each expert
//	H  query heads               KV key/value heads
//	Dh head width (H·Dh ≠ D)     L  layers
//	E  experts per layer         k  experts run per token
//
// Each block:
//
//	x = x + Attn(RMSNorm(x))   q, k, v with biases; RoPE (YaRN) on half-split pairs;
//	                           each head's softmax also counts a learned sink logit
//	                           s_h as a key with no value; every other layer (the
//	                           even ones) sees only the last W positions
//	x = x + MoE(RMSNorm(x))    r = x·Wrᵀ + br over E experts; the k largest r_e,
//	                           weighted by softmax over those k;
//	                           expert e: Down_e(SwiGLUOAI(Gate_e(x), Up_e(x))), all with biases
//
// SwiGLUOAI is the clamped gate of tensor.SwiGLUOAI: x = min(g, 7),
// y = clamp(u, −7, 7), x·σ(1.702·x)·(y + 1). The second norm of a block is
// stored as post_attention_norm. GGUF files store the experts as 3-D
// tensors (ffn_gate_exps, ffn_up_exps [E, F, D], ffn_down_exps [E, D, F],
// MXFP4 in OpenAI's releases) and their biases as [E, F] and [E, D]; the
// sinks are attn_sinks [H].
package gptoss
