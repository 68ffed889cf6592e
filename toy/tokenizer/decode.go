// decode.go: ids back to text, whole or streamed token by token.

package tokenizer

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// piece is the bytes token id stands for, as llama.cpp's token_to_piece with
// special tokens shown: control, unknown and user-defined tokens as their
// text, normal tokens unmapped (byte-level) or with "▁" as a space
// (SentencePiece), byte tokens <0xNN> as their byte, anything else as nothing.
func (t *Tokenizer) piece(id int32) string {
	text, ty := t.tokens[id], t.types[id]
	switch ty {
	case TypeControl, TypeUnknown, TypeUserDefined:
		return text
	case TypeNormal:
		if t.model == "gpt2" {
			raw, _ := unmapBytes(text) // a character outside the byte map stays as it is
			return raw
		}
		return strings.ReplaceAll(text, spaceMarker, " ")
	case TypeByte:
		if t.model == "llama" && len(text) == 6 && strings.HasPrefix(text, "<0x") && text[5] == '>' {
			if b, err := strconv.ParseUint(text[3:5], 16, 8); err == nil {
				return string([]byte{byte(b)})
			}
		}
	}
	return ""
}

// Piece is the text of token id as it decodes, with control tokens shown as
// their text ("<|eot_id|>"). It may be part of a UTF-8 character.
func (t *Tokenizer) Piece(id int32) string {
	if id < 0 || int(id) >= len(t.pieces) {
		return ""
	}
	return t.pieces[id]
}

// visible is the text token id adds to decoded output: nothing for control
// and unknown tokens, Piece for the rest.
func (t *Tokenizer) visible(id int32) string {
	if id < 0 || int(id) >= len(t.pieces) {
		return ""
	}
	if ty := t.types[id]; ty == TypeControl || ty == TypeUnknown {
		return ""
	}
	return t.pieces[id]
}

// Decode turns ids into text, as llama.cpp's detokenize: control and unknown
// tokens add nothing, and with add_space_prefix (SentencePiece) the first
// token loses one leading space, the one Encode added. WordPiece pieces join
// with a space before each word ("▁"), so punctuation stands apart
// ("hello , world"), lowercased if the vocabulary lowercases. The result is the raw
// bytes and may hold invalid UTF-8 if the ids cut a character.
func (t *Tokenizer) Decode(ids []int32) string {
	var sb strings.Builder
	first := true
	for _, id := range ids {
		p := t.visible(id)
		if first && t.trimsFirstSpace() {
			p = strings.TrimPrefix(p, " ")
		}
		first = first && p == "" && t.model == "bert"
		sb.WriteString(p)
	}
	return sb.String()
}

// trimsFirstSpace reports whether the first text a decode shows loses one
// leading space: SentencePiece's added one, or WordPiece's "▁" before the
// first word (after [CLS], which shows nothing).
func (t *Tokenizer) trimsFirstSpace() bool { return t.addSpacePrefix || t.model == "bert" }

// Decoder decodes a stream of ids one at a time, holding back the bytes of a
// UTF-8 character until it is complete, so that each Push returns valid text
// whenever the whole stream is. The concatenation of all Push results and
// Flush equals Decode of all the ids.
type Decoder struct {
	t       *Tokenizer
	first   bool
	pending []byte
}

// NewDecoder starts a stream decoder.
func (t *Tokenizer) NewDecoder() *Decoder { return &Decoder{t: t, first: true} }

// Push adds one id and returns the text that is now complete.
func (d *Decoder) Push(id int32) string {
	p := d.t.visible(id)
	if d.first && d.t.trimsFirstSpace() {
		p = strings.TrimPrefix(p, " ")
	}
	d.first = d.first && p == "" && d.t.model == "bert"
	d.pending = append(d.pending, p...)
	n := completePrefix(d.pending)
	out := string(d.pending[:n])
	d.pending = append(d.pending[:0], d.pending[n:]...)
	return out
}

// Flush returns whatever is held back (an incomplete character) and resets
// the decoder to the start of a new stream.
func (d *Decoder) Flush() string {
	out := string(d.pending)
	d.pending = d.pending[:0]
	d.first = true
	return out
}

// completePrefix is the length of b without a trailing incomplete (but so far
// valid) UTF-8 sequence. Bytes that can never be valid are not held back.
func completePrefix(b []byte) int {
	for k := 1; k <= 3 && k <= len(b); k++ {
		c := b[len(b)-k]
		if c < 0x80 {
			return len(b) // ASCII: nothing pending
		}
		if c >= 0xC0 { // a lead byte k bytes from the end
			if need := utf8Len(c); need > k && c < 0xF8 && validPrefix(b[len(b)-k:]) {
				return len(b) - k
			}
			return len(b)
		}
	}
	return len(b)
}

// validPrefix reports whether p (a lead byte and continuation bytes) can still
// become a valid UTF-8 character.
func validPrefix(p []byte) bool {
	full := append([]byte(nil), p...)
	for len(full) < utf8Len(p[0]) {
		full = append(full, 0x80)
	}
	// The smallest completion is valid iff some completion is, except where the
	// second byte is constrained from above; try the largest too.
	if utf8.Valid(full) {
		return true
	}
	for i := len(p); i < len(full); i++ {
		full[i] = 0xBF
	}
	return utf8.Valid(full)
}
