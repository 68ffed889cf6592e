// gguf.go: the tokenizer a GGUF file carries (tokenizer.ggml.*).

package tokenizer

import (
	"errors"
	"fmt"
	"slices"

	"github.com/toyml/toy/toy/gguf"
)

// FromGGUF builds the tokenizer stored in f's tokenizer.ggml.* metadata:
// model, pre, tokens, scores, token_type, merges, the bos/eos/unknown/padding
// token ids, add_bos_token, add_eos_token and add_space_prefix. A missing
// optional key takes llama.cpp's default (SentencePiece: BOS 1, EOS 2, UNK 0,
// BOS added, space prefix added; Llama 3's pre-tokenizer: BOS added), except
// that byte-level BPE without bos/eos ids has none (llama.cpp guesses 11).
// WordPiece ("bert") takes BOS from bos_token_id or cls_token_id ([CLS],
// default 101), EOS from seperator_token_id or eos_token_id ([SEP], default
// 102), UNK default 100, always adds both, and reads normalizer.lowercase
// (default true) and normalizer.strip_accents (default: as lowercase).
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

	spm, wpm := v.Model == "llama", v.Model == "bert"
	// llama.cpp's Llama 3 group adds <bos> unless the file says otherwise
	llama3 := slices.Contains([]string{"llama-bpe", "llama3", "llama-v3", "falcon3", "falcon-h1", "pixtral", "midm-2.0", "lfm2"}, v.Pre)
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
	bosKey, eosKey := "bos_token_id", "eos_token_id"
	if wpm {
		// WordPiece: [CLS] text [SEP]; llama.cpp's defaults are BERT's ids.
		defBOS, defEOS, defUNK = 101, 102, 100
		if !f.Has(p+bosKey) && f.Has(p+"cls_token_id") {
			bosKey = "cls_token_id"
		}
		if f.Has(p + "seperator_token_id") { // sic, llama.cpp's key
			eosKey = "seperator_token_id"
		}
	}
	for _, x := range []struct {
		key string
		def int32
		to  *int32
	}{{bosKey, defBOS, &v.BOS}, {eosKey, defEOS, &v.EOS}, {"unknown_token_id", defUNK, &v.UNK}, {"padding_token_id", -1, &v.PAD}} {
		if *x.to, err = id(x.key, x.def); err != nil {
			return nil, err
		}
	}
	if v.Pre == "glm4" || v.Pre == "chatglm-bpe" {
		// GLM's prompts begin with [gMASK]<sop>, which its chat template
		// writes; llama.cpp gives these vocabularies no BOS to add.
		v.BOS = -1
	}
	if wpm {
		// A default id past a small vocabulary means no such token, as in llama.cpp.
		for _, x := range []*int32{&v.BOS, &v.EOS, &v.UNK} {
			if int(*x) >= len(v.Tokens) {
				*x = -1
			}
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
	}{{"add_bos_token", spm || llama3, &v.AddBOS}, {"add_eos_token", false, &v.AddEOS}, {"add_space_prefix", spm, &v.AddSpacePrefix},
		{"normalizer.lowercase", true, &v.Lowercase}} {
		if *x.to, err = flag(x.key, x.def); err != nil {
			return nil, err
		}
	}
	if wpm {
		// llama.cpp always adds [CLS] and [SEP] to a WordPiece input,
		// whatever add_bos_token and add_eos_token say.
		v.AddBOS, v.AddEOS, v.AddSpacePrefix = true, true, false
		if v.StripAccents, err = flag("normalizer.strip_accents", v.Lowercase); err != nil {
			return nil, err
		}
	}
	t, err := New(v)
	if err != nil && !errors.Is(err, ErrMalformed) && !errors.Is(err, ErrNoVocab) && !errors.Is(err, ErrUnknownModel) && !errors.Is(err, ErrUnknownPre) {
		return nil, bad(err)
	}
	return t, err
}
