// value.go: the values templates compute with, as Python (Jinja2's host)
// treats them: truth, equality, order, str() and JSON.

package chat

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf16"
)

// Values are Go values of these types:
//
//	nil        none
//	Undefined  a name or key that does not exist
//	bool, int, float64, string
//	[]any      a list (or tuple)
//	*Dict      a dict, keys in insertion order (messages, tool schemas, namespace())
//	Func       a callable: raise_exception, a bound string method, a macro
type (
	// Undefined is the value of a missing variable, attribute or key: false,
	// empty when printed, an error when used further.
	Undefined struct{ Name string }

	// generator is what Jinja2's map, select, reject, selectattr,
	// rejectattr, unique and reverse return: a Python iterator, which a loop,
	// join, first or list can consume but which has no length, no index and
	// no JSON form (tojson refuses it, as in Python).
	generator struct{ items []any }

	// markup is markupsafe's Markup, what the safe filter returns: a string
	// that adding a plain string to escapes that string (Functionary's
	// "…"|safe + name). Everything else sees it as the string.
	markup string

	// tuple is a Python tuple: (a, b), dict items, str.partition. It prints
	// as ('a', 1); everything else sees the list of its items.
	tuple struct{ items []any }

	// Func is a callable value.
	Func func(args []any, kwargs *Dict) (any, error)
)

// Dict is a dictionary that keeps its keys in insertion order, as Python's.
type Dict struct {
	keys []string
	m    map[string]any
	nums map[string]any // a key that a template wrote as a number ({0: …}), by its text
}

// NewDict returns an empty Dict.
func NewDict() *Dict { return &Dict{m: map[string]any{}} }

// Set sets key to v, keeping the key's first position.
func (d *Dict) Set(key string, v any) *Dict {
	if _, ok := d.m[key]; !ok {
		d.keys = append(d.keys, key)
	}
	d.m[key] = v
	return d
}

// setKey is d[k] = v for a key of any type: a number keeps its type for
// iteration, items and dictsort (Seed-OSS's {0: 0, 512: 128} | dictsort),
// and is looked up by its text.
func (d *Dict) setKey(k, v any) {
	s := str(k)
	if _, isStr := k.(string); !isStr {
		if d.nums == nil {
			d.nums = map[string]any{}
		}
		d.nums[s] = k
	}
	d.Set(s, v)
}

// key is the key named s as the template wrote it.
func (d *Dict) key(s string) any {
	if k, ok := d.nums[s]; ok {
		return k
	}
	return s
}

// plain is v with a markup string as the string.
func plain(v any) any {
	switch v := v.(type) {
	case markup:
		return string(v)
	case tuple:
		return v.items
	}
	return v
}

// escape is markupsafe's escape: a markup string as it is, anything else's
// text with & < > ' " as entities.
func escape(v any) markup {
	if m, ok := v.(markup); ok {
		return m
	}
	r := strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", "'", "&#39;", "\"", "&#34;")
	return markup(r.Replace(str(v)))
}

// Get returns the value of key and whether it is present.
func (d *Dict) Get(key string) (any, bool) {
	if d == nil {
		return nil, false
	}
	v, ok := d.m[key]
	return v, ok
}

// Keys returns the keys in insertion order.
func (d *Dict) Keys() []string {
	if d == nil {
		return nil
	}
	return d.keys
}

// Len is the number of keys.
func (d *Dict) Len() int { return len(d.Keys()) }

// namespace marks a Dict made by namespace(): its attributes can be set.
type namespace struct{ *Dict }

func truth(v any) bool {
	v = plain(v)
	switch v := v.(type) {
	case nil, Undefined:
		return false
	case bool:
		return v
	case int:
		return v != 0
	case float64:
		return v != 0
	case string:
		return v != ""
	case []any:
		return len(v) > 0
	case *Dict:
		return v.Len() > 0
	case namespace:
		return true
	}
	return true
}

// str is Python's str(v), which {{ v }} prints; undefined prints nothing.
func str(v any) string {
	if _, ok := v.(tuple); ok {
		return repr(v)
	}
	v = plain(v)
	switch v := v.(type) {
	case Undefined:
		return ""
	case string:
		return v
	}
	return repr(v)
}

