// bpe.go: byte-level BPE (tokenizer.ggml.model "gpt2").

package tokenizer

import (
	"fmt"
	"strings"
)

// byteChars is GPT-2's reversible map from bytes to printable characters:
// printable Latin-1 bytes stand for themselves, the other 68 bytes (controls,
// space, DEL, NBSP, soft hyphen) for U+0100 onwards in byte order. Token text in
// a byte-level vocabulary is written in these characters: " the" is "Ġthe".
var byteChars, charBytes = func() (b2c [256]string, c2b [0x144]int16) {
	for i := range c2b {
		c2b[i] = -1
	}
	next := rune(256)
	for b := 0; b < 256; b++ {
		r := rune(b)
		printable := (b >= 0x21 && b <= 0x7e) || (b >= 0xa1 && b <= 0xac) || (b >= 0xae && b <= 0xff)
		if !printable {
			r = next
			next++
		}
		b2c[b] = string(r)
		c2b[r] = int16(b)
	}
	return
}()

// unmapBytes turns byte-level token text back into the bytes it stands for; ok
// is false if a character is not one of byteChars.
func unmapBytes(text string) (raw string, ok bool) {
	var sb strings.Builder
	ok = true
	sb.Grow(len(text))
	for _, r := range text {
		if r < 0 || int(r) >= len(charBytes) || charBytes[r] < 0 {
			ok = false
			sb.WriteRune(r)
			continue
		}
		sb.WriteByte(byte(charBytes[r]))
	}
	return sb.String(), ok
}

// mergeRule is what merging a pair gives: its rank (lower merges first) and the
// merged token.
type mergeRule struct{ rank, id int32 }

func pairKey(left, right int32) uint64 { return uint64(uint32(left))<<32 | uint64(uint32(right)) }

func (t *Tokenizer) initBPE(merges []string) error {
	split, ignore, err := preTokenizer(t.pre)
	if err != nil {
		return err
	}
	t.splitters, t.ignoreMerges = split, ignore
	if merges == nil {
		return fmt.Errorf("%w: byte-level BPE vocabulary has no merges (tokenizer.ggml.merges)", ErrMalformed)
	}
	for b := range t.byteToken {
		t.byteToken[b] = -1
		if id, ok := t.ids[byteChars[b]]; ok {
			t.byteToken[b] = id
		}
	}
	t.merges = make(map[uint64]mergeRule, len(merges))
	for rank, m := range merges {
		sp := -1
		if len(m) > 1 {
			sp = strings.IndexByte(m[1:], ' ') + 1 // the first space after the first byte
		}
		if sp <= 0 {
			return fmt.Errorf("%w: merge %d %q is not \"left right\"", ErrMalformed, rank, m)
		}
		left, right := m[:sp], m[sp+1:]
		l, okL := t.ids[left]
		r, okR := t.ids[right]
		id, okM := t.ids[left+right]
		if !okL || !okR || !okM {
			return fmt.Errorf("%w: merge %d %q names a token not in the vocabulary", ErrMalformed, rank, m)
		}
		if _, dup := t.merges[pairKey(l, r)]; !dup { // the first rank wins, as in llama.cpp
			t.merges[pairKey(l, r)] = mergeRule{int32(rank), id}
		}
	}
	if t.ignoreMerges {
		t.wordIDs = make(map[string]int32, len(t.tokens))
		for id, s := range t.tokens {
			if raw, ok := unmapBytes(s); ok {
				t.wordIDs[raw] = int32(id)
			}
		}
	}
	return nil
}

// bpeBuffers are scratch space reused across the words of one Encode call.
type bpeBuffers struct {
	ends []int
	syms []bpeSymbol
	q    bpeQueue
}

type bpeSymbol struct {
	id         int32
	prev, next int32 // neighbours in the word, -1 at its edges
	rank, into int32 // mergeShort: the rank and result of merging with next
}

// encodeBPE appends the tokens of one raw-text fragment to out.
func (t *Tokenizer) encodeBPE(text string, out []int32, buf *bpeBuffers) []int32 {
	buf.ends = pretokenize(text, t.splitters, buf.ends)
	start := 0
	for _, end := range buf.ends {
		out = t.encodeWord(text[start:end], out, buf)
		start = end
	}
	return out
}

