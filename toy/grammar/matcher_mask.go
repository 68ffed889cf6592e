// Matcher.Mask: every token judged in one walk over the vocabulary sorted
// by text, so that tokens sharing a beginning share its steps.

package grammar

import (
	"encoding/binary"
	"slices"
	"sort"
	"strings"
)

// vocabOrder is a vocabulary sorted for Mask: the ids of the tokens that
// have text, by their text up to a NUL (where llama.cpp stops reading),
// and for each the length it shares with the one before.
type vocabOrder struct {
	ids    []int32
	pieces []string
	shared []int
	eog    []int32 // the tokens that end a generation
	maxLen int
}

func newVocabOrder(n int, v Vocab) *vocabOrder {
	o := &vocabOrder{}
	for id := range int32(n) {
		if v.IsEOG(id) {
			o.eog = append(o.eog, id)
			continue
		}
		piece := v.Piece(id)
		if i := strings.IndexByte(piece, 0); i >= 0 {
			piece = piece[:i]
		}
		if piece == "" {
			continue // refused always
		}
		o.ids = append(o.ids, id)
		o.pieces = append(o.pieces, piece)
	}
	sort.Sort(byPiece{o})
	o.shared = make([]int, len(o.ids))
	for i := 1; i < len(o.ids); i++ {
		a, b := o.pieces[i-1], o.pieces[i]
		k := 0
		for k < len(a) && k < len(b) && a[k] == b[k] {
			k++
		}
		o.shared[i] = k
	}
	for _, p := range o.pieces {
		o.maxLen = max(o.maxLen, len(p))
	}
	return o
}

type byPiece struct{ o *vocabOrder }

func (b byPiece) Len() int           { return len(b.o.ids) }
func (b byPiece) Less(i, j int) bool { return b.o.pieces[i] < b.o.pieces[j] }
func (b byPiece) Swap(i, j int) {
	b.o.ids[i], b.o.ids[j] = b.o.ids[j], b.o.ids[i]
	b.o.pieces[i], b.o.pieces[j] = b.o.pieces[j], b.o.pieces[i]
}

// stackSet is an interned set of stacks with its steps memoized, so that
// Mask's walk takes a byte in a lookup once the step is known.
type stackSet struct {
	stacks []*stack
	ascii  *[128]*stackSet
	other  map[rune]*stackSet
}

// setOf interns the set of stacks (which it may keep).
func (m *Matcher) setOf(stacks []*stack) *stackSet {
	if len(stacks) == 0 {
		return m.c.dead
	}
	ids := make([]int32, len(stacks))
	for i, s := range stacks {
		ids[i] = -1 // the empty stack
		if s != nil {
			ids[i] = s.id
		}
	}
	slices.Sort(ids)
	key := make([]byte, 0, 4*len(ids))
	for _, id := range ids {
		key = binary.LittleEndian.AppendUint32(key, uint32(id))
	}
	set := m.c.sets[string(key)]
	if set == nil {
		set = &stackSet{stacks: stacks}
		m.c.sets[string(key)] = set
	}
	return set
}

// stepSet is the set after set's stacks take r.
func (m *Matcher) stepSet(set *stackSet, r rune) *stackSet {
	var slot **stackSet
	if r < 128 {
		if set.ascii == nil {
			set.ascii = new([128]*stackSet)
		}
		slot = &set.ascii[r]
		if *slot != nil {
			return *slot
		}
	} else if next, ok := set.other[r]; ok {
		return next
	}
	var out []*stack
	for _, s := range set.stacks {
		out = m.union(out, m.step(s, r))
	}
	next := m.setOf(out)
	if slot != nil {
		*slot = next
	} else {
		if set.other == nil {
			set.other = map[rune]*stackSet{}
		}
		set.other[r] = next
	}
	return next
}

// walkState is where the text stands after a token's first bytes.
type walkState struct {
	set     *stackSet // the stacks that read characters
	value   uint32    // the UTF-8 sequence being decoded
	remain  int
	prev    bool // the sequence is the last token's, whose continuation bytes are checked
	stopped bool // a code point 0 ended what the grammar reads
	dead    bool // the token is refused
}

