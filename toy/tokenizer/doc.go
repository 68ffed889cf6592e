// Package tokenizer turns text into the token ids a model was trained on, and
// ids back into text, from the vocabulary a GGUF file carries
// (tokenizer.ggml.*). Its reference is llama.cpp's tokenizer: for the same
// vocabulary and text it produces the same ids.
//
// Two tokenizer models are supported, named as in tokenizer.ggml.model:
//
//   - "gpt2": byte-level BPE (GPT-2, Llama 3, Qwen2, SmolLM, OLMoE). Text is
//     split into words by a pre-tokenizer (tokenizer.ggml.pre names it), each
//     word's bytes become their byte tokens, and the adjacent pair with the
//     lowest merge rank is merged until no pair has a rank.
//   - "llama": SentencePiece BPE (Llama 2, TinyLlama, Mistral, Gemma). Spaces
//     become "▁", a leading "▁" is added (add_space_prefix), the adjacent pair
//     whose concatenation is the token with the highest score is merged until
//     none is a token, and what is left that is not a token falls back to
//     byte tokens <0xNN>.
//
// Special tokens (control and user-defined) are cut out of the text before the
// model sees it: user-defined ones always, control ones only when
// EncodeOptions.ParseSpecial is set, as llama.cpp's parse_special.
//
// # Pre-tokenizers
//
// The pre-tokenizers are regular expressions in llama.cpp and Hugging Face
// (for GPT-2: 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+).
// Go's regexp has no lookahead, so each is a small hand-written scanner in
// pretokenize.go that makes the same splits, one alternative per branch.
//
// # Where toy differs from llama.cpp, on purpose
//
// Text need not be valid UTF-8. A byte that is not part of a valid sequence is
// its own character of class "other" (like U+FFFD) and is tokenized as its
// byte token, so Decode(Encode(s)) == s still holds. llama.cpp replaces such
// bytes with U+FFFD before byte-level BPE, and in SentencePiece lets a bad lead
// byte swallow the bytes after it.
//
// Decode keeps the text as it was. llama.cpp's detokenize, for the gpt-2,
// llama-bpe and default pre-tokenizers, also removes the space before
// "?", "!", ".", ",", "'s", "'m", "'re", "'ve" and around a lone "'".
//
// The tests check both against llama.cpp's output: testdata/golden.json and
// testdata/random.json.gz, made by tests/tokenizer/golden.mjs (see its
// README.md for Hugging Face's tokenizer, which agrees except where noted).
//
// # Error Handling
//
// New returns errors wrapping ErrNoVocab, ErrMalformed, ErrUnknownModel or
// ErrUnknownPre. Encode and Decode never fail and never panic: an id out of
// range decodes to nothing.
package tokenizer
