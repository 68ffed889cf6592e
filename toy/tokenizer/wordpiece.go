// wordpiece.go: WordPiece (tokenizer.ggml.model "bert"), the tokenizer of
// BERT and the embedding models built on it, as Hugging Face's BertNormalizer,
// BertPreTokenizer and WordPiece models run it.

package tokenizer

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// maxWordChars is Hugging Face's max_input_chars_per_word: a longer word is
// [UNK] whole (llama.cpp has no such limit).
const maxWordChars = 100

// initWPM prepares the greedy matcher: the longest token, in characters,
// bounds each match.
func (t *Tokenizer) initWPM() {
	for _, tok := range t.tokens {
		t.wpmMaxLen = max(t.wpmMaxLen, utf8.RuneCountInString(tok))
	}
}

// encodeWPM appends the WordPiece ids of text to out: the text is normalised
// and cut into words (bertWords), and each word into the longest pieces the
// vocabulary has, first to last. A GGUF vocabulary stores a word-initial
// piece with a leading "▁" ("▁straw") and a continuation without it
// ("berries"; Hugging Face's "##berries"), as llama.cpp's converter writes
// it. A word that cannot be covered, or has more than 100 characters, is one
// [UNK].
func (t *Tokenizer) encodeWPM(text string, out []int32) []int32 {
	for _, word := range bertWords(text, t.lowercase, t.stripAccents) {
		out = t.wordPieces(word, out)
	}
	return out
}

// wordPieces appends the pieces of one word.
func (t *Tokenizer) wordPieces(word string, out []int32) []int32 {
	chars := []rune(word)
	if len(chars) > maxWordChars {
		return t.appendUNK(out)
	}
	n := len(out)
	for start := 0; start < len(chars); {
		id := int32(-1)
		end := min(len(chars), start+t.wpmMaxLen)
		for ; end > start; end-- {
			piece := string(chars[start:end])
			if start == 0 {
				piece = spaceMarker + piece
			}
			if i, ok := t.ids[piece]; ok {
				id = i
				break
			}
		}
		if id < 0 { // no piece fits: the whole word is unknown
			return t.appendUNK(out[:n])
		}
		out = append(out, id)
		start = end
	}
	return out
}

// appendUNK appends [UNK], or nothing for a vocabulary without one.
func (t *Tokenizer) appendUNK(out []int32) []int32 {
	if t.unk < 0 {
		return out
	}
	return append(out, t.unk)
}

// bertWords normalises text as Hugging Face's BertNormalizer does and cuts it
// into words as its BertPreTokenizer does:
//
//  1. drop NUL, U+FFFD and control characters (categories Cc, Cf, Co, Cs but
//     tab, newline and carriage return); every whitespace character becomes
//     a space;
//  2. put spaces around each CJK ideograph, so that each is a word;
//  3. with stripAccents, decompose (NFD) and drop the combining marks (Mn);
//  4. with lowercase, lowercase each character;
//  5. split at whitespace, and make each punctuation character — Unicode's
//     P categories and every ASCII symbol such as $ + < = > ^ ` | ~ — a word
//     of its own.
//
// The order of 3 and 4 is the Rust tokenizers' (sentence-transformers run
// it); lowercasing is per character, so a final capital sigma becomes σ, not
// ς, as there and in llama.cpp (JavaScript's toLowerCase gives ς).
func bertWords(text string, lowercase, stripAccents bool) []string {
	var sb strings.Builder
	for _, r := range text {
		switch {
		case r == 0 || r == utf8.RuneError || isBertControl(r):
		case isBertSpace(r):
			sb.WriteByte(' ')
		case isCJK(r):
			sb.WriteByte(' ')
			sb.WriteRune(r)
			sb.WriteByte(' ')
		default:
			sb.WriteRune(r)
		}
	}
	s := sb.String()
	if stripAccents {
		s = strings.Map(func(r rune) rune {
			if unicode.Is(unicode.Mn, r) {
				return -1
			}
			return r
		}, norm.NFD.String(s))
	}
	if lowercase {
		s = strings.Map(unicode.ToLower, strings.ReplaceAll(s, "İ", "i\u0307")) // İ's full lowercase is i + combining dot
	}
	var words []string
	start := -1
	for i, r := range s {
		switch {
		case r == ' ':
			if start >= 0 {
				words = append(words, s[start:i])
				start = -1
			}
		case isBertPunct(r):
			if start >= 0 {
				words = append(words, s[start:i])
				start = -1
			}
			words = append(words, string(r))
		case start < 0:
			start = i
		}
	}
	if start >= 0 {
		words = append(words, s[start:])
	}
	return words
}

// isBertControl reports whether BertNormalizer drops r: Unicode's "other"
// categories (Cc, Cf, Co, Cs) but tab, newline and carriage return, which
// are whitespace.
func isBertControl(r rune) bool {
	return r != '\t' && r != '\n' && r != '\r' && unicode.Is(unicode.C, r)
}

// isBertSpace reports whether r is whitespace (Unicode White_Space).
func isBertSpace(r rune) bool { return unicode.IsSpace(r) }

// isBertPunct reports whether r is a word of its own: punctuation, or any
// ASCII character that is neither a letter, a digit nor a space.
func isBertPunct(r rune) bool {
	if r < utf8.RuneSelf {
		return r > ' ' && r < 0x7f && !('0' <= r && r <= '9') && !('a' <= r && r <= 'z') && !('A' <= r && r <= 'Z')
	}
	return unicode.IsPunct(r)
}

// isCJK reports whether r is in a CJK Unified Ideographs block (BERT's
// "Chinese character": kana and hangul are not).
func isCJK(r rune) bool {
	return (r >= 0x4E00 && r <= 0x9FFF) || (r >= 0x3400 && r <= 0x4DBF) || (r >= 0x20000 && r <= 0x2A6DF) ||
		(r >= 0x2A700 && r <= 0x2B73F) || (r >= 0x2B740 && r <= 0x2B81F) || (r >= 0x2B920 && r <= 0x2CEAF) ||
		(r >= 0xF900 && r <= 0xFAFF) || (r >= 0x2F800 && r <= 0x2FA1F)
}
