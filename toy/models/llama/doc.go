// Package llama is the Llama family of decoder-only transformers: Llama 2 and
// 3.x, SmolLM2, TinyLlama, Mistral, Mixtral, Qwen2.5, Qwen2-MoE, Qwen3,
// Qwen3-MoE, Granite, Granite-MoE, SmolLM3, EXAONE 3.5 and Ministral 3 share one architecture
// (RMSNorm, rotary positions, grouped-query attention, SwiGLU) and differ only
// in the numbers of a flat Config, read from GGUF metadata.
//
// Dimensions (row-major):
//
//	T  tokens in this call       V  vocabulary size
//	D  model width (Embed)       F  feed-forward width
//	H  query heads               KV key/value heads
//	Dh head width                L  layers
//
// Ten GGUF architectures load here. "llama" files store Q and K rows
// permuted for rotary embeddings on adjacent feature pairs (llama.cpp's
// converter does this), so RoPE pairs (2i, 2i+1); Llama 3.1 and later add
// rope_freqs.weight, frequency factors that divide each pair's angle.
// "qwen2" files are not permuted and pair features (i, i+Dh/2) — the "NeoX"
// layout — and add biases to Q, K and V. "qwen3" files pair as qwen2, have
// no biases, and RMS-normalise each query and key head before RoPE
// (attn_q_norm, attn_k_norm); their heads may be wider than D/H.
// "qwen3moe" is qwen3 with a mixture of experts (nn.MoE) in place of the
// feed-forward layer; so is a "llama" file with expert tensors (Mixtral).
// Both renormalise the chosen experts' weights to sum to 1. "qwen2moe" is
// qwen2 with a mixture that does not, plus a shared expert every token runs,
// weighted by a sigmoid gate. "granite" is llama with four multipliers
// (Config.EmbedScale, ResidualScale, AttnScale, LogitScale);
// "granitemoe" adds a renormalised mixture as Mixtral's. "smollm3" is llama
// without RoPE in every fourth layer; "exaone" (LG's EXAONE 3.5) is llama
// with half-split pairs; "mistral3" (Ministral 3) is llama with YaRN's
// betas and magnitude from its metadata and Llama 4's query temperature.
package llama
