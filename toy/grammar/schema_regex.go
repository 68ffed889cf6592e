// A string schema's pattern: an ECMAScript regular expression read into a
// tree and written as GBNF over the string's JSON text.

package grammar

import (
	"fmt"
	"strconv"
	"strings"
)

// rx is a node of a regular expression.
type rx struct {
	kind     rxKind
	set      []runeRange // rxChar: the characters it takes
	subs     []*rx       // rxSeq, rxAlt; rxRepeat: one
	min, max int         // rxRepeat; max −1: no limit
}

type rxKind uint8

const (
	rxChar rxKind = iota
	rxSeq
	rxAlt
	rxRepeat
)

// The classes of the escapes \d, \w and \s (ECMAScript's).
var (
	rxDigit = []runeRange{{'0', '9'}}
	rxWord  = []runeRange{{'0', '9'}, {'A', 'Z'}, {'_', '_'}, {'a', 'z'}}
	rxSpace = setUnion([]runeRange{{'\t', '\r'}, {' ', ' '}, {0xA0, 0xA0}, {0x1680, 0x1680}, {0x2000, 0x200A},
		{0x2028, 0x2029}, {0x202F, 0x202F}, {0x205F, 0x205F}, {0x3000, 0x3000}, {0xFEFF, 0xFEFF}}, nil)
	rxDot = setNot(runeSet('\n', '\r', 0x2028, 0x2029)) // "." : not a line terminator
)

// rxParser reads a pattern.
type rxParser struct {
	src []rune
	i   int
}

func (p *rxParser) errorf(format string, args ...any) error {
	return fmt.Errorf("at %d of /%s/: %s", p.i, string(p.src), fmt.Sprintf(format, args...))
}

func (p *rxParser) more() bool { return p.i < len(p.src) }
func (p *rxParser) peek() rune {
	if p.more() {
		return p.src[p.i]
	}
	return -1
}

// pattern writes a pattern's GBNF: the characters between the quotes of
// a string the pattern matches; an end not anchored takes any characters.
func (c *schemaConv) pattern(pattern, name string) (string, error) {
	src := []rune(pattern)
	start, end := len(src) > 0 && src[0] == '^', false
	if start {
		src = src[1:]
	}
	if n := len(src); n > 0 && src[n-1] == '$' && (n < 2 || src[n-2] != '\\' || escapedBackslashes(src[:n-1])) {
		src, end = src[:n-1], true
	}
	p := &rxParser{src: src}
	tree, err := p.alt()
	if err != nil {
		return "", err
	}
	if p.more() {
		return "", p.errorf("unbalanced )")
	}
	body := c.rxGBNF(tree, name)
	char := c.prim("char")
	if !start {
		body = char + "* " + body
	}
	if !end {
		body += " " + char + "*"
	}
	return strings.TrimSpace(body), nil
}

// escapedBackslashes reports whether src ends in an even number of
// backslashes (so that a "$" after it is not escaped).
func escapedBackslashes(src []rune) bool {
	n := 0
	for i := len(src) - 1; i >= 0 && src[i] == '\\'; i-- {
		n++
	}
	return n%2 == 0
}

// alt reads alternatives up to a ")" or the end.
func (p *rxParser) alt() (*rx, error) {
	var alts []*rx
	for {
		s, err := p.seq()
		if err != nil {
			return nil, err
		}
		alts = append(alts, s)
		if p.peek() != '|' {
			break
		}
		p.i++
	}
	if len(alts) == 1 {
		return alts[0], nil
	}
	return &rx{kind: rxAlt, subs: alts}, nil
}

// seq reads items up to a "|", a ")" or the end.
func (p *rxParser) seq() (*rx, error) {
	s := &rx{kind: rxSeq}
	for p.more() && p.peek() != '|' && p.peek() != ')' {
		item, err := p.atom()
		if err != nil {
			return nil, err
		}
		for {
			lo, hi, ok, err := p.quantifier()
			if err != nil {
				return nil, err
			}
			if !ok {
				break
			}
			item = &rx{kind: rxRepeat, subs: []*rx{item}, min: lo, max: hi}
		}
		s.subs = append(s.subs, item)
	}
	return s, nil
}

