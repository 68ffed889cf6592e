// Package qwen35 is Qwen3.5 (GGUF architecture "qwen35"; 0.8B to 27B, the
// dense models of the family): a hybrid decoder whose blocks mix the
// sequence with a gated delta rule ("linear attention") in three layers of
// every four and with gated grouped-query attention in the fourth,
//
//	x = x + Mixer(RMSNorm(x))
//	x = x + SwiGLU(RMSNorm(x))
//
// The delta-rule layer (DeltaNet) projects x to queries, keys and values,
// runs a short causal convolution and SiLU over them, and keeps, per value
// head, a matrix S that each token decays and corrects towards its value
// (tensor.GatedDeltaNet); the output is RMS-normalised per head and gated
// by SiLU of a second projection. Its memory does not grow with the
// context: the cache holds S, plus the few inputs the convolution and a
// rewind need. The attention layers RMS-normalise query and key heads,
// rotate a quarter of each head's features (NeoX pairs; Qwen3.5's
// interleaved M-RoPE is plain RoPE for text), and gate each head's output
// with σ of a second half of the query projection. Qwen3.5-MoE
// ("qwen35moe") replaces every layer's SwiGLU with a mixture of experts
// (softmax router, renormalised over the chosen) beside a shared expert
// gated by a sigmoid. Qwen3-Next ("qwen3next", 80B-A3B), the family's
// predecessor, is the same model with mixtures in every layer, except that
// a value head reads the key head of its group (h/(Hv/Hk), where Qwen3.5's
// files have the heads reordered for h mod Hk) and that its files give β
// and α as one projection (ssm_ba) and, from older conversions, queries,
// keys, values and the output gate as one (ssm_in), both interleaved by
// key head.
//
// Dimensions (row-major):
//
//	T   tokens in this call        V   vocabulary size
//	D   model width (Embed)        F   feed-forward width
//	H   query heads                KV  key/value heads
//	Dh  attention head width       R   rotated features per head
//	Hk  delta-rule key heads       Hv  delta-rule value heads
//	Ds  delta-rule head width      L   convolution taps
//	C   convolved channels, 2·Hk·Ds + Hv·Ds
package qwen35
