// lex.go: template source → text pieces and tags, with Jinja2's whitespace
// control applied, and the tokens of each tag's expression.

package chat

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode"
)

// tokKind is the kind of an expression token.
type tokKind int

const (
	tokName tokKind = iota
	tokString
	tokInt
	tokFloat
	tokOp // punctuation and operators: == != <= >= // ** < > + - * / % ~ | . , : ( ) [ ] { } =
)

type token struct {
	kind tokKind
	text string // the name, the operator, the decoded string, the number's digits
	line int
}

// itemKind is what one piece of the template is.
type itemKind int

const (
	itemText   itemKind = iota
	itemOutput          // {{ expr }}
	itemStmt            // {% stmt %}
)

type item struct {
	kind itemKind
	text string  // itemText
	toks []token // itemOutput, itemStmt
	line int
}

// lex splits src into items. Whitespace control is Jinja2's as Hugging Face
// sets it up for chat templates (trim_blocks and lstrip_blocks on):
//   - "{%-", "{{-", "{#-" strip all whitespace before the tag, "-%}", "-}}",
//     "-#}" all whitespace after it;
//   - trim_blocks: the first newline after a block tag or comment is removed;
//   - lstrip_blocks: spaces and tabs from the start of a line to a block tag or
//     comment are removed ("{%+" keeps them).
func lex(src string) ([]item, error) {
	var items []item
	line := 1
	lineStarting := true // the text so far ends a line (or is the start)
	for len(src) > 0 {
		i := nextTag(src)
		text := src[:i]
		src = src[i:]
		if len(src) == 0 {
			items = appendText(items, text, line)
			break
		}
		kind := src[1] // '{', '%' or '#'
		src = src[2:]
		sign := byte(0)
		if len(src) > 0 && (src[0] == '-' || src[0] == '+') {
			sign, src = src[0], src[1:]
		}
		// Whitespace before the tag.
		switch {
		case sign == '-':
			text = strings.TrimRightFunc(text, unicode.IsSpace)
		case sign != '+' && kind != '{':
			l := strings.LastIndexByte(text, '\n') + 1
			if (l > 0 || lineStarting) && strings.Trim(text[l:], " \t") == "" {
				text = text[:l]
			}
		}
		items = appendText(items, text, line)
		line += strings.Count(text, "\n")

		var it item
		var rest string
		var rtrim bool
		var err error
		switch kind {
		case '#':
			end := strings.Index(src, "#}")
			if end < 0 {
				return nil, fmt.Errorf("%w: line %d: comment not closed", ErrSyntax, line)
			}
			rtrim = end > 0 && src[end-1] == '-'
			line += strings.Count(src[:end], "\n")
			rest = src[end+2:]
		default:
			it = item{kind: itemOutput, line: line}
			closer := "}}"
			if kind == '%' {
				it.kind, closer = itemStmt, "%}"
			}
			it.toks, rest, rtrim, err = lexExpr(src, closer, &line)
			if err != nil {
				return nil, err
			}
			if kind == '%' && len(it.toks) == 1 && it.toks[0].text == "raw" {
				// {% raw %}…{% endraw %}: the text between as it is.
				switch {
				case rtrim:
					rest = strings.TrimLeftFunc(rest, unicode.IsSpace)
				case strings.HasPrefix(rest, "\n"):
					rest = rest[1:]
				}
				loc := endRaw.FindStringSubmatchIndex(rest)
				if loc == nil {
					return nil, fmt.Errorf("%w: line %d: {%% raw %%} without {%% endraw %%}", ErrSyntax, line)
				}
				body := rest[:loc[0]]
				if loc[3] > loc[2] { // {%- endraw
					body = strings.TrimRightFunc(body, unicode.IsSpace)
				} else if l := strings.LastIndexByte(body, '\n') + 1; strings.Trim(body[l:], " \t") == "" {
					body = body[:l] // lstrip_blocks
				}
				items = appendText(items, body, line)
				line += strings.Count(rest[:loc[1]], "\n")
				rest, rtrim = rest[loc[1]:], loc[5] > loc[4]
				break
			}
			items = append(items, it)
		}
		// Whitespace after the tag.
		lineStarting = false
		switch {
		case rtrim:
			t := strings.TrimLeftFunc(rest, unicode.IsSpace)
			cut := rest[:len(rest)-len(t)]
			line += strings.Count(cut, "\n")
			lineStarting = strings.HasSuffix(cut, "\n")
			rest = t
		case kind != '{' && strings.HasPrefix(rest, "\n"):
			rest, lineStarting = rest[1:], true
			line++
		case kind != '{' && strings.HasPrefix(rest, "\r\n"):
			rest, lineStarting = rest[2:], true
			line++
		}
		src = rest
	}
	return items, nil
}

var (
	endRaw   = regexp.MustCompile(`\{%(-?)\s*endraw\s*(-?)%\}`)
	exponent = regexp.MustCompile(`^[eE][+-]?[0-9][0-9_]*`)
)

