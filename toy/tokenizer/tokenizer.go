// tokenizer.go: the Vocab a model carries, its validation, and Encode.

package tokenizer

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
)

// Sentinel errors returned (wrapped) by New and FromGGUF.
var (
	ErrNoVocab      = errors.New("tokenizer: no vocabulary")
	ErrMalformed    = errors.New("tokenizer: malformed vocabulary")
	ErrUnknownModel = errors.New("tokenizer: unknown tokenizer model")
	ErrUnknownPre   = errors.New("tokenizer: unknown pre-tokenizer")
)

// Token types, as tokenizer.ggml.token_type stores them (llama.cpp's values).
const (
	TypeUndefined   int32 = 0
	TypeNormal      int32 = 1
	TypeUnknown     int32 = 2
	TypeControl     int32 = 3
	TypeUserDefined int32 = 4
	TypeUnused      int32 = 5
	TypeByte        int32 = 6
)

// Vocab is a tokenizer as a GGUF file describes it. Ids that a model lacks
// (BOS, EOS, UNK, PAD) are -1.
type Vocab struct {
	Model          string    // tokenizer.ggml.model: "gpt2" (byte-level BPE), "llama" (SentencePiece) or "bert" (WordPiece)
	Pre            string    // tokenizer.ggml.pre, for "gpt2": "gpt-2", "llama-bpe", "qwen2", "qwen35", "smollm", "deepseek-v3", "default", …
	Tokens         []string  // token text by id
	Scores         []float32 // SentencePiece merge scores by id (empty: all 0)
	Types          []int32   // token types by id (empty: all normal)
	Merges         []string  // BPE merges "left right", in rank order ("gpt2" only; nil is an error, empty is not)
	BOS, EOS       int32
	UNK, PAD       int32
	AddBOS, AddEOS bool    // what the model expects Encode's caller to add
	AddSpacePrefix bool    // SentencePiece: prepend a space to the text ("llama" default true)
	EOG            []int32 // more end-of-generation tokens besides EOS (eot, eom)

	// WordPiece ("bert"): BOS is [CLS] and EOS is [SEP], which a BERT input
	// starts and ends with; Lowercase and StripAccents are BertNormalizer's
	// options (tokenizer.ggml.normalizer.*).
	Lowercase, StripAccents bool
}

// EncodeOptions says what Encode adds and parses besides the text.
type EncodeOptions struct {
	AddBOS       bool // prepend the BOS token (if the vocabulary has one)
	AddEOS       bool // append the EOS token (if the vocabulary has one)
	ParseSpecial bool // recognise control tokens such as "<|eot_id|>" in the text
}

// Tokenizer encodes and decodes text for one vocabulary. It is safe for
// concurrent use.
type Tokenizer struct {
	model, pre     string
	tokens         []string
	scores         []float32
	types          []int32
	ids            map[string]int32 // token text → id (the last id wins, as in llama.cpp)
	bos, eos       int32
	unk, pad       int32
	addBOS, addEOS bool
	addSpacePrefix bool
	eog            map[int32]bool
	special        []int32  // control, user-defined and unknown tokens, longest text first
	pieces         []string // bytes each token decodes to (special tokens as their text)

	// byte-level BPE
	splitters    []splitter
	ignoreMerges bool                 // a word that is a token is not merged (Llama 3)
	merges       map[uint64]mergeRule // (left id, right id) → rank and result
	byteToken    [256]int32           // token of each byte (-1 if none)
	wordIDs      map[string]int32     // raw bytes → id, for ignoreMerges

	// SentencePiece
	byteFallback [256]int32 // <0xNN> tokens (-1 if none)
	spmSplit     bool       // no token has "▁" after another character: cut the text before each "▁"

	// WordPiece
	lowercase, stripAccents bool
	wpmMaxLen               int // characters in the longest token
}

