// Matcher: a GBNF grammar's state after the text so far, as the set of
// pushdown stacks llama.cpp's grammar sampler keeps.

package grammar

import (
	"fmt"
	"slices"
	"strings"
)

// Matcher follows a text through a GBNF grammar and masks the tokens that
// cannot come next, as llama.cpp's grammar sampler does: its state is the
// set of ways the text may continue, each a stack of the items still to
// match, topped by a terminal (a character class or a token element); an
// empty stack means the text may end there. Tokens are read as JSON reads
// them (see JSON.Accepts): decoded to code points, a character may be
// split between tokens, a NUL ends a token's text.
//
// A token element matches a whole token, at its start; inside a token's
// text it matches nothing (llama.cpp's mask lets a token through there
// when its id matches, but its accept step then drops that way).
//
// Clones share the matcher's caches (the stacks seen and the steps between
// them), so a Matcher and its clones belong to one goroutine; another
// goroutine makes its own with NewMatcher.
type Matcher struct {
	g       *GBNF
	stacks  []*stack // nil: the empty stack
	partial partialUTF8
	c       *matchCache
}

// stack is a stack of items, interned so that equal stacks are one
// pointer: at is the top item's index in GBNF.elems, below the rest.
type stack struct {
	at    int32
	below *stack
	id    int32 // the order of interning
	// Memoized steps from this stack, topped by a character class: by an
	// ASCII character, and by the others.
	ascii *[128][]*stack
	other map[rune][]*stack
}

// matchCache is what a matcher and its clones share.
type matchCache struct {
	interned map[stackKey]*stack
	expanded map[*stack][]*stack
	sets     map[string]*stackSet // interned sets of stacks, for Mask
	dead     *stackSet            // the empty set
	order    *vocabOrder          // Mask's token order, for one vocabulary size
	orderLen int
	walk     []walkState
}

type stackKey struct {
	at    int32
	below *stack
}

// none is a computed step that leaves no stack (a nil slice is one not yet
// computed).
var none = []*stack{}

// NewMatcher returns the state of g before any text.
func NewMatcher(g *GBNF) *Matcher {
	m := &Matcher{g: g, c: &matchCache{interned: map[stackKey]*stack{}, expanded: map[*stack][]*stack{},
		sets: map[string]*stackSet{}, dead: &stackSet{}}}
	for _, a := range g.alts[g.root] {
		var s *stack
		if g.elems[a].kind != elemEnd {
			s = m.push(a, nil)
		}
		m.stacks = m.union(m.stacks, m.expand(s))
	}
	return m
}

// Clone returns an independent copy of m (sharing its caches).
func (m *Matcher) Clone() *Matcher {
	c := *m
	c.stacks = slices.Clone(m.stacks)
	return &c
}

// Complete reports whether the text so far matches the whole grammar, so
// that the generation may end.
func (m *Matcher) Complete() bool { return slices.Contains(m.stacks, nil) }

// push returns the interned stack with item at on top of below.
func (m *Matcher) push(at int32, below *stack) *stack {
	k := stackKey{at, below}
	f := m.c.interned[k]
	if f == nil {
		f = &stack{at: at, below: below, id: int32(len(m.c.interned))}
		m.c.interned[k] = f
	}
	return f
}

// expand replaces the rule references on top of s by their alternatives
// until every stack is topped by a terminal or empty.
func (m *Matcher) expand(s *stack) []*stack {
	if s == nil {
		return []*stack{nil}
	}
	if out, ok := m.c.expanded[s]; ok {
		return out
	}
	var out []*stack
	e := m.g.elems[s.at]
	if e.kind != elemRule {
		out = []*stack{s}
	} else {
		rest := m.after(s)
		for _, a := range m.g.alts[e.arg] {
			next := rest
			if m.g.elems[a].kind != elemEnd {
				next = m.push(a, rest)
			}
			out = m.union(out, m.expand(next))
		}
	}
	if out == nil {
		out = none
	}
	m.c.expanded[s] = out
	return out
}

// after is stack s with its top item matched: the rest of the top's
// alternative, if any, on what was below.
func (m *Matcher) after(s *stack) *stack {
	if m.g.elems[s.at+1].kind == elemEnd {
		return s.below
	}
	return m.push(s.at+1, s.below)
}

// union appends to a the stacks of b it lacks.
func (m *Matcher) union(a, b []*stack) []*stack {
	for _, s := range b {
		if !slices.Contains(a, s) {
			a = append(a, s)
		}
	}
	return a
}

// step is the stacks after stack s takes character r (none: s refuses it).
func (m *Matcher) step(s *stack, r rune) []*stack {
	if s == nil {
		return none
	}
	var slot *[]*stack
	if r < 128 {
		if s.ascii == nil {
			s.ascii = new([128][]*stack)
		}
		slot = &s.ascii[r]
	} else if out, ok := s.other[r]; ok {
		return out
	}
	if slot != nil && *slot != nil {
		return *slot
	}
	out := none
	if e := m.g.elems[s.at]; e.kind == elemChars && m.g.sets[e.arg].has(r) {
		out = m.expand(m.after(s))
	}
	if slot != nil {
		*slot = out
	} else {
		if s.other == nil {
			s.other = map[rune][]*stack{}
		}
		s.other[r] = out
	}
	return out
}