func appendText(items []item, text string, line int) []item {
	if text == "" {
		return items
	}
	return append(items, item{kind: itemText, text: text, line: line})
}

// nextTag returns the index of the next "{{", "{%" or "{#", or len(src).
func nextTag(src string) int {
	for i := 0; i+1 < len(src); i++ {
		if src[i] == '{' && (src[i+1] == '{' || src[i+1] == '%' || src[i+1] == '#') {
			return i
		}
	}
	return len(src)
}

// ops lists the operators, longest first.
var ops = []string{"==", "!=", "<=", ">=", "//", "**", "<", ">", "+", "-", "*", "/", "%", "~", "|", ".", ",", ":", "(", ")", "[", "]", "{", "}", "="}

// lexExpr reads tokens from src up to closer ("}}" or "%}", optionally
// preceded by "-") outside brackets, and returns them and what follows.
func lexExpr(src, closer string, line *int) (toks []token, rest string, rtrim bool, err error) {
	depth := 0 // open ( [ {
	i := 0
	for {
		for i < len(src) && (src[i] == ' ' || src[i] == '\t' || src[i] == '\n' || src[i] == '\r') {
			if src[i] == '\n' {
				*line++
			}
			i++
		}
		if i >= len(src) {
			return nil, "", false, fmt.Errorf("%w: line %d: tag not closed with %q", ErrSyntax, *line, closer)
		}
		if depth == 0 {
			if strings.HasPrefix(src[i:], closer) {
				return toks, src[i+2:], false, nil
			}
			if strings.HasPrefix(src[i:], "-"+closer) {
				return toks, src[i+3:], true, nil
			}
		}
		c := src[i]
		switch {
		case c == '"' || c == '\'':
			s, n, err := unquote(src[i:])
			if err != nil {
				return nil, "", false, fmt.Errorf("%w: line %d: %v", ErrSyntax, *line, err)
			}
			*line += strings.Count(src[i:i+n], "\n")
			toks = append(toks, token{tokString, s, *line})
			i += n
		case c >= '0' && c <= '9':
			j := i
			for j < len(src) && (src[j] >= '0' && src[j] <= '9' || src[j] == '_') {
				j++
			}
			kind := tokInt
			if j+1 < len(src) && src[j] == '.' && src[j+1] >= '0' && src[j+1] <= '9' {
				kind = tokFloat
				for j++; j < len(src) && (src[j] >= '0' && src[j] <= '9' || src[j] == '_'); j++ {
				}
			}
			if e := exponent.FindString(src[j:]); e != "" { // 1e-7, 1.5e20
				kind, j = tokFloat, j+len(e)
			}
			toks = append(toks, token{kind, strings.ReplaceAll(src[i:j], "_", ""), *line})
			i = j
		case c == '_' || c < 0x80 && unicode.IsLetter(rune(c)): // ASCII names: a byte ≥ 0x80 starts none (and must not stall the loop)
			j := i
			for j < len(src) && (src[j] == '_' || src[j] < 0x80 && (unicode.IsLetter(rune(src[j])) || unicode.IsDigit(rune(src[j])))) {
				j++
			}
			toks = append(toks, token{tokName, src[i:j], *line})
			i = j
		default:
			op := ""
			for _, o := range ops {
				if strings.HasPrefix(src[i:], o) {
					op = o
					break
				}
			}
			if op == "" {
				return nil, "", false, fmt.Errorf("%w: line %d: unexpected character %q", ErrSyntax, *line, c)
			}
			switch op {
			case "(", "[", "{":
				depth++
			case ")", "]", "}":
				depth--
			}
			toks = append(toks, token{tokOp, op, *line})
			i += len(op)
		}
	}
}

// unquote decodes the string literal at the start of s (Python's escapes:
// \n \t \r \\ \' \" \uXXXX; others kept as written) and returns its length.
func unquote(s string) (string, int, error) {
	q := s[0]
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		c := s[i]
		if c == q {
			return b.String(), i + 1, nil
		}
		if c != '\\' || i+1 >= len(s) {
			b.WriteByte(c)
			continue
		}
		i++
		switch e := s[i]; e {
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case 'r':
			b.WriteByte('\r')
		case '\\', '\'', '"':
			b.WriteByte(e)
		case 'x':
			if i+2 < len(s) {
				if n, err := strconv.ParseUint(s[i+1:i+3], 16, 8); err == nil {
					b.WriteRune(rune(n))
					i += 2
					continue
				}
			}
			b.WriteString(`\x`)
		case 'u':
			var r rune
			if i+4 < len(s) {
				if _, err := fmt.Sscanf(s[i+1:i+5], "%04x", &r); err == nil {
					b.WriteRune(r)
					i += 4
					continue
				}
			}
			b.WriteString(`\u`)
		default:
			b.WriteByte('\\')
			b.WriteByte(e)
		}
	}
	return "", 0, fmt.Errorf("string literal not closed")
}