// next is s after byte b (llama.cpp's decoding, one byte at a time).
func (m *Matcher) next(s *walkState, b byte, out *walkState) {
	*out = *s
	if s.remain > 0 {
		if s.prev && b>>6 != 2 {
			out.dead = true
			return
		}
		out.value = s.value<<6 + uint32(b&0x3F)
		out.remain--
	} else {
		out.prev = false
		out.remain = utf8Lengths[b>>4] - 1
		if out.remain < 0 {
			out.dead = true
			return
		}
		out.value = uint32(b) & (1<<(7-out.remain) - 1)
	}
	if out.remain > 0 || out.stopped {
		return
	}
	out.prev = false
	if out.value == 0 {
		out.stopped = true
		return
	}
	out.set = m.stepSet(s.set, rune(out.value))
	out.dead = len(out.set.stacks) == 0
}

// Mask sets to −∞ the logits of the tokens that may not come next, as
// llama.cpp's grammar sampler does: a token that ends the generation
// unless the text is complete, and any other whose text the grammar
// refuses (AllowsToken). A matcher must get the same Vocab every time (it
// keeps the vocabulary's order).
func (m *Matcher) Mask(logits []float32, v Vocab) {
	c := m.c
	if c.order == nil || c.orderLen != len(logits) {
		c.order, c.orderLen = newVocabOrder(len(logits), v), len(logits)
		c.walk = make([]walkState, c.order.maxLen+1)
	}
	o, walk := c.order, c.walk
	allowed := make([]bool, len(logits))
	if m.Complete() {
		for _, id := range o.eog {
			allowed[id] = true
		}
	}

	// The stacks topped by a token element judge tokens by id.
	for _, s := range m.stacks {
		if s == nil {
			continue
		}
		e := m.g.elems[s.at]
		switch {
		case e.kind == elemToken && int(e.arg) < len(logits) && !v.IsEOG(e.arg):
			allowed[e.arg] = allowed[e.arg] || m.tokenFits(v.Piece(e.arg))
		case e.kind == elemNotToken:
			for i, id := range o.ids {
				if id != e.arg && !allowed[id] {
					allowed[id] = m.tokenFits(o.pieces[i])
				}
			}
		}
	}

	// The others read the tokens' text.
	var reading []*stack
	for _, s := range m.stacks {
		if s == nil || m.g.elems[s.at].kind == elemChars {
			reading = append(reading, s)
		}
	}
	set := m.setOf(reading)
	walk[0] = walkState{set: set, value: m.partial.value, remain: m.partial.remain, prev: m.partial.remain > 0, dead: len(set.stacks) == 0}
	valid := 0 // walk[:valid+1] holds the last token's states
	for i, id := range o.ids {
		piece := o.pieces[i]
		d := min(o.shared[i], valid)
		for d < len(piece) && !walk[d].dead {
			m.next(&walk[d], piece[d], &walk[d+1])
			d++
		}
		valid = d
		if end := &walk[d]; d == len(piece) && !end.dead {
			allowed[id] = allowed[id] || m.ends(end)
		}
	}
	for id, ok := range allowed {
		if !ok {
			logits[id] = negInf
		}
	}
}

// ends reports whether a token whose text leaves the walk at s is taken:
// some stack is left, and for an unfinished character one whose top can
// take it.
func (m *Matcher) ends(s *walkState) bool {
	if s.remain == 0 {
		return true
	}
	for _, st := range s.set.stacks {
		if m.fitsPartial(st, partialUTF8{s.value, s.remain}) {
			return true
		}
	}
	return false
}

// tokenFits reports whether a token element may take a token with this
// text: not one made only of an unfinished character.
func (m *Matcher) tokenFits(piece string) bool {
	if piece == "" || piece[0] == 0 {
		return false
	}
	cps, partial, ok := decodePiece(piece, m.partial)
	return ok && (len(cps) > 0 || partial.remain == 0)
}
