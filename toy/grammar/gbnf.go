// GBNF: grammars in llama.cpp's notation, parsed into rules of
// alternatives, each a sequence of terminals and rule references.

package grammar

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// GBNF is a grammar in llama.cpp's GBNF notation (grammars/README.md in
// llama.cpp), what its server's and CLI's grammar parameter takes:
//
//	# a comment
//	root   ::= answer ("\n" answer){0,2}
//	answer ::= ("yes" | "no") " " [a-z]+ "."
//
// A rule is a name ([a-zA-Z0-9-]+), "::=" and alternatives separated by
// "|"; it ends at a newline outside parentheses. A sequence is made of
// literals ("…", with the escapes \n \r \t \\ \" \[ \] \- \xHH \uHHHH
// \UHHHHHHHH), character classes ([a-z_], [^"\\]), "." (any character),
// rule names, groups "( … )" and the token elements <[id]> and !<[id]>
// (the token with that id; any token but it) — or <name>, by the token's
// text, given a TokenIDs. Any item may be followed by *, +, ?, {m}, {m,}
// or {m,n}; a literal repeats as a whole. The text must match the rule
// named root.
//
// As in llama.cpp: a later definition of a rule replaces an earlier one;
// a bound over 2000 in {m,n} means no bound, and {m} with m over 2000 is
// refused; a left-recursive grammar is refused. Beyond it: an empty
// character class, invalid UTF-8 and out-of-range code points are refused.
//
// A GBNF is read-only once parsed and may be shared; NewMatcher follows a
// text through it.
type GBNF struct {
	names []string  // rule names; generated rules are name_N
	alts  [][]int32 // per rule: where each alternative starts in elems
	elems []elem    // every alternative's items, each alternative ended by an end item
	sets  []charSet // the character classes the items refer to
	root  int32
}

// elem is one item of an alternative.
type elem struct {
	kind elemKind
	arg  int32 // the rule, the token id or the character set
}

type elemKind uint8

const (
	elemEnd      elemKind = iota // the end of an alternative
	elemChars                    // one character of sets[arg]
	elemRule                     // rule arg
	elemToken                    // the token whose id is arg
	elemNotToken                 // any token but arg
)

// charSet is a character class: a code point in one of its ranges (or,
// negated, in none of them); any: every code point.
type charSet struct {
	not, any bool
	ranges   []runeRange // in the order written: partial characters are judged by it
	ascii    [2]uint64   // which code points below 128 are in the ranges
}

type runeRange struct{ lo, hi rune }

// has reports whether r is in the class.
func (s *charSet) has(r rune) bool {
	if s.any {
		return true
	}
	in := false
	if r < 128 {
		in = s.ascii[r>>6]&(1<<(r&63)) != 0
	} else {
		for _, rg := range s.ranges {
			if rg.lo <= r && r <= rg.hi {
				in = true
				break
			}
		}
	}
	return in != s.not
}

// hasPartial reports whether an unfinished UTF-8 sequence could become a
// character of the class, as llama.cpp judges it: the code points it may
// still become form a range; a range of the class that meets it decides
// (in, or for a negated class out), the first one met; none met: in only
// for a negated class. An invalid or overlong 2-byte start is never in.
func (s *charSet) hasPartial(p partialUTF8) bool {
	if p.remain < 0 || (p.remain == 1 && p.value < 2) {
		return false
	}
	if s.any {
		return true
	}
	low := rune(p.value) << (6 * p.remain)
	high := low | (1<<(6*p.remain) - 1)
	if low == 0 {
		switch p.remain {
		case 2:
			low = 1 << 11
		case 3:
			low = 1 << 16
		}
	}
	for _, rg := range s.ranges {
		if rg.lo <= high && low <= rg.hi {
			return !s.not
		}
	}
	return s.not
}

// maxRepeat is llama.cpp's bound on repetition counts.
const maxRepeat = 2000

// maxElems bounds the size of the expanded grammar, so that a hostile
// repetition cannot exhaust memory.
const maxElems = 1 << 20

// MaxGrammarBytes bounds a GBNF grammar's source, and MaxRules its rules
// once repetitions are written out.
const (
	MaxGrammarBytes = 1 << 20
	MaxRules        = 1 << 16
)

// TokenIDs finds a token by its text, for GBNF's <name> token elements
// (*tokenizer.Tokenizer has it); ID returns −1 when no token has that text.
type TokenIDs interface {
	ID(text string) int32
}

