// Package deepseek2 is DeepSeek-V2 (DeepSeek-AI 2024, "DeepSeek-V2: A
// Strong, Economical, and Efficient Mixture-of-Experts Language Model",
// arXiv:2405.04434) and the models llama.cpp files under its GGUF
// architecture "deepseek2": DeepSeek-V2, V2-Lite, DeepSeek-Coder-V2(-Lite),
// and, with sigmoid routing, DeepSeek-V3-style files.
//
// Dimensions (row-major):
//
//	T  tokens in this call            V  vocabulary size
//	D  model width (Embed)            L  layers
//	H  heads                          F  dense feed-forward width
//	R  key/value latent (KVLoraRank)  Rq query bottleneck (QLoraRank; 0: none)
//	Dk query/key head = Dn + Dr       Dv value head
//	Dn a head's unrotated features    Dr its rotated features (RopeDim)
//	E  experts per MoE layer          k  experts run per token
//	Fe expert width                   Es shared experts
//
// Each block is pre-norm:
//
//	x = x + MLA(RMSNorm(x))           multi-head latent attention (see Attention)
//	x = x + FFN(RMSNorm(x))           SwiGLU in the first DenseLayers blocks, then
//	                                  Σ_{e ∈ top-k} w_e·SwiGLU_e(x) + SwiGLU_s(x)
//
// The router scores the E experts with a softmax (V2) or a sigmoid each
// (V3, whose exp_probs_b bias shifts the scores only to choose); the k best
// run, optionally only from the best groups of experts (V2's and V3's
// group-limited routing), and their weights w_e are the scores, divided by
// their sum when ExpertWeightsNorm, times ExpertWeightsScale. The Es shared
// experts are stored as one SwiGLU of width Es·Fe (ffn_*_shexp) that every
// token runs, ungated. The experts' stacks are 3-D tensors as in OLMoE; see
// nn.MoE.
//
// RoPE rotates adjacent pairs of the last Dr features of each query head
// and of the one rotated key k_r, with YaRN when the file says so; the
// attention scale is not 1/√Dk then but m²/√Dk, m DeepSeek's YaRN
// temperature (Config.AttnScale).
//
// The KV cache holds what the file's layout makes natural: each head's
// decompressed keys and values for attn_kv_b files, the latent and the
// rotated key (R+Dr per position, for all heads) for attn_k_b/attn_v_b
// files — there it is held twice, as keys and as values, since toy's cache
// has both.
package deepseek2
