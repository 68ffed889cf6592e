// fim.go: fill in the middle — /v1/completions' suffix for models with
// FIM tokens (code models: Qwen2.5-Coder, StarCoder, DeepSeek-Coder,
// CodeLlama), the prompt built as llama-server's infill builds it.

package serve

import (
	"encoding/json"

	"github.com/toyml/toy/toy/tokenizer"
)

// fimTokens are a vocabulary's fill-in-the-middle tokens.
type fimTokens struct{ pre, suf, mid int32 }

// fimTexts are the texts of FIM tokens llama.cpp recognises in a
// vocabulary whose GGUF does not name them: prefix, suffix and middle of
// Qwen2.5-Coder, SantaCoder, StarCoder, DeepSeek-Coder and CodeLlama.
var fimTexts = [][3]string{
	{"<|fim_prefix|>", "<|fim_suffix|>", "<|fim_middle|>"},
	{"<fim-prefix>", "<fim-suffix>", "<fim-middle>"},
	{"<fim_prefix>", "<fim_suffix>", "<fim_middle>"},
	{"<｜fim▁begin｜>", "<｜fim▁hole｜>", "<｜fim▁end｜>"},
	{"<PRE>", "<SUF>", "<MID>"},
	{"▁<PRE>", "▁<SUF>", "▁<MID>"},
}

// fim returns the model's FIM tokens: those its GGUF names
// (tokenizer.ggml.fim_pre_token_id, fim_suf_token_id, fim_mid_token_id,
// or the older prefix_token_id, suffix_token_id, middle_token_id), else
// tokens with one of fimTexts' texts; ok false when it has none.
func (s *Server) fim() (fimTokens, bool) {
	const p = "tokenizer.ggml."
	f, tok := s.model.File, s.model.Tokenizer
	id := func(keys ...string) int32 {
		for _, k := range keys {
			if f != nil && f.Has(p+k) {
				if v, err := f.Int(p + k); err == nil && v >= 0 && v < tok.VocabSize() {
					return int32(v)
				}
			}
		}
		return -1
	}
	t := fimTokens{id("fim_pre_token_id", "prefix_token_id"), id("fim_suf_token_id", "suffix_token_id"), id("fim_mid_token_id", "middle_token_id")}
	if t.pre >= 0 && t.suf >= 0 && t.mid >= 0 {
		return t, true
	}
	for _, x := range fimTexts {
		if t := (fimTokens{tok.ID(x[0]), tok.ID(x[1]), tok.ID(x[2])}); t.pre >= 0 && t.suf >= 0 && t.mid >= 0 {
			return t, true
		}
	}
	return fimTokens{}, false
}

// fimPrompt is the infill prompt of prefix and suffix, as llama-server's
// format_infill (prefix-suffix-middle order): [BOS] <PRE> prefix <SUF>
// suffix <MID>, the model then writing the middle; special tokens in the
// texts are text, as there.
func (s *Server) fimPrompt(prefix, suffix string) ([]int32, *apiError) {
	t, ok := s.fim()
	if !ok {
		return nil, badRequest("suffix", "suffix (fill in the middle) needs a model with FIM tokens (tokenizer.ggml.fim_pre_token_id, fim_suf_token_id, fim_mid_token_id); this one has none")
	}
	tok := s.model.Tokenizer
	var ids []int32
	if tok.AddBOS() && tok.BOS() >= 0 {
		ids = append(ids, tok.BOS())
	}
	ids = append(ids, t.pre)
	ids = append(ids, tok.Encode(prefix, tokenizer.EncodeOptions{})...)
	ids = append(ids, t.suf)
	ids = append(ids, tok.Encode(suffix, tokenizer.EncodeOptions{})...)
	return append(ids, t.mid), nil
}

// fimIDs is the infill prompt of /v1/completions' prompt (a string, or a
// list of one) and suffix.
func (s *Server) fimIDs(prompt json.RawMessage, suffix string) ([]int32, *apiError) {
	var text string
	var texts []string
	switch {
	case len(prompt) == 0 || string(prompt) == "null":
	case json.Unmarshal(prompt, &text) == nil:
	case json.Unmarshal(prompt, &texts) == nil && len(texts) == 1:
		text = texts[0]
	default:
		return nil, badRequest("prompt", "with suffix, prompt must be a string (the text before the middle)")
	}
	return s.fimPrompt(text, suffix)
}