// ParseGBNF parses a grammar in GBNF notation whose start rule is root.
// tokens, if not nil, resolves token elements written by text (<think>);
// without it only <[id]> may be written. The error names the line and
// column of the first fault.
//
// A grammar's source may be at most MaxGrammarBytes long, and it may
// expand (its repetitions written out) to at most 2²⁰ items and MaxRules
// rules: bounds on the work a grammar from a request may ask for.
func ParseGBNF(src string, tokens TokenIDs) (*GBNF, error) {
	if len(src) > MaxGrammarBytes {
		return nil, fmt.Errorf("grammar: the grammar is %d bytes, over the limit of %d (grammar.MaxGrammarBytes)", len(src), MaxGrammarBytes)
	}
	p := &gbnfParser{src: src, tokens: tokens, ids: map[string]int32{}}
	if err := p.parse(); err != nil {
		return nil, err
	}
	return p.compile()
}

// gbnfParser reads GBNF into rules of alternatives of items.
type gbnfParser struct {
	src     string
	pos     int
	tokens  TokenIDs
	ids     map[string]int32 // rule name → id
	names   []string
	rules   [][][]elem // per rule: its alternatives; nil while undefined
	refs    []int      // per rule: where it was first referred to (for errors)
	sets    []charSet
	nelems  int
	defined []bool
}

// syntaxError is a fault at offset at of the source.
func (p *gbnfParser) errorAt(at int, format string, args ...any) error {
	line := 1 + strings.Count(p.src[:at], "\n")
	col := at - strings.LastIndexByte(p.src[:at], '\n')
	near := p.src[at:]
	if i := strings.IndexByte(near, '\n'); i >= 0 {
		near = near[:i]
	}
	if len(near) > 24 {
		near = near[:24] + "…"
	}
	msg := fmt.Sprintf(format, args...)
	if near == "" {
		return fmt.Errorf("grammar: line %d col %d: %s", line, col, msg)
	}
	return fmt.Errorf("grammar: line %d col %d: %s at %q", line, col, msg, near)
}

func (p *gbnfParser) peek(k int) byte {
	if p.pos+k < len(p.src) {
		return p.src[p.pos+k]
	}
	return 0
}

// space skips blanks and comments, and newlines when newlines are allowed.
func (p *gbnfParser) space(newlines bool) {
	for p.pos < len(p.src) {
		switch c := p.src[p.pos]; {
		case c == ' ' || c == '\t':
			p.pos++
		case c == '#':
			for p.pos < len(p.src) && p.src[p.pos] != '\n' && p.src[p.pos] != '\r' {
				p.pos++
			}
		case newlines && (c == '\n' || c == '\r'):
			p.pos++
		default:
			return
		}
	}
}

func isWordChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-'
}

func (p *gbnfParser) name() (string, error) {
	start := p.pos
	for p.pos < len(p.src) && isWordChar(p.src[p.pos]) {
		p.pos++
	}
	if p.pos == start {
		return "", p.errorAt(start, "expecting a rule name")
	}
	return p.src[start:p.pos], nil
}

// rule is the id of the rule called name, made on first mention.
func (p *gbnfParser) rule(name string, at int) int32 {
	if id, ok := p.ids[name]; ok {
		return id
	}
	id := int32(len(p.names))
	p.ids[name] = id
	p.names = append(p.names, name)
	p.rules = append(p.rules, nil)
	p.refs = append(p.refs, at)
	p.defined = append(p.defined, false)
	return id
}

// newRule makes a rule for a group or a repetition inside rule base.
func (p *gbnfParser) newRule(base string) int32 {
	id := int32(len(p.names))
	name := base + "_" + strconv.Itoa(int(id))
	p.ids[name] = id
	p.names = append(p.names, name)
	p.rules = append(p.rules, nil)
	p.refs = append(p.refs, p.pos)
	p.defined = append(p.defined, true)
	return id
}

func (p *gbnfParser) define(id int32, alts [][]elem) error {
	if len(p.names) > MaxRules {
		return p.errorAt(p.pos, "the grammar expands to over %d rules (grammar.MaxRules)", MaxRules)
	}
	n := 0
	for _, a := range alts {
		n += len(a) + 1
	}
	if p.nelems += n; p.nelems > maxElems {
		return p.errorAt(p.pos, "the grammar expands to over %d items (its repetitions written out)", maxElems)
	}
	p.rules[id] = alts
	p.defined[id] = true
	return nil
}