// quantifier reads *, +, ?, {n}, {n,} or {n,m} and a lazy "?" after it.
func (p *rxParser) quantifier() (lo, hi int, ok bool, err error) {
	switch p.peek() {
	case '*':
		lo, hi = 0, -1
		p.i++
	case '+':
		lo, hi = 1, -1
		p.i++
	case '?':
		lo, hi = 0, 1
		p.i++
	case '{':
		var n int
		if lo, hi, n, ok = braces(p.src[p.i:]); !ok {
			return 0, 0, false, nil // a literal "{"
		}
		if hi >= 0 && hi < lo {
			return 0, 0, false, p.errorf("numbers out of order in {}")
		}
		p.i += n
	default:
		return 0, 0, false, nil
	}
	if p.peek() == '?' {
		p.i++ // lazy: the same strings
	}
	return lo, hi, true, nil
}

// braces reads {n}, {n,} or {n,m} at the start of s and its length.
func braces(s []rune) (lo, hi, n int, ok bool) {
	end := -1
	for i, r := range s {
		if r == '}' {
			end = i
			break
		}
	}
	if end < 0 {
		return 0, 0, 0, false
	}
	parts := strings.Split(string(s[1:end]), ",")
	if len(parts) > 2 {
		return 0, 0, 0, false
	}
	num := func(t string) (int, bool) {
		if t == "" || strings.Trim(t, "0123456789") != "" {
			return 0, false
		}
		v, err := strconv.Atoi(t)
		return v, err == nil
	}
	if lo, ok = num(parts[0]); !ok {
		return 0, 0, 0, false
	}
	hi = lo
	if len(parts) == 2 {
		hi = -1
		if parts[1] != "" {
			if hi, ok = num(parts[1]); !ok {
				return 0, 0, 0, false
			}
		}
	}
	return lo, hi, end + 1, true
}

// atom reads one item: a group, a class, ".", an escape or a character.
func (p *rxParser) atom() (*rx, error) {
	r := p.src[p.i]
	switch r {
	case '(':
		p.i++
		if p.peek() == '?' {
			rest := string(p.src[p.i:])
			switch {
			case strings.HasPrefix(rest, "?:"):
				p.i += 2
			case strings.HasPrefix(rest, "?<") && !strings.HasPrefix(rest, "?<=") && !strings.HasPrefix(rest, "?<!"):
				end := strings.IndexRune(rest, '>')
				if end < 0 {
					return nil, p.errorf("unfinished group name")
				}
				p.i += len([]rune(rest[:end+1]))
			default:
				return nil, p.errorf("lookarounds are not supported")
			}
		}
		inner, err := p.alt()
		if err != nil {
			return nil, err
		}
		if p.peek() != ')' {
			return nil, p.errorf("missing )")
		}
		p.i++
		return inner, nil
	case '[':
		return p.class()
	case '.':
		p.i++
		return &rx{kind: rxChar, set: rxDot}, nil
	case '\\':
		set, err := p.escape(false)
		if err != nil {
			return nil, err
		}
		return &rx{kind: rxChar, set: set}, nil
	case '*', '+', '?':
		return nil, p.errorf("nothing to repeat")
	case '{':
		if _, _, _, ok := braces(p.src[p.i:]); ok {
			return nil, p.errorf("nothing to repeat")
		}
	case '^', '$':
		return nil, p.errorf("anchors are supported only at the ends of the pattern")
	}
	p.i++
	return &rx{kind: rxChar, set: runeSet(r)}, nil
}

