// Package bert is the BERT family of text encoders that embedding models are
// built on — all-MiniLM, bge, e5, gte (GGUF architecture "bert") and
// nomic-embed-text ("nomic-bert") — as llama.cpp runs them from the files its
// convert_hf_to_gguf writes, and as Hugging Face's BertModel defines them:
//
//	X  = LN_e(W_e[x] + W_type[0] + W_pos[0:T])     token, token type ("sentence A"), position
//	X ← LN₁(X + Attn(X))                           bidirectional: every token sees every token
//	X ← LN₂(X + W_down·GELU(W_up·X + b_up) + b_down)
//	e  = Pool(X)                                   mean of the T rows, or the [CLS] row, …
//
// The blocks are post-LayerNorm (Devlin et al. 2018): the norm comes after
// the residual addition, not before the sublayer as in GPT-2 and ViT, so the
// stream itself is normalised at every step. Attention and MLP have biases on
// every projection; GELU is the exact erf form (tensor.GELUErf).
//
// "nomic-bert" (Nussbaum et al. 2024) keeps the post-norm blocks and token
// types and changes three things: no position table — rotary embeddings on
// half-split pairs (NeoX) instead —, one fused query/key/value projection,
// and a SwiGLU feed-forward layer, Down(SiLU(Gate·x) ⊙ Up·x), all without
// biases (the LayerNorms keep theirs).
//
// Dimensions (row-major, one sequence at a time):
//
//	T  tokens in the sequence ([CLS] … [SEP])   V  vocabulary size
//	D  model width (Embed)                      F  feed-forward width
//	H  heads, Dh = D/H                          L  layers
//	P  positions (ContextLength)                TT token types
//
// # Pooling
//
// An embedding is one vector per text: the final states [T, D] pooled as the
// file's bert.pooling_type says (llama.cpp's numbering, Pooling): mean over
// the T tokens, [CLS] included (sentence-transformers' mean pooling with a
// mask of ones), the first row (CLS: bge), or the last (LAST). Normalising
// the pooled vector — to unit length, as llama-embedding, llama-server's
// /v1/embeddings and Ollama's /api/embed do — is the caller's choice (the toy
// package's Embed does it by default).
//
// # GGUF layout
//
// As llama.cpp's converter writes it (per layer "blk.N."):
//
//	token_embd.weight             [V, D]
//	token_types.weight            [TT, D]   optional; only row 0 is used
//	position_embd.weight          [P, D]    bert only
//	token_embd_norm.{weight,bias} [D]
//	attn_{q,k,v}.{weight,bias}    [D, D], [D]   bert; nomic-bert: attn_qkv.weight [3D, D]
//	attn_output.{weight,bias}     [D, D], [D]   nomic-bert: no bias
//	attn_output_norm.{weight,bias}  [D]     LN₁
//	ffn_up.{weight,bias}          [F, D], [F]   nomic-bert: ffn_up, ffn_gate [F, D], no biases
//	ffn_down.{weight,bias}        [D, F], [D]
//	layer_output_norm.{weight,bias} [D]     LN₂
//
// Metadata: ARCH.context_length, embedding_length, feed_forward_length,
// block_count, attention.head_count, attention.layer_norm_epsilon,
// attention.causal (false; llama.cpp's default when absent is true),
// pooling_type (absent: none), and for nomic-bert rope.freq_base;
// tokenizer.ggml.token_type_count. The tokenizer is WordPiece
// (tokenizer.ggml.model "bert", see package tokenizer).
//
// # Where toy differs from llama.cpp
//
// llama.cpp computes BERT's GELU with the tanh approximation, through a
// table indexed by the input rounded to fp16 (ggml_gelu), where Hugging Face
// computes x·Φ(x) exactly; toy follows Hugging Face. The two differ by up to
// ~5e-4 per activation; Config.ApproxGELU switches to llama.cpp's form to
// compare the rest of the computation with llama.cpp at float32 precision.
// llama.cpp always adds token type 0, as toy does; so does Hugging Face for a
// single text.
//
// # Error Handling
//
// Loading returns errors wrapped with %w (ErrUnsupported for files that use
// features toy lacks); a sequence longer than the position table, or an
// empty one, panics in Hidden with the sizes, as shape errors do everywhere
// in toy — the toy package's Embed checks lengths first and returns errors.
package bert
