// Package phi3 is Microsoft's Phi-3 family (Abdin et al. 2024, "Phi-3
// Technical Report", arXiv:2404.14219): Phi-3-mini and -medium, Phi-3.5-mini,
// Phi-4 and Phi-4-mini, all GGUF architecture "phi3". Each is the Llama
// transformer (RMSNorm, rotary positions, grouped-query attention, SwiGLU)
// with its projections fused and LongRoPE for long contexts.
//
// Dimensions (row-major):
//
//	T  tokens in this call       V  vocabulary size
//	D  model width (Embed)       F  feed-forward width
//	H  query heads               KV key/value heads
//	Dh head width                L  layers
//	R  features rotated per head (RopeDim: Dh, or 96 of 128 in Phi-4-mini)
//
// Each block:
//
//	[q; k; v] = RMSNorm(x)·W_qkvᵀ            attn_qkv [(H+2KV)·Dh, D] (or attn_q, attn_k, attn_v)
//	q, k ← RoPE(q, k) on half-split pairs (i, i+R/2) of the first R features
//	x = x + Attn(q, k, v)·W_oᵀ
//	[g; u] = RMSNorm(x)·W_upᵀ                ffn_up [2F, D]: the gate's F rows, then the up projection's
//	x = x + (SiLU(g) ⊙ u)·W_downᵀ
//
// # LongRoPE
//
// The 128k-context models (Phi-3-mini-128k, Phi-3.5-mini, Phi-4-mini; Ding et
// al. 2024, "LongRoPE", arXiv:2402.13753) hold two sets of per-pair frequency
// divisors, rope_factors_short.weight and rope_factors_long.weight [R/2]:
// pair i turns by pos·θ^(−2i/R)/f[i]. Which set a model runs with is fixed by
// its context size, as in llama.cpp: the long factors when the context
// exceeds rope.scaling.original_context_length (4096 in every release), the
// short ones otherwise. For toy the context size is the KV cache's capacity
// (a Session's, so toy chat --ctx and toy serve --ctx set it; toy infer's is
// prompt plus --n); a training step without a cache uses the length of its
// sequences. llama.cpp compares its n_ctx after rounding it up to a multiple
// of 256, so the two agree at every context size whenever the original
// context is such a multiple, as 4096 is. cos and sin are also multiplied by
// rope.scaling.attn_factor, √(1 + ln s / ln ℓ_orig) for the stretch
// s = ℓ_max/ℓ_orig as llama.cpp's converter writes it, whichever set is in
// use; a file without the key runs with 1, as in llama.cpp.
//
// Phi-4 (14B) files have no factors: plain RoPE, base 250000. Phi-3-mini and
// -medium files carry attention.sliding_window (2047); llama.cpp ignores it
// for phi3 (its converters did not record which layers slide), and so does
// toy: every layer attends to the whole context.
package phi3