// escape reads a backslash escape: a class (\d …) or one character.
func (p *rxParser) escape(inClass bool) ([]runeRange, error) {
	p.i++ // the backslash
	if !p.more() {
		return nil, p.errorf("a backslash at the end")
	}
	r := p.src[p.i]
	p.i++
	switch r {
	case 'd':
		return rxDigit, nil
	case 'D':
		return setNot(rxDigit), nil
	case 'w':
		return rxWord, nil
	case 'W':
		return setNot(rxWord), nil
	case 's':
		return rxSpace, nil
	case 'S':
		return setNot(rxSpace), nil
	case 'n':
		return runeSet('\n'), nil
	case 'r':
		return runeSet('\r'), nil
	case 't':
		return runeSet('\t'), nil
	case 'f':
		return runeSet('\f'), nil
	case 'v':
		return runeSet('\v'), nil
	case '0':
		if p.more() && p.peek() >= '0' && p.peek() <= '9' {
			return nil, p.errorf("octal escapes are not supported")
		}
		return runeSet(0), nil
	case 'x', 'u':
		n := map[rune]int{'x': 2, 'u': 4}[r]
		if p.i+n > len(p.src) {
			return nil, p.errorf(`\%c needs %d hex digits`, r, n)
		}
		v, err := strconv.ParseUint(string(p.src[p.i:p.i+n]), 16, 32)
		if err != nil {
			return nil, p.errorf(`\%c needs %d hex digits`, r, n)
		}
		p.i += n
		return runeSet(rune(v)), nil
	case 'b':
		if inClass {
			return runeSet('\b'), nil
		}
		return nil, p.errorf(`word boundaries (\b) are not supported`)
	case 'B', 'c', 'k', 'p', 'P':
		return nil, p.errorf(`\%c is not supported`, r)
	}
	if r >= '1' && r <= '9' {
		return nil, p.errorf("backreferences are not supported")
	}
	return runeSet(r), nil // \. \( \/ …: the character itself
}

// class reads [...] or [^...].
func (p *rxParser) class() (*rx, error) {
	p.i++ // [
	neg := p.peek() == '^'
	if neg {
		p.i++
	}
	var set []runeRange
	for {
		if !p.more() {
			return nil, p.errorf("missing ]")
		}
		if p.peek() == ']' {
			p.i++
			break
		}
		lo, single, err := p.classItem()
		if err != nil {
			return nil, err
		}
		if p.peek() == '-' && p.i+1 < len(p.src) && p.src[p.i+1] != ']' {
			p.i++
			hi, single2, err := p.classItem()
			if err != nil {
				return nil, err
			}
			if !single || !single2 {
				return nil, p.errorf("a class escape in a range")
			}
			if hi[0].lo < lo[0].lo {
				return nil, p.errorf("range out of order")
			}
			set = setUnion(set, []runeRange{{lo[0].lo, hi[0].lo}})
			continue
		}
		set = setUnion(set, lo)
	}
	if neg {
		set = setNot(set)
	}
	return &rx{kind: rxChar, set: set}, nil
}

// classItem reads one character or class escape inside [...]; single:
// it is one character.
func (p *rxParser) classItem() ([]runeRange, bool, error) {
	if p.peek() == '\\' {
		set, err := p.escape(true)
		return set, err == nil && len(set) == 1 && set[0].lo == set[0].hi, err
	}
	r := p.src[p.i]
	p.i++
	return runeSet(r), true, nil
}

// rxGBNF writes a regular expression as GBNF over JSON's text; name hints
// the rules it adds.
func (c *schemaConv) rxGBNF(n *rx, name string) string {
	switch n.kind {
	case rxChar:
		if e := jsonChars(n.set); e != "" {
			return e
		}
		return "[^\\x00-\\U0010FFFF]" // an empty class: nothing matches
	case rxAlt:
		alts := make([]string, len(n.subs))
		for i, s := range n.subs {
			alts[i] = c.rxGBNF(s, name)
		}
		return "( " + strings.Join(alts, " | ") + " )"
	case rxRepeat:
		return repeat(c.rxGBNF(n.subs[0], name), n.min, n.max)
	}
	// A sequence: runs of characters written bare join one literal.
	var items []string
	lit := ""
	flush := func() {
		if lit != "" {
			items = append(items, QuoteGBNF(lit))
			lit = ""
		}
	}
	for _, s := range n.subs {
		if s.kind == rxChar && len(s.set) == 1 && s.set[0].lo == s.set[0].hi && !setHas(jsonSpecial, s.set[0].lo) {
			lit += string(s.set[0].lo)
			continue
		}
		flush()
		items = append(items, c.rxGBNF(s, name))
	}
	flush()
	if len(items) == 0 {
		return `""`
	}
	return strings.Join(items, " ")
}
