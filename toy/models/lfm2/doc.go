// Package lfm2 is Liquid AI's LFM2 (GGUF architecture "lfm2"; LFM2 and
// LFM2.5, 350M to 2.6B): a hybrid decoder whose blocks mix the sequence
// with a gated short convolution in most layers and with grouped-query
// attention in the rest,
//
//	x = x + Mixer(RMSNorm(x))
//	x = x + SwiGLU(RMSNorm(x))
//
// The convolution (ShortConv) projects x to three parts b, c, h, convolves
// b ⊙ h over the last few positions channel by channel, and gates the
// result with c. The attention RMS-normalises each query and key head
// before RoPE on the two halves of each head. The file marks the
// convolution layers with 0 key/value heads; the final norm is the tensor
// llama.cpp calls token_embd_norm, and the output head is tied to the
// token embedding unless the file has its own. LFM2-MoE ("lfm2moe",
// LFM2-8B-A1B) keeps the first layers' SwiGLU and replaces the others'
// with a mixture of experts scored by sigmoids and chosen with a bias.
//
// Dimensions (row-major):
//
//	T  tokens in this call       V  vocabulary size
//	D  model width (Embed)       F  feed-forward width
//	H  query heads               KV key/value heads (per layer)
//	Dh head width (D/H)          L  the convolution's taps (ConvTaps)
package lfm2
