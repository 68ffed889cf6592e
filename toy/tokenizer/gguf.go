// gguf.go: the tokenizer a GGUF file carries (tokenizer.ggml.*).

package tokenizer

import (
	"errors"
	"fmt"

	"github.com/toyml/toy/toy/gguf"
)

// FromGGUF builds the tokenizer stored in f's tokenizer.ggml.* metadata:
// model, pre, tokens, scores, token_type, merges, the bos/eos/unknown/padding
// token ids, add_bos_token, add_eos_token and add_space_prefix. A missing
// optional key takes llama.cpp's default (SentencePiece: BOS 1, EOS 2, UNK 0,
// BOS added, space prefix added; Llama 3's pre-tokenizer: BOS added), except
// that byte-level BPE without bos/eos ids has none (llama.cpp guesses 11).
// eot_token_id and eom_token_id end generation too. A file without a
// tokenizer gives ErrNoVocab, a malformed one ErrMalformed, an unsupported one
// ErrUnknownModel or ErrUnknownPre.
func FromGGUF(f *gguf.File) (*Tokenizer, error) {
	const p = "tokenizer.ggml."
	if !f.Has(p+"model") || !f.Has(p+"tokens") {
		return nil, fmt.Errorf("%w: the file has no %smodel and %stokens", ErrNoVocab, p, p)
	}
	var v Vocab
	var err error
	bad := func(e error) error { return fmt.Errorf("%w: %w", ErrMalformed, e) }
	if v.Model, err = f.String(p + "model"); err != nil {
		return nil, bad(err)
	}
	if f.Has(p + "pre") {
		if v.Pre, err = f.String(p + "pre"); err != nil {
			return nil, bad(err)
		}
	}
	if v.Tokens, err = f.Strings(p + "tokens"); err != nil {
		return nil, bad(err)
	}
	if f.Has(p + "scores") {
		if v.Scores, err = f.Float32s(p + "scores"); err != nil {
			return nil, bad(err)
		}
	}
	if f.Has(p + "token_type") {
		if v.Types, err = f.Int32s(p + "token_type"); err != nil {
			return nil, bad(err)
		}
	}
	if f.Has(p + "merges") {
		if v.Merges, err = f.Strings(p + "merges"); err != nil {
			return nil, bad(err)
		}
	}

	spm := v.Model == "llama"
	llama3 := v.Pre == "llama-bpe" || v.Pre == "llama3" || v.Pre == "llama-v3"
	id := func(key string, def int32) (int32, error) {
		if !f.Has(p + key) {
			return def, nil
		}
		x, err := f.Int(p + key)
		if err != nil {
			return 0, bad(err)
		}
		return int32(x), nil
	}
	flag := func(key string, def bool) (bool, error) {
		if !f.Has(p + key) {
			return def, nil
		}
		b, err := f.Bool(p + key)
		if err != nil {
			return false, bad(err)
		}
		return b, nil
	}
	defBOS, defEOS, defUNK := int32(-1), int32(-1), int32(-1)
	if spm {
		defBOS, defEOS, defUNK = 1, 2, 0
	}
	for _, x := range []struct {
		key string
		def int32
		to  *int32
	}{{"bos_token_id", defBOS, &v.BOS}, {"eos_token_id", defEOS, &v.EOS}, {"unknown_token_id", defUNK, &v.UNK}, {"padding_token_id", -1, &v.PAD}} {
		if *x.to, err = id(x.key, x.def); err != nil {
			return nil, err
		}
	}
	for _, key := range []string{"eot_token_id", "eom_token_id"} {
		e, err := id(key, -1)
		if err != nil {
			return nil, err
		}
		if e >= 0 {
			v.EOG = append(v.EOG, e)
		}
	}
	for _, x := range []struct {
		key string
		def bool
		to  *bool
	}{{"add_bos_token", spm || llama3, &v.AddBOS}, {"add_eos_token", false, &v.AddEOS}, {"add_space_prefix", spm, &v.AddSpacePrefix}} {
		if *x.to, err = flag(x.key, x.def); err != nil {
			return nil, err
		}
	}
	t, err := New(v)
	if err != nil && !errors.Is(err, ErrMalformed) && !errors.Is(err, ErrNoVocab) && !errors.Is(err, ErrUnknownModel) && !errors.Is(err, ErrUnknownPre) {
		return nil, bad(err)
	}
	return t, err
}
