// Package olmoe is OLMoE (Muennighoff et al. 2024, "OLMoE: Open
// Mixture-of-Experts Language Models", arXiv:2409.02060): a decoder-only
// transformer whose feed-forward layers are sparse mixtures of SwiGLU
// experts.
//
// Dimensions (row-major):
//
//	T  tokens in this call       V  vocabulary size
//	D  model width (Embed)       F  width of each expert
//	H  query heads               KV key/value heads
//	Dh head width                L  layers
//	E  experts per layer         k  experts run per token
//
// Each block is the Llama block with two changes:
//
//	x = x + Attn(RMSNorm(x))     q ← RMSNorm(q) over all H·Dh features, k over KV·Dh,
//	                             before RoPE on half-split pairs (i, i+Dh/2)
//	x = x + MoE(RMSNorm(x))      p = softmax(x·Wrᵀ) over E experts;
//	                             y = Σ_{e ∈ top-k(p)} p_e · SwiGLU_e(x)
//
// The k routing weights are the router's probabilities as they are, not
// renormalised over the chosen experts. GGUF files store each projection of
// the experts as one 3-D tensor: ffn_gate_exps and ffn_up_exps [E, F, D],
// ffn_down_exps [E, D, F]; the router is ffn_gate_inp [E, D]. The output
// head is never tied to the embedding. See nn.MoE for how the experts run.
package olmoe
