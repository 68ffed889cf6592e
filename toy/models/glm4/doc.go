// Package glm4 is Zhipu AI's GLM-4 family in its two GGUF architectures.
//
// "glm4" (GLM-4-0414: GLM-4-9B, GLM-4-32B, GLM-Z1) is a dense decoder with
// "sandwich" norms, an RMSNorm before and after each sublayer:
//
//	x = x + RMSNorm(Attn(RMSNorm(x)))
//	x = x + RMSNorm(SwiGLU(RMSNorm(x)))
//
// Its attention has biases on the query, key and value projections and
// turns only the first half of each head with RoPE, in adjacent pairs
// (2i, 2i+1); its SwiGLU holds the gate and up projections as one matrix of
// 2F rows, the gate's first.
//
// "glm4moe" (GLM-4.5, GLM-4.5-Air, GLM-4.6) is a pre-norm mixture of
// experts:
//
//	x = x + Attn(RMSNorm(x))
//	x = x + FFN(RMSNorm(x))
//
// with the same biased attention, optionally per-head RMSNorm of queries
// and keys (GLM-4.5), and half of each head turned in NeoX pairs
// (i, i + R/2). The first few layers' FFN is a dense SwiGLU; the others run
// DeepSeek-V3's router: sigmoid scores, the k experts of highest score plus
// a per-expert bias (exp_probs_b), weighted by their unbiased scores
// (divided by their sum in GLM-4.5's files) times a scale; beside the
// experts, shared experts (stored as one SwiGLU) whose output is added
// ungated. The files' extra
// multi-token-prediction layers (nextn_predict_layers) are not run.
//
// Dimensions (row-major):
//
//	T   tokens in this call        V   vocabulary size
//	D   model width (Embed)        F   dense feed-forward width
//	H   query heads                KV  key/value heads
//	Dh  head width                 R   rotated features per head
//	E   experts (glm4moe)          k   experts run per token
//	Fe  width of each expert       Fs  the shared experts' width, Es·Fe
package glm4
