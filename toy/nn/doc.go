// Package nn is toy's layer 2: the blocks transformers are assembled from —
// Linear, Embedding, RMSNorm, LayerNorm, Attention (MHA and GQA, causal, with a
// KV cache), MLP, SwiGLU, MoE (a mixture of SwiGLU experts), and the pre-norm
// transformer Block — each a struct of weights with a Forward method built
// from the primitives of package tensor.
//
// Dimension legend (row-major, outermost first):
//
//	T  tokens in this call      S  positions in the KV cache
//	D  model width              F  feed-forward width
//	H  query heads              KV key/value heads (H = KV for MHA, fewer for GQA)
//	Dh head width (D = H·Dh)    V  vocabulary size
//	E  experts (MoE)            k  experts run per token
//
// Weights live in struct fields tagged with their GGUF names; Load fills them
// from a GGUF file (see Load for the tag grammar).
package nn