func (p *gbnfParser) parse() error {
	p.space(true)
	for p.pos < len(p.src) {
		start := p.pos
		name, err := p.name()
		if err != nil {
			return err
		}
		p.space(false)
		if !strings.HasPrefix(p.src[p.pos:], "::=") {
			return p.errorAt(p.pos, "expecting ::=")
		}
		p.pos += 3
		p.space(true)
		id := p.rule(name, start)
		alts, err := p.alternatives(name, false)
		if err != nil {
			return err
		}
		if err := p.define(id, alts); err != nil {
			return err
		}
		switch {
		case p.peek(0) == '\r' && p.peek(1) == '\n':
			p.pos += 2
		case p.peek(0) == '\r' || p.peek(0) == '\n':
			p.pos++
		case p.pos < len(p.src):
			return p.errorAt(p.pos, "expecting a newline or the end")
		}
		p.space(true)
	}
	for id, ok := range p.defined {
		if !ok {
			return p.errorAt(p.refs[id], "undefined rule %s", p.names[id])
		}
	}
	if _, ok := p.ids["root"]; !ok {
		return fmt.Errorf("grammar: no rule named root")
	}
	return nil
}

// alternatives reads sequences separated by '|'; nested: inside
// parentheses, where newlines are blanks.
func (p *gbnfParser) alternatives(rule string, nested bool) ([][]elem, error) {
	var alts [][]elem
	for {
		seq, err := p.sequence(rule, nested)
		if err != nil {
			return nil, err
		}
		alts = append(alts, seq)
		if p.peek(0) != '|' {
			return alts, nil
		}
		p.pos++
		p.space(true)
	}
}

// sequence reads items up to what cannot start one.
func (p *gbnfParser) sequence(rule string, nested bool) ([]elem, error) {
	var seq []elem
	last := -1 // where the last item starts, for a repetition
	for p.pos < len(p.src) {
		at := p.pos
		switch c := p.src[p.pos]; {
		case c == '"':
			p.pos++
			last = len(seq)
			for p.peek(0) != '"' {
				if p.pos >= len(p.src) {
					return nil, p.errorAt(at, "unterminated literal")
				}
				r, err := p.char()
				if err != nil {
					return nil, err
				}
				seq = append(seq, p.set(charSet{ranges: []runeRange{{r, r}}}))
			}
			p.pos++
		case c == '[':
			p.pos++
			s := charSet{}
			if p.peek(0) == '^' {
				s.not = true
				p.pos++
			}
			for p.peek(0) != ']' {
				if p.pos >= len(p.src) {
					return nil, p.errorAt(at, "unterminated character class")
				}
				lo, err := p.char()
				if err != nil {
					return nil, err
				}
				hi := lo
				if p.peek(0) == '-' && p.peek(1) != ']' && p.pos+1 < len(p.src) {
					p.pos++
					if hi, err = p.char(); err != nil {
						return nil, err
					}
				}
				s.ranges = append(s.ranges, runeRange{lo, hi})
			}
			p.pos++
			if len(s.ranges) == 0 {
				return nil, p.errorAt(at, "empty character class")
			}
			last = len(seq)
			seq = append(seq, p.set(s))
		case c == '<' || c == '!':
			e, err := p.token()
			if err != nil {
				return nil, err
			}
			last = len(seq)
			seq = append(seq, e)
		case isWordChar(c):
			name, _ := p.name()
			last = len(seq)
			seq = append(seq, elem{elemRule, p.rule(name, at)})
		case c == '(':
			p.pos++
			p.space(true)
			id := p.newRule(rule)
			alts, err := p.alternatives(rule, true)
			if err != nil {
				return nil, err
			}
			if p.peek(0) != ')' {
				return nil, p.errorAt(p.pos, "expecting )")
			}
			p.pos++
			if err := p.define(id, alts); err != nil {
				return nil, err
			}
			last = len(seq)
			seq = append(seq, elem{elemRule, id})
		case c == '.':
			p.pos++
			last = len(seq)
			seq = append(seq, p.set(charSet{any: true}))
		case c == '*' || c == '+' || c == '?' || c == '{':
			if last < 0 {
				return nil, p.errorAt(at, "%c with nothing before it to repeat", c)
			}
			p.pos++
			lo, hi := 0, -1 // hi < 0: no bound
			switch c {
			case '+':
				lo = 1
			case '?':
				hi = 1
			case '{':
				p.space(nested)
				var err error
				if lo, err = p.count(); err != nil {
					return nil, err
				}
				p.space(nested)
				switch p.peek(0) {
				case '}':
					hi = lo
				case ',':
					p.pos++
					p.space(nested)
					if d := p.peek(0); d >= '0' && d <= '9' {
						if hi, err = p.count(); err != nil {
							return nil, err
						}
						p.space(nested)
					}
					if p.peek(0) != '}' {
						return nil, p.errorAt(p.pos, "expecting }")
					}
				default:
					return nil, p.errorAt(p.pos, "expecting , or }")
				}
				p.pos++
				if lo > maxRepeat {
					return nil, p.errorAt(at, "a repetition of %d is over %d", lo, maxRepeat)
				}
				if hi > maxRepeat {
					hi = -1 // as llama.cpp
				}
				if hi >= 0 && hi < lo {
					return nil, p.errorAt(at, "{%d,%d}: the bound is below the minimum", lo, hi)
				}
			}
			var err error
			if seq, err = p.repeat(rule, seq, last, lo, hi); err != nil {
				return nil, err
			}
		default:
			return seq, nil
		}
		p.space(nested)
	}
	return seq, nil
}