// fitsPartial reports whether a stack can take a character that an
// unfinished UTF-8 sequence p may still become.
func (m *Matcher) fitsPartial(s *stack, p partialUTF8) bool {
	if s == nil {
		return false
	}
	e := m.g.elems[s.at]
	return e.kind == elemChars && m.g.sets[e.arg].hasPartial(p)
}

// decodePiece decodes a token's text as llama.cpp does (eachCodePoint):
// the code points up to the first NUL or code point 0, the sequence left
// unfinished at the end, and false when the token is refused.
func decodePiece(piece string, p partialUTF8) ([]rune, partialUTF8, bool) {
	var out []rune
	partial, ok := eachCodePoint(piece, p, func(r rune) bool {
		out = append(out, r)
		return true
	})
	return out, partial, ok
}

// advance is m's stacks after token id with text piece (id < 0: text
// alone, which no token element matches); false when none is left.
func (m *Matcher) advance(id int32, piece string) ([]*stack, partialUTF8, bool) {
	if piece == "" || piece[0] == 0 {
		return nil, partialUTF8{}, false
	}
	cps, partial, ok := decodePiece(piece, m.partial)
	if !ok {
		return nil, partialUTF8{}, false
	}
	// The stacks that read characters run the code points together (an
	// interned set, its steps memoized, as Mask walks); those topped by a
	// token element match the token by id.
	var out, reading []*stack
	for _, s := range m.stacks {
		if s != nil && (m.g.elems[s.at].kind == elemToken || m.g.elems[s.at].kind == elemNotToken) {
			e := m.g.elems[s.at]
			if id >= 0 && (e.arg == id) == (e.kind == elemToken) && (len(cps) > 0 || partial.remain == 0) {
				out = m.union(out, m.expand(m.after(s)))
			}
			continue
		}
		reading = append(reading, s) // the empty stack too: a token without characters keeps it
	}
	set := m.setOf(reading)
	for _, r := range cps {
		if set = m.stepSet(set, r); len(set.stacks) == 0 {
			break
		}
	}
	for _, t := range set.stacks {
		if partial.remain == 0 || m.fitsPartial(t, partial) {
			out = m.union(out, []*stack{t})
		}
	}
	return out, partial, len(out) > 0
}

// Accepts reports whether piece, a text, may come next (token elements
// match no text).
func (m *Matcher) Accepts(piece string) bool {
	_, _, ok := m.advance(-1, piece)
	return ok
}

// Accept advances m by piece; it returns an error, and leaves m as it
// was, when Accepts(piece) is false.
func (m *Matcher) Accept(piece string) error {
	stacks, partial, ok := m.advance(-1, piece)
	if !ok {
		return fmt.Errorf("grammar: %q cannot continue the text here", piece)
	}
	m.stacks, m.partial = stacks, partial
	return nil
}

// AllowsToken reports whether token id may come next: an end of
// generation once the text is complete, any other token whose text (or id,
// for a token element) the grammar takes.
func (m *Matcher) AllowsToken(id int32, v Vocab) bool {
	if v.IsEOG(id) {
		return m.Complete()
	}
	_, _, ok := m.advance(id, v.Piece(id))
	return ok
}

// AcceptToken advances m past token id (an end of generation changes
// nothing); a token AllowsToken refuses is an error and changes nothing.
func (m *Matcher) AcceptToken(id int32, v Vocab) error {
	if v.IsEOG(id) {
		if !m.Complete() {
			return fmt.Errorf("grammar: the text is incomplete: token %d cannot end it", id)
		}
		return nil
	}
	stacks, partial, ok := m.advance(id, v.Piece(id))
	if !ok {
		return fmt.Errorf("grammar: token %d (%q) cannot continue the text here", id, v.Piece(id))
	}
	m.stacks, m.partial = stacks, partial
	return nil
}

// String shows the text's possible continuations, one stack a line, the
// top first; "(end)" marks the empty stack.
func (m *Matcher) String() string {
	var b strings.Builder
	for _, s := range m.stacks {
		if s == nil {
			b.WriteString("(end)\n")
			continue
		}
		for f := s; f != nil; f = f.below {
			fmt.Fprintf(&b, "%s@%d ", m.g.ruleOf(f.at), f.at)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// ruleOf names the rule whose alternative holds item at.
func (g *GBNF) ruleOf(at int32) string {
	best, name := int32(-1), ""
	for r, alts := range g.alts {
		for _, a := range alts {
			if a <= at && a > best {
				best, name = a, g.names[r]
			}
		}
	}
	return name
}
