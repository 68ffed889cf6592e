// Package llama4 is Meta's Llama 4 (Scout, Maverick; "The Llama 4 herd",
// Meta 2025), the text model: a decoder-only transformer that interleaves
// layers with RoPE and chunked local attention and global layers without
// positions (iRoPE), and whose feed-forward layers are, in some or all
// layers, mixtures of experts beside a shared expert. llama.cpp's
// architecture name is "llama4".
//
// Dimensions (row-major):
//
//	T  tokens in this call       V  vocabulary size
//	D  model width (Embed)       F  dense MLP width; F_e expert width
//	H  query heads               KV key/value heads
//	Dh head width                L  layers
//	E  experts per mixture       k  experts run per token
//
// Each block:
//
//	x = x + Attn(RMSNorm(x))   layers l with (l+1) mod 4 ≠ 0: RoPE on adjacent pairs,
//	                           then each q and k head RMS-normalised without weights
//	                           (the "L2 norm"; not in the 128-expert Maverick), and
//	                           attention within chunks of 8192 positions;
//	                           every fourth layer (NoPE): no RoPE, global attention,
//	                           q at position p × (1 + 0.1·ln(⌊(p + 1)/8192⌋ + 1))
//	x = x + FFN(RMSNorm(x))    SwiGLU; or, when (l+1) mod P_moe = 0, the mixture:
//	                           r = x·Wrᵀ, the k largest r_e, expert e run on σ(r_e)·x,
//	                           outputs summed as they are, plus a shared expert
//
// The chunk size, the NoPE period and the temperature are llama.cpp's
// constants for llama4 files (Meta's config values), not read from them;
// Config holds them so that a card shows them and a small model can use
// others. GGUF files store the experts as 3-D tensors (ffn_gate_exps,
// ffn_up_exps [E, F_e, D], ffn_down_exps [E, D, F_e]), the router as
// ffn_gate_inp [E, D], the shared expert as ffn_{gate,up,down}_shexp of
// width F_e, and Llama 3.1's RoPE frequency factors as rope_freqs.weight.
// The vision tower (mmproj files) is not here.
package llama4