// count reads a repetition count.
func (p *gbnfParser) count() (int, error) {
	start := p.pos
	for p.pos < len(p.src) && p.src[p.pos] >= '0' && p.src[p.pos] <= '9' {
		p.pos++
	}
	if p.pos == start {
		return 0, p.errorAt(start, "expecting a number")
	}
	n, err := strconv.Atoi(p.src[start:p.pos])
	if err != nil || n > 1<<30 {
		return 0, p.errorAt(start, "the number is too large")
	}
	return n, nil
}

// repeat rewrites the item seq[last:] as lo to hi of it (hi < 0: no bound):
// lo copies, then for no bound a rule R ::= item R | ε, or for a bound a
// chain of hi−lo optional copies, R_k ::= item R_{k−1} | ε.
func (p *gbnfParser) repeat(rule string, seq []elem, last, lo, hi int) ([]elem, error) {
	item := append([]elem(nil), seq[last:]...)
	if n := len(item) * max(lo, hi, 1); p.nelems+n > maxElems {
		return nil, p.errorAt(p.pos, "the grammar expands to over %d items (its repetitions written out)", maxElems)
	}
	seq = seq[:last]
	for range lo {
		seq = append(seq, item...)
	}
	if hi < 0 {
		id := p.newRule(rule)
		if err := p.define(id, [][]elem{append(append([]elem(nil), item...), elem{elemRule, id}), nil}); err != nil {
			return nil, err
		}
		return append(seq, elem{elemRule, id}), nil
	}
	var prev int32 = -1
	for k := 0; k < hi-lo; k++ {
		id := p.newRule(rule)
		alt := append([]elem(nil), item...)
		if prev >= 0 {
			alt = append(alt, elem{elemRule, prev})
		}
		if err := p.define(id, [][]elem{alt, nil}); err != nil {
			return nil, err
		}
		prev = id
	}
	if prev >= 0 {
		seq = append(seq, elem{elemRule, prev})
	}
	return seq, nil
}

// set adds a character class and returns the item for it.
func (p *gbnfParser) set(s charSet) elem {
	for _, r := range s.ranges {
		for c := max(r.lo, 0); c <= min(r.hi, 127); c++ {
			s.ascii[c>>6] |= 1 << (c & 63)
		}
	}
	p.sets = append(p.sets, s)
	return elem{elemChars, int32(len(p.sets) - 1)}
}