// repr is Python's repr(v): strings quoted, None, True, lists and dicts.
func repr(v any) string {
	if t, ok := v.(tuple); ok {
		parts := make([]string, len(t.items))
		for i, x := range t.items {
			parts[i] = repr(x)
		}
		if len(parts) == 1 {
			return "(" + parts[0] + ",)"
		}
		return "(" + strings.Join(parts, ", ") + ")"
	}
	v = plain(v)
	switch v := v.(type) {
	case nil:
		return "None"
	case Undefined:
		return "Undefined"
	case bool:
		if v {
			return "True"
		}
		return "False"
	case int:
		return strconv.Itoa(v)
	case float64:
		return formatFloat(v)
	case string:
		q := "'"
		if strings.Contains(v, "'") && !strings.Contains(v, `"`) {
			q = `"`
		}
		r := strings.NewReplacer(`\`, `\\`, "\n", `\n`, "\r", `\r`, "\t", `\t`, q, `\`+q)
		return q + r.Replace(v) + q
	case []any:
		parts := make([]string, len(v))
		for i, x := range v {
			parts[i] = repr(x)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case *Dict:
		parts := make([]string, 0, v.Len())
		for _, k := range v.Keys() {
			parts = append(parts, repr(v.key(k))+": "+repr(v.m[k]))
		}
		return "{" + strings.Join(parts, ", ") + "}"
	case namespace:
		return "<Namespace>"
	case Func:
		return "<function>"
	}
	return fmt.Sprint(v)
}

// formatFloat writes f as Python does: 1.0, 0.5, 1e+20.
func formatFloat(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	case math.IsNaN(f):
		return "nan"
	}
	if f == math.Trunc(f) && math.Abs(f) < 1e16 {
		return strconv.FormatFloat(f, 'f', 1, 64)
	}
	s := strconv.FormatFloat(f, 'g', -1, 64)
	if i := strings.IndexByte(s, 'e'); i >= 0 && len(s) > i+2 && s[i+2] >= '0' && s[i+2] <= '9' && len(s) == i+3 {
		s = s[:i+2] + "0" + s[i+2:] // e+5 → e+05
	}
	return s
}

// number returns v as a float64 and whether it is a number (bools count, as in Python).
func number(v any) (float64, bool) {
	switch v := v.(type) {
	case int:
		return float64(v), true
	case float64:
		return v, true
	case bool:
		if v {
			return 1, true
		}
		return 0, true
	}
	return 0, false
}

// equal is Python's ==.
func equal(a, b any) bool {
	a, b = plain(a), plain(b)
	if x, ok := number(a); ok {
		y, ok := number(b)
		return ok && x == y
	}
	switch a := a.(type) {
	case nil:
		return b == nil
	case Undefined:
		_, ok := b.(Undefined)
		return ok
	case string:
		s, ok := b.(string)
		return ok && a == s
	case []any:
		l, ok := b.([]any)
		return ok && slices.EqualFunc(a, l, equal)
	case *Dict:
		d, ok := b.(*Dict)
		if !ok || a.Len() != d.Len() {
			return false
		}
		for _, k := range a.Keys() {
			if y, ok := d.m[k]; !ok || !equal(a.m[k], y) {
				return false
			}
		}
		return true
	}
	return false
}

// compare orders numbers with numbers and strings with strings.
func compare(a, b any) (int, error) {
	a, b = plain(a), plain(b)
	if x, ok := number(a); ok {
		if y, ok := number(b); ok {
			switch {
			case x < y:
				return -1, nil
			case x > y:
				return 1, nil
			}
			return 0, nil
		}
	}
	if x, ok := a.(string); ok {
		if y, ok := b.(string); ok {
			return strings.Compare(x, y), nil
		}
	}
	return 0, fmt.Errorf("cannot compare %s with %s", typeName(a), typeName(b))
}

func typeName(v any) string {
	v = plain(v)
	switch v.(type) {
	case nil:
		return "none"
	case Undefined:
		return "undefined"
	case bool:
		return "bool"
	case int:
		return "int"
	case float64:
		return "float"
	case string:
		return "string"
	case []any:
		return "list"
	case *Dict:
		return "dict"
	case namespace:
		return "namespace"
	case generator:
		return "generator"
	case Func:
		return "function"
	}
	return fmt.Sprintf("%T", v)
}

// jsonOpts are json.dumps' arguments as transformers' tojson filter passes
// them: ensure_ascii (default false), indent, separators and sort_keys.
type jsonOpts struct {
	indent        *string // nil: all on one line
	item, key     string  // separators: ", " and ": " (with an indent "," and ": ")
	ascii, sorted bool
}

// toJSON is Python's json.dumps(v, ensure_ascii, indent, separators,
// sort_keys), what transformers' tojson filter calls.
func toJSON(v any, o jsonOpts, depth int) (string, error) {
	v = plain(v)
	nl := func(d int) string {
		if o.indent == nil {
			return ""
		}
		return "\n" + strings.Repeat(*o.indent, d)
	}
	switch v := v.(type) {
	case nil:
		return "null", nil
	case bool:
		return strconv.FormatBool(v), nil
	case int:
		return strconv.Itoa(v), nil
	case float64:
		if math.IsInf(v, 0) || math.IsNaN(v) {
			if math.IsNaN(v) {
				return "NaN", nil
			}
			return map[bool]string{true: "Infinity", false: "-Infinity"}[v > 0], nil
		}
		return formatFloat(v), nil
	case string:
		return jsonString(v, o.ascii), nil
	case []any:
		if len(v) == 0 {
			return "[]", nil
		}
		var b strings.Builder
		b.WriteString("[")
		for i, x := range v {
			if i > 0 {
				b.WriteString(o.item)
			}
			b.WriteString(nl(depth + 1))
			s, err := toJSON(x, o, depth+1)
			if err != nil {
				return "", err
			}
			b.WriteString(s)
		}
		b.WriteString(nl(depth) + "]")
		return b.String(), nil
	case *Dict:
		if v.Len() == 0 {
			return "{}", nil
		}
		keys := v.Keys()
		if o.sorted {
			keys = slices.Sorted(slices.Values(keys))
		}
		var b strings.Builder
		b.WriteString("{")
		for i, k := range keys {
			if i > 0 {
				b.WriteString(o.item)
			}
			b.WriteString(nl(depth+1) + jsonString(k, o.ascii) + o.key)
			s, err := toJSON(v.m[k], o, depth+1)
			if err != nil {
				return "", err
			}
			b.WriteString(s)
		}
		b.WriteString(nl(depth) + "}")
		return b.String(), nil
	case namespace:
		return "", fmt.Errorf("tojson: Object of type Namespace is not JSON serializable")
	}
	return "", fmt.Errorf("tojson: Object of type %s is not JSON serializable", typeName(v))
}

// jsonString quotes s as Python's json.dumps does: with ensure_ascii every
// rune past ASCII as \uXXXX (UTF-16 surrogate pairs past the BMP).
func jsonString(s string, ascii bool) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		default:
			switch {
			case r < 0x20 || ascii && r >= 0x7f && r <= 0xffff:
				fmt.Fprintf(&b, `\u%04x`, r)
			case ascii && r > 0xffff:
				r1, r2 := utf16.EncodeRune(r)
				fmt.Fprintf(&b, `\u%04x\u%04x`, r1, r2)
			default:
				b.WriteRune(r)
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}

// FromJSON decodes JSON into template values, objects as *Dict in their
// key order, integers as int and other numbers as float64.
func FromJSON(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := decodeValue(dec)
	if err != nil {
		return nil, fmt.Errorf("chat: decode JSON: %w", err)
	}
	return v, nil
}

func decodeValue(dec *json.Decoder) (any, error) {
	t, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := t.(type) {
	case json.Delim:
		switch t {
		case '[':
			l := []any{}
			for dec.More() {
				v, err := decodeValue(dec)
				if err != nil {
					return nil, err
				}
				l = append(l, v)
			}
			_, err := dec.Token()
			return l, err
		case '{':
			d := NewDict()
			for dec.More() {
				k, err := dec.Token()
				if err != nil {
					return nil, err
				}
				v, err := decodeValue(dec)
				if err != nil {
					return nil, err
				}
				d.Set(k.(string), v)
			}
			_, err := dec.Token()
			return d, err
		}
	case json.Number:
		if i, err := strconv.Atoi(string(t)); err == nil {
			return i, nil
		}
		return t.Float64()
	}
	return t, nil // string, bool, nil
}