// New checks v and builds its tokenizer.
func New(v Vocab) (*Tokenizer, error) {
	n := len(v.Tokens)
	if n == 0 {
		return nil, fmt.Errorf("%w: tokens is empty", ErrNoVocab)
	}
	if len(v.Scores) != 0 && len(v.Scores) != n {
		return nil, fmt.Errorf("%w: %d scores for %d tokens", ErrMalformed, len(v.Scores), n)
	}
	if len(v.Types) != 0 && len(v.Types) != n {
		return nil, fmt.Errorf("%w: %d token types for %d tokens", ErrMalformed, len(v.Types), n)
	}
	for _, s := range []struct {
		name string
		id   int32
	}{{"bos", v.BOS}, {"eos", v.EOS}, {"unknown", v.UNK}, {"padding", v.PAD}} {
		if s.id < -1 || int(s.id) >= n {
			return nil, fmt.Errorf("%w: %s token id %d outside the %d tokens (use -1 for none)", ErrMalformed, s.name, s.id, n)
		}
	}
	t := &Tokenizer{
		model: v.Model, pre: v.Pre,
		tokens: make([]string, n), scores: make([]float32, n), types: make([]int32, n),
		ids: make(map[string]int32, n),
		bos: v.BOS, eos: v.EOS, unk: v.UNK, pad: v.PAD,
		addBOS: v.AddBOS, addEOS: v.AddEOS, addSpacePrefix: v.AddSpacePrefix,
		lowercase: v.Lowercase, stripAccents: v.StripAccents,
	}
	copy(t.scores, v.Scores)
	for i, s := range v.Tokens {
		if s == "" { // llama.cpp renames empty tokens so that no text matches them
			s = fmt.Sprintf("[EMPTY_%d]", i)
		}
		t.tokens[i] = s
		t.ids[s] = int32(i)
		t.types[i] = TypeNormal
		if len(v.Types) != 0 {
			t.types[i] = v.Types[i]
			if t.types[i] < TypeUndefined || t.types[i] > TypeByte {
				t.types[i] = TypeUndefined
			}
		}
	}
	for _, id := range v.EOG {
		if id < 0 || int(id) >= n {
			return nil, fmt.Errorf("%w: end-of-generation token id %d outside the %d tokens", ErrMalformed, id, n)
		}
	}
	t.findEOG(v.EOG)
	switch v.Model {
	case "gpt2":
		if err := t.initBPE(v.Merges); err != nil {
			return nil, err
		}
	case "llama":
		t.initSPM()
	case "bert":
		t.initWPM()
	case "", "none":
		return nil, fmt.Errorf("%w: tokenizer model %q has no tokenizer", ErrNoVocab, v.Model)
	default:
		return nil, fmt.Errorf("%w: %q (supported: \"gpt2\", \"llama\", \"bert\")", ErrUnknownModel, v.Model)
	}
	for id, ty := range t.types {
		if ty == TypeControl || ty == TypeUserDefined || ty == TypeUnknown {
			t.special = append(t.special, int32(id))
		}
	}
	sort.SliceStable(t.special, func(i, j int) bool { return len(t.tokens[t.special[i]]) > len(t.tokens[t.special[j]]) })
	t.pieces = make([]string, n)
	for id := range t.pieces {
		t.pieces[id] = t.piece(int32(id))
	}
	return t, nil
}

// eogTexts are the tokens llama.cpp treats as end of generation by their text,
// besides EOS; they are control tokens whatever the file says.
var eogTexts = []string{"<|eot_id|>", "<|im_end|>", "<|end|>", "<|return|>", "<|call|>", "<end_of_turn>",
	"<|endoftext|>", "<|eom_id|>", "<EOT>", "_<EOT>", "<|end_of_text|>", "<end_of_utterance>"}

func (t *Tokenizer) findEOG(more []int32) {
	t.eog = map[int32]bool{}
	if t.eos >= 0 {
		t.eog[t.eos] = true
	}
	for _, id := range more {
		t.eog[id] = true
	}
	for _, s := range eogTexts {
		if id, ok := t.ids[s]; ok {
			t.eog[id] = true
			t.types[id] = TypeControl
		}
	}
	// gpt-oss's harmony (o200k_harmony) ends a turn with <|return|> or
	// <|call|>; its <|end|> only closes a message within the turn (the
	// reasoning before the answer), so it does not end the generation, as
	// in llama.cpp.
	ret, okR := t.ids["<|return|>"]
	call, okC := t.ids["<|call|>"]
	if end, ok := t.ids["<|end|>"]; ok && okR && okC && t.eog[ret] && t.eog[call] && end != t.eos {
		delete(t.eog, end)
	}
}

// VocabSize is the number of tokens.
func (t *Tokenizer) VocabSize() int { return len(t.tokens) }

// Model is the tokenizer model, "gpt2", "llama" or "bert".
func (t *Tokenizer) Model() string { return t.model }