// encodeWord merges the byte tokens of one word: repeatedly the adjacent pair
// with the lowest merge rank, the leftmost of equals, until no pair merges.
func (t *Tokenizer) encodeWord(word string, out []int32, buf *bpeBuffers) []int32 {
	if t.ignoreMerges {
		if id, ok := t.wordIDs[word]; ok {
			return append(out, id)
		}
	}
	if len(word) == 1 {
		if id := t.byteToken[word[0]]; id >= 0 {
			out = append(out, id)
		}
		return out
	}
	syms := buf.syms[:0]
	for i := 0; i < len(word); i++ {
		syms = append(syms, bpeSymbol{id: t.byteToken[word[i]], prev: int32(i - 1), next: int32(i + 1)})
	}
	syms[len(syms)-1].next = -1
	buf.syms = syms
	if len(syms) <= 48 {
		t.mergeShort(syms)
	} else {
		t.mergeLong(syms, &buf.q)
	}
	for i := int32(0); i >= 0; i = syms[i].next {
		if syms[i].id >= 0 { // a byte with no token is dropped, as in llama.cpp
			out = append(out, syms[i].id)
		}
	}
	return out
}

func (t *Tokenizer) rule(left, right int32) (mergeRule, bool) {
	if left < 0 || right < 0 {
		return mergeRule{}, false
	}
	m, ok := t.merges[pairKey(left, right)]
	return m, ok
}

// noMerge is the rank of a pair that does not merge.
const noMerge = int32(1<<31 - 1)

// pairRule sets symbol i's rank and into for the pair it starts.
func (t *Tokenizer) pairRule(syms []bpeSymbol, i int32) {
	syms[i].rank = noMerge
	if syms[i].next < 0 {
		return
	}
	if m, ok := t.rule(syms[i].id, syms[syms[i].next].id); ok {
		syms[i].rank, syms[i].into = m.rank, m.id
	}
}

// mergeShort is the plain loop, fast for short words: find the pair of lowest
// rank (the first of equals), merge it, update its neighbours' pairs, repeat.
func (t *Tokenizer) mergeShort(syms []bpeSymbol) {
	for i := range syms {
		t.pairRule(syms, int32(i))
	}
	for {
		best := int32(-1)
		for i := int32(0); i >= 0; i = syms[i].next {
			if syms[i].rank != noMerge && (best < 0 || syms[i].rank < syms[best].rank) {
				best = i
			}
		}
		if best < 0 {
			return
		}
		t.mergeAt(syms, best, syms[best].into)
		t.pairRule(syms, best)
		if p := syms[best].prev; p >= 0 {
			t.pairRule(syms, p)
		}
	}
}

// mergeAt merges symbol i with its right neighbour into token id.
func (t *Tokenizer) mergeAt(syms []bpeSymbol, i, id int32) {
	r := syms[i].next
	syms[i].id = id
	syms[i].next = syms[r].next
	if syms[r].next >= 0 {
		syms[syms[r].next].prev = i
	}
	syms[r].id = -2 // merged away
	syms[r].rank = noMerge
}

// mergeLong does the same merges with a priority queue of candidate pairs; a
// candidate is stale once either symbol has changed.
func (t *Tokenizer) mergeLong(syms []bpeSymbol, q *bpeQueue) {
	*q = (*q)[:0]
	push := func(left int32) {
		if left < 0 || syms[left].next < 0 {
			return
		}
		r := syms[left].next
		if m, ok := t.rule(syms[left].id, syms[r].id); ok {
			q.push(bpePair{rank: m.rank, left: left, right: r, lid: syms[left].id, rid: syms[r].id, id: m.id})
		}
	}
	for i := int32(0); i >= 0; i = syms[i].next {
		push(i)
	}
	for len(*q) > 0 {
		p := q.pop()
		if syms[p.left].id != p.lid || syms[p.right].id != p.rid || syms[p.left].next != p.right {
			continue
		}
		t.mergeAt(syms, p.left, p.id)
		push(syms[p.left].prev)
		push(p.left)
	}
}

type bpePair struct {
	rank, left, right int32
	lid, rid, id      int32
}

// bpeQueue is a binary heap of candidate pairs: lowest rank first, then
// leftmost.
type bpeQueue []bpePair

func (q bpeQueue) less(i, j int) bool {
	return q[i].rank < q[j].rank || (q[i].rank == q[j].rank && q[i].left < q[j].left)
}

func (q *bpeQueue) push(p bpePair) {
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

func (q *bpeQueue) pop() bpePair {
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
