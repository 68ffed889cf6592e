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

	// Func is a callable value.
	Func func(args []any, kwargs *Dict) (any, error)
)

// Dict is a dictionary that keeps its keys in insertion order, as Python's.
type Dict struct {
	keys []string
	m    map[string]any
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
	switch v := v.(type) {
	case nil:
		return "None"
	case Undefined:
		return ""
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
			parts = append(parts, repr(k)+": "+repr(v.m[k]))
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
	case Func:
		return "function"
	}
	return fmt.Sprintf("%T", v)
}

// toJSON is Python's json.dumps(v, ensure_ascii=False, indent=indent), what
// transformers' tojson filter calls: ", " and ": " between items, or with an
// indent one item per line.
func toJSON(v any, indent string, depth int) (string, error) {
	nl := func(d int) string {
		if indent == "" {
			return ""
		}
		return "\n" + strings.Repeat(indent, d)
	}
	sep := ", "
	if indent != "" {
		sep = ","
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
			return map[bool]string{true: "Infinity", false: "-Infinity"}[v > 0], nil
		}
		return formatFloat(v), nil
	case string:
		return jsonString(v), nil
	case []any:
		if len(v) == 0 {
			return "[]", nil
		}
		var b strings.Builder
		b.WriteString("[")
		for i, x := range v {
			if i > 0 {
				b.WriteString(sep)
			}
			b.WriteString(nl(depth + 1))
			s, err := toJSON(x, indent, depth+1)
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
		var b strings.Builder
		b.WriteString("{")
		for i, k := range v.Keys() {
			if i > 0 {
				b.WriteString(sep)
			}
			b.WriteString(nl(depth+1) + jsonString(k) + ": ")
			s, err := toJSON(v.m[k], indent, depth+1)
			if err != nil {
				return "", err
			}
			b.WriteString(s)
		}
		b.WriteString(nl(depth) + "}")
		return b.String(), nil
	case namespace:
		return toJSON(v.Dict, indent, depth)
	}
	return "", fmt.Errorf("tojson: %s is not JSON serializable", typeName(v))
}

// jsonString quotes s as Python's json.dumps with ensure_ascii=False.
func jsonString(s string) string {
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
			if r < 0x20 {
				fmt.Fprintf(&b, `\u%04x`, r)
			} else {
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
