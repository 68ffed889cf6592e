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
// Ten GGUF architectures load here (Archs); each one's card (Model.Card)
// writes out how it differs. "llama" files store Q and K rows permuted for
// rotary embeddings on adjacent feature pairs (llama.cpp's converter does
// this), so RoPE pairs (2i, 2i+1), as in smollm3, mistral3 and Granite; the
// others pair (i, i+Dh/2), the "NeoX" layout. Llama 3.1 and later add
// rope_freqs.weight, frequency factors that divide each pair's angle. Qwen2
// adds biases to Q, K and V; Qwen3 RMS-normalises each query and key head
// before RoPE, and its heads may be wider than D/H. A mixture of SwiGLU
// experts (nn.MoE) replaces the feed-forward layer in the *moe architectures
// and in "llama" files with expert tensors (Mixtral); Granite adds four
// multipliers, SmolLM3 drops RoPE in every fourth layer, and Ministral 3
// reads YaRN's betas and magnitude and Llama 4's query temperature.
package llama
