// Package tokenizer turns text into the token ids a model was trained on, and
// ids back into text, from the vocabulary a GGUF file carries
// (tokenizer.ggml.*). Its reference is llama.cpp's tokenizer: for the same
// vocabulary and text it produces the same ids.
//
// Three tokenizer models are supported, named as in tokenizer.ggml.model:
//
//   - "gpt2": byte-level BPE (GPT-2, Llama 3, Qwen2, Qwen3.5, SmolLM, OLMoE).
//     Text is split into words by a pre-tokenizer (tokenizer.ggml.pre names
//     it), each word's bytes become their byte tokens, and the adjacent pair
//     with the lowest merge rank is merged until no pair has a rank.
//   - "llama": SentencePiece BPE (Llama 2, TinyLlama, Mistral, Gemma). Spaces
//     become "▁", a leading "▁" is added (add_space_prefix), the adjacent pair
//     whose concatenation is the token with the highest score is merged until
//     none is a token, and what is left that is not a token falls back to
//     byte tokens <0xNN>.
//   - "bert": WordPiece (BERT, and the embedding models built on it:
//     all-MiniLM, bge, e5, gte, nomic-embed-text). The text is normalised as
//     Hugging Face's BertNormalizer does (control characters dropped,
//     whitespace made spaces, CJK ideographs cut apart, accents stripped and
//     letters lowercased as tokenizer.ggml.normalizer.* say), cut into words
//     at spaces and punctuation, and each word into its longest pieces first
//     to last; a word no pieces cover, or of more than 100 characters, is
//     [UNK]. [CLS] and [SEP] are BOS and EOS, and always added. Its reference
//     is Hugging Face's tokenizer, not llama.cpp's (see wordpiece.go).
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
// pretokenize.go that makes the same splits, one alternative per branch;
// DeepSeek's (deepseek-llm, deepseek-coder, deepseek-v3) are sequences of
// such scanners, each splitting the pieces the one before left
// (pretokenize_deepseek.go). Tekken's (tekken: Mistral Nemo, Ministral,
// Pixtral) and GPT-4o's (gpt-4o, llama4: gpt-oss, Llama 4) split letters
// where case changes, as llama.cpp's rewrite of their expressions does: a
// letter not a-z may start a word, a letter not A-Z continue it, so a
// non-ASCII letter of either case is both (pretokenize_tekken.go). Qwen3.5's
// (qwen35) is Qwen2's with combining marks (\p{M}) in the letter runs, so
// "e" + U+0301 is one word where Qwen2 makes it two.
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
// llama-bpe, default and falcon pre-tokenizers, also removes the space before
// "?", "!", ".", ",", "'s", "'m", "'re", "'ve" and around a lone "'".
//
// The tests check both against llama.cpp's output: testdata/golden.json and
// testdata/random.json.gz, made by tests/tokenizer/golden.mjs (see its
// README.md for Hugging Face's tokenizer, which agrees except where noted).
//
// WordPiece follows Hugging Face where llama.cpp's WPM tokenizer differs:
// words of more than 100 characters are [UNK], NEL (U+0085) is dropped as a
// control character rather than splitting words, only nonspacing marks (Mn)
// are stripped (llama.cpp also drops spacing ones in Devanagari), Hangul
// syllables are decomposed by NFD, and İ lowercases to i + U+0307 when
// accents are kept. Invalid UTF-8 is dropped, as U+FFFD is.
// testdata/wordpiece.json, made by tests/tokenizer/wordpiece.mjs, holds both
// references' ids.
//
// # Error Handling
//
// New returns errors wrapping ErrNoVocab, ErrMalformed, ErrUnknownModel or
// ErrUnknownPre. Encode and Decode never fail and never panic: an id out of
// range decodes to nothing.
package tokenizer