// char reads one character of a literal or class: an escape or a UTF-8
// encoded code point.
func (p *gbnfParser) char() (rune, error) {
	at := p.pos
	if p.src[p.pos] != '\\' {
		r, n := utf8.DecodeRuneInString(p.src[p.pos:])
		if r == utf8.RuneError && n <= 1 {
			return 0, p.errorAt(at, "invalid UTF-8")
		}
		p.pos += n
		return r, nil
	}
	p.pos += 2
	switch c := p.peek(-1); c {
	case 'x', 'u', 'U':
		n := map[byte]int{'x': 2, 'u': 4, 'U': 8}[c]
		if p.pos+n > len(p.src) {
			return 0, p.errorAt(at, "expecting %d hex digits", n)
		}
		v, err := strconv.ParseUint(p.src[p.pos:p.pos+n], 16, 32)
		if err != nil {
			return 0, p.errorAt(at, "expecting %d hex digits", n)
		}
		if v > utf8.MaxRune {
			return 0, p.errorAt(at, "code point %#x is out of range", v)
		}
		p.pos += n
		return rune(v), nil
	case 't':
		return '\t', nil
	case 'r':
		return '\r', nil
	case 'n':
		return '\n', nil
	case '\\', '"', '[', ']', '-':
		return rune(c), nil
	}
	return 0, p.errorAt(at, "unknown escape")
}

// token reads <[id]>, <text> or either after '!'.
func (p *gbnfParser) token() (elem, error) {
	kind := elemToken
	if p.peek(0) == '!' {
		kind = elemNotToken
		p.pos++
	}
	at := p.pos
	if p.peek(0) != '<' {
		return elem{}, p.errorAt(at, "expecting <")
	}
	end := strings.IndexByte(p.src[p.pos:], '>')
	if end < 0 {
		return elem{}, p.errorAt(at, "unterminated token")
	}
	text := p.src[p.pos : p.pos+end+1]
	p.pos += end + 1
	if strings.HasPrefix(text, "<[") && strings.HasSuffix(text, "]>") {
		id, err := strconv.ParseInt(text[2:len(text)-2], 10, 32)
		if err != nil || id < 0 {
			return elem{}, p.errorAt(at, "bad token id")
		}
		return elem{kind, int32(id)}, nil
	}
	if p.tokens == nil {
		return elem{}, p.errorAt(at, "token %s by its text needs a vocabulary (or write <[id]>)", text)
	}
	id := p.tokens.ID(text)
	if id < 0 {
		return elem{}, p.errorAt(at, "no token %s in the vocabulary", text)
	}
	return elem{kind, id}, nil
}

// compile lays the rules out flat and refuses left recursion.
func (p *gbnfParser) compile() (*GBNF, error) {
	g := &GBNF{names: p.names, sets: p.sets, root: p.ids["root"], alts: make([][]int32, len(p.rules))}
	for id, alts := range p.rules {
		for _, a := range alts {
			g.alts[id] = append(g.alts[id], int32(len(g.elems)))
			g.elems = append(g.elems, a...)
			g.elems = append(g.elems, elem{kind: elemEnd})
		}
	}
	if r, ok := g.leftRecursive(); ok {
		return nil, fmt.Errorf("grammar: rule %s is left-recursive (it can begin with itself)", g.names[r])
	}
	return g, nil
}

// leftRecursive finds a rule that can derive a sequence beginning with
// itself, which would expand forever.
func (g *GBNF) leftRecursive() (int32, bool) {
	// Which rules can match the empty text, by fixpoint.
	empty := make([]bool, len(g.alts))
	for changed := true; changed; {
		changed = false
		for r, alts := range g.alts {
			if empty[r] {
				continue
			}
			for _, a := range alts {
				i := a
				for g.elems[i].kind == elemRule && empty[g.elems[i].arg] {
					i++
				}
				if g.elems[i].kind == elemEnd {
					empty[r], changed = true, true
					break
				}
			}
		}
	}
	// Depth-first search over "may begin with" edges for a cycle.
	const (
		unseen = iota
		open
		done
	)
	state := make([]uint8, len(g.alts))
	var visit func(r int32) (int32, bool)
	visit = func(r int32) (int32, bool) {
		state[r] = open
		for _, a := range g.alts[r] {
			for i := a; g.elems[i].kind == elemRule; i++ {
				next := g.elems[i].arg
				switch state[next] {
				case open:
					return next, true
				case unseen:
					if at, ok := visit(next); ok {
						return at, true
					}
				}
				if !empty[next] {
					break
				}
			}
		}
		state[r] = done
		return 0, false
	}
	for r := range g.alts {
		if state[r] == unseen {
			if at, ok := visit(int32(r)); ok {
				return at, true
			}
		}
	}
	return 0, false
}

// Rules is the number of rules, those made for groups and repetitions
// included.
func (g *GBNF) Rules() int { return len(g.alts) }
