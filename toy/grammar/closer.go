// Closing a text in few characters: how far a Matcher is from a complete
// text, and the tokens that bring it nearer, so that a reply that must be
// in a grammar (a forced tool call) can be ended within a token budget.

package grammar

import (
	"math"
	"sync"
)

// shortest holds, per rule of a GBNF, the fewest items (characters or
// token elements) a text of it has; math.MaxInt32 for a rule that never
// ends.
type shortest struct {
	once sync.Once
	rule []int32
}

var shortestOf sync.Map // *GBNF → *shortest

// ruleMin returns g's per-rule shortest lengths, computed once.
func (g *GBNF) ruleMin() []int32 {
	v, _ := shortestOf.LoadOrStore(g, &shortest{})
	s := v.(*shortest)
	s.once.Do(func() {
		s.rule = make([]int32, len(g.alts))
		for i := range s.rule {
			s.rule[i] = math.MaxInt32
		}
		for changed := true; changed; { // a fixed point: rules refer to rules
			changed = false
			for r, alts := range g.alts {
				for _, a := range alts {
					if n := g.restMin(a, s.rule); n < s.rule[r] {
						s.rule[r], changed = n, true
					}
				}
			}
		}
	})
	return s.rule
}

// restMin is the fewest items that match elems[at:] up to the end of its
// alternative, with rule the rules' shortest lengths so far.
func (g *GBNF) restMin(at int32, rule []int32) int32 {
	var n int64
	for ; g.elems[at].kind != elemEnd; at++ {
		if e := g.elems[at]; e.kind == elemRule {
			n += int64(rule[e.arg])
		} else {
			n++
		}
	}
	return int32(min(n, math.MaxInt32))
}

// remainingOf is the fewest items that complete a text with these stacks.
func (m *Matcher) remainingOf(stacks []*stack) int {
	rule := m.g.ruleMin()
	best := math.MaxInt
	for _, s := range stacks {
		n := 0
		for f := s; f != nil; f = f.below {
			n += int(m.g.restMin(f.at, rule))
		}
		best = min(best, n)
	}
	return best
}

// Remaining returns the fewest characters (token elements counting one)
// that complete the text so far: 0 when it is complete. A character split
// between tokens counts as not yet read.
func (m *Matcher) Remaining() int { return m.remainingOf(m.stacks) }

// RemainingAfter returns what Remaining would be after token id, and
// whether the grammar takes it there (an end of generation: 0, once the
// text is complete).
func (m *Matcher) RemainingAfter(id int32, v Vocab) (int, bool) {
	if v.IsEOG(id) {
		return 0, m.Complete()
	}
	stacks, partial, ok := m.advance(id, v.Piece(id))
	if !ok {
		return 0, false
	}
	n := m.remainingOf(stacks)
	if partial.remain != 0 {
		n++ // the character's end
	}
	return n, true
}
