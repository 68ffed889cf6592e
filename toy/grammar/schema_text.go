// The text inside a schema's grammar: GBNF literals and classes, JSON's
// escapes, integer ranges and regular-expression patterns.

package grammar

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// QuoteGBNF writes s as a GBNF literal (ParseGBNF reads it back as s):
// in double quotes, with quotes, backslashes and control characters
// escaped. It helps write grammars that name given strings.
func QuoteGBNF(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7F:
			fmt.Fprintf(&b, `\x%02X`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// A set of code points is a sorted list of disjoint ranges (runeRange,
// inclusive bounds).

const maxRune = utf8.MaxRune

// runeSet is the set of the code points rs.
func runeSet(rs ...rune) []runeRange {
	var s []runeRange
	for _, r := range rs {
		s = setUnion(s, []runeRange{{r, r}})
	}
	return s
}

// setUnion is a ∪ b.
func setUnion(a, b []runeRange) []runeRange {
	all := append(slices.Clone(a), b...)
	slices.SortFunc(all, func(x, y runeRange) int { return int(x.lo - y.lo) })
	var out []runeRange
	for _, r := range all {
		if n := len(out); n > 0 && r.lo <= out[n-1].hi+1 {
			out[n-1].hi = max(out[n-1].hi, r.hi)
			continue
		}
		out = append(out, r)
	}
	return out
}

// setNot is the complement of a among all code points.
func setNot(a []runeRange) []runeRange {
	var out []runeRange
	next := rune(0)
	for _, r := range a {
		if r.lo > next {
			out = append(out, runeRange{next, r.lo - 1})
		}
		next = r.hi + 1
	}
	if next <= maxRune {
		out = append(out, runeRange{next, maxRune})
	}
	return out
}

// setMinus is a ∖ b.
func setMinus(a, b []runeRange) []runeRange { return setNot(setUnion(setNot(a), b)) }

// setHas reports whether r is in a.
func setHas(a []runeRange, r rune) bool {
	for _, x := range a {
		if x.lo <= r && r <= x.hi {
			return true
		}
	}
	return false
}

// jsonSpecial are the characters a JSON string must escape (and DEL, which
// llama.cpp's string rule escapes too); jsonRaw the others.
var (
	jsonSpecial = []runeRange{{0, 0x1F}, {'"', '"'}, {'\\', '\\'}, {0x7F, 0x7F}}
	jsonRaw     = setNot(jsonSpecial)
)

// classChar writes r inside a GBNF class.
func classChar(r rune) string {
	switch {
	case r == '\\' || r == ']' || r == '[' || r == '-' || r == '"':
		return `\` + string(r)
	case r == '^':
		return `\x5E`
	case r < 0x20 || r == 0x7F:
		return fmt.Sprintf(`\x%02X`, r)
	case r >= 0x80 && !unicode.IsPrint(r) && r <= 0xFFFF:
		return fmt.Sprintf(`\u%04X`, r)
	case r >= 0x80 && !unicode.IsPrint(r):
		return fmt.Sprintf(`\U%08X`, r)
	}
	return string(r)
}

// gbnfClass writes a non-empty set as one GBNF item: a literal for one
// character, else a class, or a negated class when that is shorter.
func gbnfClass(s []runeRange) string {
	if len(s) == 1 && s[0].lo == s[0].hi {
		return QuoteGBNF(string(s[0].lo))
	}
	write := func(s []runeRange, neg bool) string {
		var b strings.Builder
		b.WriteByte('[')
		if neg {
			b.WriteByte('^')
		}
		for _, r := range s {
			b.WriteString(classChar(r.lo))
			if r.hi > r.lo {
				if r.hi > r.lo+1 {
					b.WriteByte('-')
				}
				b.WriteString(classChar(r.hi))
			}
		}
		b.WriteByte(']')
		return b.String()
	}
	pos := write(s, false)
	if neg := setNot(s); len(neg) > 0 && len(neg) < len(s) {
		return write(neg, true)
	}
	return pos
}

// jsonChars is a GBNF expression for one character of the set s inside a
// JSON string: itself where JSON writes it bare, else its escape. The
// expression is an item, or an alternation in parentheses; "" when s is
// empty.
func jsonChars(s []runeRange) string {
	var alts []string
	if raw := setMinus(s, jsonSpecial); len(raw) > 0 {
		alts = append(alts, gbnfClass(raw))
	}
	// Short escapes, then \u00XX for the control characters.
	var short []rune
	for r, c := range map[rune]rune{'"': '"', '\\': '\\', '\b': 'b', '\f': 'f', '\n': 'n', '\r': 'r', '\t': 't'} {
		if setHas(s, r) {
			short = append(short, c)
		}
	}
	slices.Sort(short)
	if len(short) > 0 {
		alts = append(alts, `"\\" `+gbnfClass(runeSet(short...)))
	}
	// \u00XX for the control characters (and \u007F), its hex digits in
	// either case.
	for _, hi := range []rune{0, 1} {
		var lows []runeRange
		for lo := rune(0); lo < 16; lo++ {
			if !setHas(s, hi<<4|lo) {
				continue
			}
			d := rune('0' + lo)
			if lo >= 10 {
				lows = setUnion(lows, runeSet('a'+lo-10, 'A'+lo-10))
				continue
			}
			lows = setUnion(lows, runeSet(d))
		}
		if lows != nil {
			alts = append(alts, `"\\u00`+string('0'+hi)+`" `+gbnfClass(lows))
		}
	}
	if setHas(s, 0x7F) {
		alts = append(alts, `"\\u007" [fF]`)
	}
	switch len(alts) {
	case 0:
		return ""
	case 1:
		if isAtom(alts[0]) {
			return alts[0]
		}
	}
	return "( " + strings.Join(alts, " | ") + " )"
}

// Integers: at most 16 digits where a schema leaves a side open, as
// llama.cpp's integer rule.
const maxInt16 = 9999999999999999

// intBounds reads an integer schema's bounds, within ±maxInt16.
func intBounds(o *object, at string) (lo, hi int64, err error) {
	lo, hi = -maxInt16, maxInt16
	read := func(k string) (float64, bool, error) {
		v, ok := o.m[k]
		if !ok {
			return 0, false, nil
		}
		var f float64
		if err := json.Unmarshal(v, &f); err != nil {
			return 0, false, fmt.Errorf("grammar: %s.%s: a number", at, k)
		}
		return f, true, nil
	}
	clamp := func(f float64) int64 { return int64(max(-maxInt16, min(maxInt16, f))) }
	for _, k := range []string{"minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum"} {
		f, ok, err := read(k)
		if err != nil {
			return 0, 0, err
		}
		if !ok {
			continue
		}
		switch k {
		case "minimum":
			lo = max(lo, clamp(math.Ceil(f)))
		case "exclusiveMinimum":
			lo = max(lo, clamp(math.Floor(f)+1))
		case "maximum":
			hi = min(hi, clamp(math.Floor(f)))
		case "exclusiveMaximum":
			hi = min(hi, clamp(math.Ceil(f)-1))
		}
	}
	if lo > hi {
		return 0, 0, fmt.Errorf("grammar: %s: no integer lies between the bounds", at)
	}
	return lo, hi, nil
}

// intRange is an expression for the integers lo ≤ n ≤ hi written as JSON
// writes them: no leading zeros; -0 where 0 is in the range, as in
// llama.cpp (and in JSON, whose -0 is 0).
func intRange(lo, hi int64) string {
	var alts []string
	if lo < 0 {
		alts = append(alts, `"-" `+group(natRange(max(0, -hi), -lo)))
	}
	if hi >= 0 {
		alts = append(alts, natRange(max(0, lo), hi))
	}
	return strings.Join(alts, " | ")
}

// group parenthesises an alternation.
func group(x string) string {
	if isAtom(x) || !strings.Contains(x, " | ") {
		return x
	}
	return "( " + x + " )"
}

// natRange is the naturals lo ≤ n ≤ hi, by their number of digits.
func natRange(lo, hi int64) string {
	var alts []string
	for d := len(strconv.FormatInt(lo, 10)); d <= len(strconv.FormatInt(hi, 10)); d++ {
		first, last := int64(math.Pow10(d-1)), int64(math.Pow10(d))-1
		if d == 1 {
			first = 0
		}
		a, b := max(lo, first), min(hi, last)
		alts = append(alts, digitsRange(strconv.FormatInt(a, 10), strconv.FormatInt(b, 10)))
	}
	return strings.Join(alts, " | ")
}

// digitsRange is the digit strings from a to b, both of one length.
func digitsRange(a, b string) string {
	if a == b {
		return QuoteGBNF(a)
	}
	i := 0
	for a[i] == b[i] {
		i++
	}
	prefix := ""
	if i > 0 {
		prefix = QuoteGBNF(a[:i]) + " "
	}
	x, y, ra, rb := a[i], b[i], a[i+1:], b[i+1:]
	n := len(ra)
	if n == 0 {
		return prefix + fmt.Sprintf("[%c-%c]", x, y)
	}
	zeros, nines := strings.Repeat("0", n), strings.Repeat("9", n)
	anyDigits := "[0-9]"
	if n > 1 {
		anyDigits = fmt.Sprintf("[0-9]{%d}", n)
	}
	var alts []string
	lo, hi := x, y // the first digits free in what follows
	if ra != zeros {
		alts = append(alts, fmt.Sprintf("%q ", string(x))+group(digitsRange(ra, nines)))
		lo = x + 1
	}
	if rb != nines {
		hi = y - 1
	}
	if lo <= hi {
		d := fmt.Sprintf("[%c-%c]", lo, hi)
		if lo == hi {
			d = fmt.Sprintf("%q", string(lo))
		}
		alts = append(alts, d+" "+anyDigits)
	}
	if rb != nines {
		alts = append(alts, fmt.Sprintf("%q ", string(y))+group(digitsRange(zeros, rb)))
	}
	return prefix + group(strings.Join(alts, " | "))
}
