// spm.go: SentencePiece BPE (tokenizer.ggml.model "llama"), as llama.cpp's
// llm_tokenizer_spm runs it.
package tokenizer

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// spaceMarker stands for a space in SentencePiece token text.
const spaceMarker = "\u2581" // ▁

func (t *Tokenizer) initSPM() {
	t.spmSplit = true
	for _, tok := range t.tokens {
		for i := indexFrom(tok, spaceMarker, 1); i > 0; i = indexFrom(tok, spaceMarker, i+1) {
			if !endsWithMarker(tok[:i]) {
				t.spmSplit = false
			}
		}
	}
	for b := range t.byteFallback {
		t.byteFallback[b] = -1
		if id, ok := t.ids[fmt.Sprintf("<0x%02X>", b)]; ok {
			t.byteFallback[b] = id
		} else if id, ok := t.ids[string([]byte{byte(b)})]; ok {
			t.byteFallback[b] = id
		}
	}
}

// utf8Len is the length of the UTF-8 sequence that byte b starts, by its high
// four bits; a stray continuation byte counts as one.
func utf8Len(b byte) int {
	return [16]int{1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 3, 4}[b>>4]
}

// charLen is the length of the character at s[i]: a valid UTF-8 sequence, or
// one byte that is not part of one. (llama.cpp takes utf8Len bytes whatever
// they are, so a bad byte can swallow the "▁" after it; on valid UTF-8 the two
// agree.)
func charLen(s string, i int) int {
	if s[i] < utf8.RuneSelf {
		return 1
	}
	_, n := utf8.DecodeRuneInString(s[i:])
	return n
}

type spmSymbol struct {
	start, end int32 // bytes of the text
	prev, next int32 // neighbours, -1 at the edges
}

func indexFrom(s, sub string, i int) int {
	j := strings.Index(s[i:], sub)
	if j < 0 {
		return -1
	}
	return i + j
}

func endsWithMarker(s string) bool { return strings.HasSuffix(s, spaceMarker) }

// spmBuffers are scratch space reused across the segments of one text.
type spmBuffers struct {
	syms []spmSymbol
	q    spmQueue
}

// encodeSPM appends the tokens of text (spaces already "▁") to out.
//
// When no token has a "▁" after another character (Llama 2's vocabulary has
// none), no merge can join a character to a "▁" that follows it, so the text
// is cut before each such "▁" and the pieces are merged one by one, with the
// same result as merging the whole text at once and much faster.
func (t *Tokenizer) encodeSPM(text string, out []int32) []int32 {
	var buf spmBuffers
	if !t.spmSplit {
		return t.encodeSPMSegment(text, out, &buf)
	}
	start := 0
	for i := 1; i < len(text); {
		j := indexFrom(text, spaceMarker, i)
		if j < 0 {
			break
		}
		if !endsWithMarker(text[:j]) {
			out = t.encodeSPMSegment(text[start:j], out, &buf)
			start = j
		}
		i = j + len(spaceMarker)
	}
	return t.encodeSPMSegment(text[start:], out, &buf)
}

// encodeSPMSegment merges text: it starts as one symbol per UTF-8 character;
// the adjacent pair whose concatenation is the token with the highest score
// merges first, the leftmost of equals, until no concatenation is a token. A
// symbol left that is not a token becomes its byte tokens.
func (t *Tokenizer) encodeSPMSegment(text string, out []int32, buf *spmBuffers) []int32 {
	if text == "" {
		return out
	}
	syms := buf.syms[:0]
	for i := 0; i < len(text); {
		n := charLen(text, i)
		syms = append(syms, spmSymbol{start: int32(i), end: int32(i + n), prev: int32(len(syms) - 1), next: int32(len(syms) + 1)})
		i += n
	}
	syms[len(syms)-1].next = -1
	buf.syms = syms

	q := buf.q[:0]
	defer func() { buf.q = q[:0] }()
	try := func(left int32) {
		if left < 0 || syms[left].next < 0 {
			return
		}
		right := syms[left].next
		id, ok := t.ids[text[syms[left].start:syms[right].end]]
		if !ok {
			return
		}
		q.push(spmPair{score: t.scores[id], left: left, right: right, size: syms[right].end - syms[left].start})
	}
	for i := int32(0); i >= 0; i = syms[i].next {
		try(i)
	}
	for len(q) > 0 {
		p := q.pop()
		l, r := &syms[p.left], &syms[p.right]
		if l.end == l.start || r.end == r.start || (l.end-l.start)+(r.end-r.start) != p.size {
			continue // stale: one side has merged since
		}
		l.end = r.end
		r.end = r.start
		l.next = r.next
		if r.next >= 0 {
			syms[r.next].prev = p.left
		}
		try(l.prev)
		try(p.left)
	}
	for i := int32(0); i >= 0; i = syms[i].next {
		s := text[syms[i].start:syms[i].end]
		if id, ok := t.ids[s]; ok {
			out = append(out, id)
			continue
		}
		for j := 0; j < len(s); j++ {
			id := t.byteFallback[s[j]]
			if id < 0 {
				id = t.unk // llama.cpp would fail here; a vocabulary without byte tokens gets <unk>
			}
			if id >= 0 {
				out = append(out, id)
			}
		}
	}
	return out
}

type spmPair struct {
	score             float32
	left, right, size int32
}

// spmQueue is a binary heap of candidate pairs, best first: highest score,
// then leftmost.
type spmQueue []spmPair

func (q spmQueue) less(i, j int) bool {
	return q[i].score > q[j].score || (q[i].score == q[j].score && q[i].left < q[j].left)
}

func (q *spmQueue) push(p spmPair) {
	*q = append(*q, p)
	h := *q
	for i := len(h) - 1; i > 0; {
		parent := (i - 1) / 2
		if !h.less(i, parent) {
			break
		}
		h[i], h[parent] = h[parent], h[i]
		i = parent
	}
}

func (q *spmQueue) pop() spmPair {
	h := *q
	top := h[0]
	n := len(h) - 1
	h[0] = h[n]
	h = h[:n]
	for i := 0; ; {
		l, r, m := 2*i+1, 2*i+2, i
		if l < n && h.less(l, m) {
			m = l
		}
		if r < n && h.less(r, m) {
			m = r
		}
		if m == i {
			break
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
	*q = h
	return top
}