// BOS is the beginning-of-sequence token, or -1.
func (t *Tokenizer) BOS() int32 { return t.bos }

// EOS is the end-of-sequence token, or -1.
func (t *Tokenizer) EOS() int32 { return t.eos }

// UNK is the unknown token, or -1.
func (t *Tokenizer) UNK() int32 { return t.unk }

// PAD is the padding token, or -1.
func (t *Tokenizer) PAD() int32 { return t.pad }

// AddBOS reports whether the model expects BOS before a prompt (add_bos_token).
func (t *Tokenizer) AddBOS() bool { return t.addBOS }

// AddEOS reports whether the model expects EOS after a prompt (add_eos_token).
func (t *Tokenizer) AddEOS() bool { return t.addEOS }

// IsEOG reports whether id ends generation: EOS, or a token such as
// <|eot_id|> or <|im_end|>.
func (t *Tokenizer) IsEOG(id int32) bool { return t.eog[id] }

// EOG returns the tokens that end generation, in increasing order.
func (t *Tokenizer) EOG() []int32 { return slices.Sorted(maps.Keys(t.eog)) }

// Token is the text of token id as the vocabulary stores it ("Ġthe", "▁the").
func (t *Tokenizer) Token(id int32) string {
	if id < 0 || int(id) >= len(t.tokens) {
		return ""
	}
	return t.tokens[id]
}

// Type is the token type of id (TypeNormal, TypeControl, …).
func (t *Tokenizer) Type(id int32) int32 {
	if id < 0 || int(id) >= len(t.types) {
		return TypeUndefined
	}
	return t.types[id]
}

// ID is the id of the token with this exact text, or -1.
func (t *Tokenizer) ID(text string) int32 {
	if id, ok := t.ids[text]; ok {
		return id
	}
	return -1
}

// fragment is a piece of the input: raw text, or a special token cut out of it.
type fragment struct {
	text  string
	token int32 // -1 for raw text
}

// Encode turns text into token ids.
func (t *Tokenizer) Encode(text string, opts EncodeOptions) []int32 {
	out := make([]int32, 0, len(text)/3+2)
	if opts.AddBOS && t.bos >= 0 {
		out = append(out, t.bos)
	}
	var frags []fragment
	if text != "" {
		frags = t.splitSpecial([]fragment{{text, -1}}, opts.ParseSpecial)
	}
	switch t.model {
	case "gpt2":
		var buf bpeBuffers
		for _, f := range frags {
			if f.token >= 0 {
				out = append(out, f.token)
				continue
			}
			out = t.encodeBPE(f.text, out, &buf)
		}
	case "llama":
		// A space is prepended to the first fragment and to every fragment after
		// a special token, as llama.cpp's SentencePiece path does.
		prevSpecial := true
		for _, f := range frags {
			if f.token >= 0 {
				out = append(out, f.token)
				prevSpecial = true
				continue
			}
			s := f.text
			if t.addSpacePrefix && prevSpecial {
				s = " " + s
			}
			out = t.encodeSPM(strings.ReplaceAll(s, " ", spaceMarker), out)
			prevSpecial = false
		}
	case "bert":
		for _, f := range frags {
			if f.token >= 0 {
				out = append(out, f.token)
				continue
			}
			out = t.encodeWPM(f.text, out)
		}
	}
	if opts.AddEOS && t.eos >= 0 {
		out = append(out, t.eos)
	}
	return out
}

// splitSpecial cuts special tokens out of the raw-text fragments, longest token
// first, leftmost occurrence first. User-defined tokens are always cut out;
// control and unknown tokens only with parseSpecial.
func (t *Tokenizer) splitSpecial(frags []fragment, parseSpecial bool) []fragment {
	for _, id := range t.special {
		if !parseSpecial && t.types[id] != TypeUserDefined {
			continue
		}
		tok := t.tokens[id]
		var next []fragment
		changed := false
		for _, f := range frags {
			if f.token >= 0 || !strings.Contains(f.text, tok) {
				next = append(next, f)
				continue
			}
			changed = true
			s := f.text
			for {
				i := strings.Index(s, tok)
				if i < 0 {
					break
				}
				if i > 0 {
					next = append(next, fragment{s[:i], -1})
				}
				next = append(next, fragment{tok, id})
				s = s[i+len(tok):]
			}
			if s != "" {
				next = append(next, fragment{s, -1})
			}
		}
		if changed {
			frags = next
		}
	}
	return frags
}
