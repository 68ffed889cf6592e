// Package ernie is Baidu's ERNIE 4.5 family of text models in its two GGUF
// architectures.
//
// "ernie4_5" (ERNIE-4.5-0.3B) is Llama's pre-norm decoder:
//
//	x = x + Attn(RMSNorm(x))
//	x = x + SwiGLU(RMSNorm(x))
//
// with grouped-query attention whose RoPE turns every feature of each head
// in adjacent pairs (2i, 2i+1), llama.cpp's "normal" RoPE; the query, key
// and value projections may have biases (none of the releases has them),
// and the output head may be tied to the embedding (ERNIE-4.5-0.3B's is).
//
// "ernie4_5-moe" (ERNIE-4.5-21B-A3B, ERNIE-4.5-300B-A47B) keeps the block
// and makes its FFN a mixture of experts in layer l (from 0) when
//
//	l ≥ leading_dense_block_count  and  (l+1) mod interleave_moe_layer_step = 0
//
// and a dense SwiGLU otherwise (the releases: the first 1 or 3 layers dense,
// then experts in every layer). The mixture is a softmax router over E
// SwiGLU experts: each token runs the k experts of highest probability plus
// a per-expert choice bias (exp_probs_b, ERNIE's e_score_correction_bias;
// optional), weighted by their unbiased probabilities divided by their sum;
// a shared SwiGLU (expert_shared_feed_forward_length wide, the shared
// experts stored as one) adds its output ungated.
//
// llama.cpp's graph places the experts by that rule, and so does toy; its
// loader, though, asks every layer from leading_dense_block_count on for
// expert tensors, so it loads only files where that rule puts experts in
// all of them (a step of 1, as every release has).
//
// Dimensions (row-major):
//
//	T   tokens in this call        V   vocabulary size
//	D   model width (Embed)        F   dense feed-forward width
//	H   query heads                KV  key/value heads
//	Dh  head width                 E   experts (ernie4_5-moe)
//	k   experts run per token      Fe  width of each expert
//	Fs  the shared expert's width
package ernie
