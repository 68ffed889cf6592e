// builtins.go: the filters, tests, methods and global functions chat
// templates use.

package chat

import (
	"fmt"
	"html"
	"slices"
	"strings"
	"time"
	"unicode"
)

// applyFilter is x | name(args).
func applyFilter(name string, x any, args []any, kwargs *Dict) (any, error) {
	arg := func(i int, key string, def any) any {
		if v, ok := kwargs.Get(key); ok {
			return v
		}
		if i < len(args) {
			return args[i]
		}
		return def
	}
	switch name {
	case "trim":
		s, err := asString(name, x)
		return strings.TrimSpace(s), err
	case "upper", "lower", "title", "capitalize":
		s, err := asString(name, x)
		if err != nil {
			return nil, err
		}
		return stringMethod(s, name)(nil, nil)
	case "length", "count":
		return length(x)
	case "string":
		return str(x), nil
	case "safe", "list":
		if name == "list" {
			return iterate(x)
		}
		return x, nil
	case "escape", "e":
		return html.EscapeString(str(x)), nil
	case "tojson":
		indent := ""
		if n, ok := arg(0, "indent", nil).(int); ok {
			indent = strings.Repeat(" ", n)
		}
		return toJSON(x, indent, 0)
	case "items":
		d, ok := x.(*Dict)
		if !ok {
			return nil, fmt.Errorf("items: want a dict, got %s", typeName(x))
		}
		return dictMethod(d, "items")(nil, nil)
	case "first", "last":
		l, err := iterate(x)
		if err != nil || len(l) == 0 {
			return Undefined{name}, err
		}
		if name == "first" {
			return l[0], nil
		}
		return l[len(l)-1], nil
	case "default", "d":
		if _, undef := x.(Undefined); undef || truth(arg(1, "boolean", false)) && !truth(x) {
			return arg(0, "default_value", ""), nil
		}
		return x, nil
	case "join":
		l, err := iterate(x)
		if err != nil {
			return nil, err
		}
		parts := make([]string, len(l))
		for i, v := range l {
			parts[i] = str(v)
		}
		return strings.Join(parts, str(arg(0, "d", ""))), nil
	case "replace":
		s, err := asString(name, x)
		return strings.ReplaceAll(s, str(arg(0, "old", "")), str(arg(1, "new", ""))), err
	case "int":
		switch v := x.(type) {
		case int:
			return v, nil
		case float64:
			return int(v), nil
		case string:
			var n int
			if _, err := fmt.Sscan(strings.TrimSpace(v), &n); err == nil {
				return n, nil
			}
		}
		return arg(0, "default", 0), nil
	case "float":
		if f, ok := number(x); ok {
			return f, nil
		}
		return arg(0, "default", 0.0), nil
	case "abs":
		switch v := x.(type) {
		case int:
			return max(v, -v), nil
		case float64:
			return max(v, -v), nil
		}
		return nil, fmt.Errorf("abs: want a number, got %s", typeName(x))
	case "reverse":
		if s, ok := x.(string); ok {
			r := []rune(s)
			slices.Reverse(r)
			return string(r), nil
		}
		l, err := iterate(x)
		l = slices.Clone(l)
		slices.Reverse(l)
		return l, err
	case "unique":
		l, err := iterate(x)
		var out []any
		for _, v := range l {
			if !slices.ContainsFunc(out, func(u any) bool { return equal(u, v) }) {
				out = append(out, v)
			}
		}
		return out, err
	case "select", "reject", "selectattr", "rejectattr":
		return selectItems(name, x, args)
	case "map":
		l, err := iterate(x)
		if err != nil {
			return nil, err
		}
		out := make([]any, len(l))
		for i, v := range l {
			if attr, ok := kwargs.Get("attribute"); ok {
				if out[i], err = getAttr(v, str(attr)); err != nil {
					return nil, err
				}
				continue
			}
			if len(args) == 0 {
				return nil, fmt.Errorf("map: want a filter name or attribute=")
			}
			if out[i], err = applyFilter(str(args[0]), v, args[1:], NewDict()); err != nil {
				return nil, err
			}
		}
		return out, nil
	case "indent":
		s, err := asString(name, x)
		width := 4
		if n, ok := arg(0, "width", 4).(int); ok {
			width = n
		}
		pad := strings.Repeat(" ", width)
		lines := strings.Split(s, "\n")
		for i := 1; i < len(lines); i++ {
			if lines[i] != "" || truth(arg(2, "blank", false)) {
				lines[i] = pad + lines[i]
			}
		}
		if truth(arg(1, "first", false)) {
			lines[0] = pad + lines[0]
		}
		return strings.Join(lines, "\n"), err
	}
	return nil, fmt.Errorf("unknown filter %q", name)
}

func asString(op string, x any) (string, error) {
	if s, ok := x.(string); ok {
		return s, nil
	}
	if u, ok := x.(Undefined); ok {
		return "", fmt.Errorf("%s: '%s' is undefined", op, u.Name)
	}
	return str(x), nil
}

func length(x any) (any, error) {
	switch v := x.(type) {
	case string:
		return len([]rune(v)), nil
	case []any:
		return len(v), nil
	case *Dict:
		return v.Len(), nil
	}
	return nil, fmt.Errorf("length: %s has no length", typeName(x))
}

// selectItems is select/reject (test on the item) and selectattr/rejectattr
// (test on one of its attributes).
func selectItems(name string, x any, args []any) (any, error) {
	l, err := iterate(x)
	if err != nil {
		return nil, err
	}
	attr := strings.HasSuffix(name, "attr")
	keep := strings.HasPrefix(name, "select")
	if attr && len(args) == 0 {
		return nil, fmt.Errorf("%s: want an attribute name", name)
	}
	out := []any{}
	for _, v := range l {
		subject, rest := v, args
		if attr {
			if subject, err = getAttr(v, str(args[0])); err != nil {
				return nil, err
			}
			rest = args[1:]
		}
		var ok bool
		if len(rest) == 0 {
			ok = truth(subject)
		} else if ok, err = applyTest(str(rest[0]), subject, rest[1:]); err != nil {
			return nil, err
		}
		if ok == keep {
			out = append(out, v)
		}
	}
	return out, nil
}

// applyTest is x is name(args).
func applyTest(name string, x any, args []any) (bool, error) {
	arg := func() (any, error) {
		if len(args) == 0 {
			return nil, fmt.Errorf("test %s needs an argument", name)
		}
		return args[0], nil
	}
	switch name {
	case "defined":
		_, undef := x.(Undefined)
		return !undef, nil
	case "undefined":
		_, undef := x.(Undefined)
		return undef, nil
	case "none":
		return x == nil, nil
	case "string":
		_, ok := x.(string)
		return ok, nil
	case "number":
		_, isBool := x.(bool)
		_, ok := number(x)
		return ok && !isBool, nil
	case "integer":
		_, ok := x.(int)
		return ok, nil
	case "float":
		_, ok := x.(float64)
		return ok, nil
	case "boolean":
		_, ok := x.(bool)
		return ok, nil
	case "true", "false":
		b, ok := x.(bool)
		return ok && b == (name == "true"), nil
	case "mapping":
		_, ok := x.(*Dict)
		return ok, nil
	case "iterable", "sequence":
		switch x.(type) {
		case string, []any, *Dict:
			return true, nil
		}
		return false, nil
	case "callable":
		_, ok := x.(Func)
		return ok, nil
	case "lower", "upper":
		s, ok := x.(string)
		return ok && s == stringCase(s, name), nil
	case "odd", "even":
		n, ok := x.(int)
		return ok && (n%2 != 0) == (name == "odd"), nil
	case "divisibleby":
		a, err := arg()
		n, ok1 := x.(int)
		d, ok2 := a.(int)
		return ok1 && ok2 && d != 0 && n%d == 0, err
	case "equalto", "eq", "==", "sameas":
		a, err := arg()
		return equal(x, a), err
	case "ne", "!=":
		a, err := arg()
		return !equal(x, a), err
	case "gt", "ge", "lt", "le", ">", ">=", "<", "<=":
		a, err := arg()
		if err != nil {
			return false, err
		}
		c, err := compare(x, a)
		return map[string]bool{"gt": c > 0, ">": c > 0, "ge": c >= 0, ">=": c >= 0, "lt": c < 0, "<": c < 0, "le": c <= 0, "<=": c <= 0}[name], err
	case "in":
		a, err := arg()
		if err != nil {
			return false, err
		}
		return contains(a, x)
	}
	return false, fmt.Errorf("unknown test %q", name)
}

func stringCase(s, name string) string {
	if name == "upper" {
		return strings.ToUpper(s)
	}
	return strings.ToLower(s)
}

// stringMethod returns the bound method s.name, or nil.
func stringMethod(s, name string) Func {
	strArg := func(args []any, i int) (string, bool) {
		if i < len(args) && args[i] != nil {
			return str(args[i]), true
		}
		return "", false
	}
	strip := func(trim func(string, string) string, trimSpace func(string) string) Func {
		return func(args []any, _ *Dict) (any, error) {
			if chars, ok := strArg(args, 0); ok {
				return trim(s, chars), nil
			}
			return trimSpace(s), nil
		}
	}
	affix := func(has func(string, string) bool) Func {
		return func(args []any, _ *Dict) (any, error) {
			if len(args) == 0 {
				return nil, fmt.Errorf("%s() needs an argument", name)
			}
			if l, ok := args[0].([]any); ok { // a tuple of choices
				return slices.ContainsFunc(l, func(v any) bool { return has(s, str(v)) }), nil
			}
			return has(s, str(args[0])), nil
		}
	}
	switch name {
	case "strip":
		return strip(strings.Trim, strings.TrimSpace)
	case "lstrip":
		return strip(strings.TrimLeft, func(s string) string { return strings.TrimLeftFunc(s, unicode.IsSpace) })
	case "rstrip":
		return strip(strings.TrimRight, func(s string) string { return strings.TrimRightFunc(s, unicode.IsSpace) })
	case "startswith":
		return affix(strings.HasPrefix)
	case "endswith":
		return affix(strings.HasSuffix)
	case "upper":
		return func([]any, *Dict) (any, error) { return strings.ToUpper(s), nil }
	case "lower":
		return func([]any, *Dict) (any, error) { return strings.ToLower(s), nil }
	case "title":
		return func([]any, *Dict) (any, error) { return title(s), nil }
	case "capitalize":
		return func([]any, *Dict) (any, error) {
			r := []rune(strings.ToLower(s))
			if len(r) > 0 {
				r[0] = unicode.ToUpper(r[0])
			}
			return string(r), nil
		}
	case "split":
		return func(args []any, kwargs *Dict) (any, error) {
			n := -1
			if m, ok := kwargs.Get("maxsplit"); ok {
				n, _ = m.(int)
			} else if len(args) > 1 {
				n, _ = args[1].(int)
			}
			var parts []string
			if sep, ok := strArg(args, 0); ok {
				if sep == "" {
					return nil, fmt.Errorf("split: empty separator")
				}
				if n >= 0 {
					n++
				}
				parts = strings.SplitN(s, sep, n)
			} else {
				parts = strings.Fields(s) // maxsplit without a separator is rare; not handled
			}
			out := make([]any, len(parts))
			for i, p := range parts {
				out[i] = p
			}
			return out, nil
		}
	case "replace":
		return func(args []any, _ *Dict) (any, error) {
			if len(args) < 2 {
				return nil, fmt.Errorf("replace() needs two arguments")
			}
			n := -1
			if len(args) > 2 {
				n, _ = args[2].(int)
			}
			return strings.Replace(s, str(args[0]), str(args[1]), n), nil
		}
	case "find":
		return func(args []any, _ *Dict) (any, error) {
			sub, _ := strArg(args, 0)
			i := strings.Index(s, sub)
			if i < 0 {
				return -1, nil
			}
			return len([]rune(s[:i])), nil
		}
	case "count":
		return func(args []any, _ *Dict) (any, error) {
			sub, _ := strArg(args, 0)
			return strings.Count(s, sub), nil
		}
	case "join":
		return func(args []any, _ *Dict) (any, error) {
			if len(args) == 0 {
				return nil, fmt.Errorf("join() needs an argument")
			}
			return applyFilter("join", args[0], []any{s}, NewDict())
		}
	}
	return nil
}

// title is Python's str.title: each run of letters starts upper case.
func title(s string) string {
	r := []rune(s)
	prev := false
	for i, c := range r {
		if prev {
			r[i] = unicode.ToLower(c)
		} else {
			r[i] = unicode.ToUpper(c)
		}
		prev = unicode.IsLetter(c)
	}
	return string(r)
}

// dictMethod returns the bound method d.name, or nil.
func dictMethod(d *Dict, name string) Func {
	switch name {
	case "get":
		return func(args []any, _ *Dict) (any, error) {
			if len(args) == 0 {
				return nil, fmt.Errorf("get() needs a key")
			}
			if v, ok := d.Get(str(args[0])); ok {
				return v, nil
			}
			if len(args) > 1 {
				return args[1], nil
			}
			return nil, nil
		}
	case "items", "keys", "values":
		return func([]any, *Dict) (any, error) {
			out := make([]any, 0, d.Len())
			for _, k := range d.Keys() {
				switch name {
				case "items":
					out = append(out, []any{k, d.m[k]})
				case "keys":
					out = append(out, k)
				default:
					out = append(out, d.m[k])
				}
			}
			return out, nil
		}
	}
	return nil
}

// listMethod returns the bound method l.name, or nil. Lists are immutable
// in the sandbox, as in transformers: no append.
func listMethod(l []any, name string) Func {
	switch name {
	case "index":
		return func(args []any, _ *Dict) (any, error) {
			for i, v := range l {
				if len(args) > 0 && equal(v, args[0]) {
					return i, nil
				}
			}
			return nil, fmt.Errorf("index: value not in list")
		}
	case "count":
		return func(args []any, _ *Dict) (any, error) {
			n := 0
			for _, v := range l {
				if len(args) > 0 && equal(v, args[0]) {
					n++
				}
			}
			return n, nil
		}
	}
	return nil
}

// globals are the functions every template sees.
func globals(now func() time.Time) map[string]any {
	return map[string]any{
		"raise_exception": Func(func(args []any, _ *Dict) (any, error) {
			msg := ""
			if len(args) > 0 {
				msg = str(args[0])
			}
			return nil, &TemplateError{Message: msg}
		}),
		"namespace": Func(func(args []any, kwargs *Dict) (any, error) {
			ns := namespace{NewDict()}
			for _, a := range args {
				if d, ok := a.(*Dict); ok {
					for _, k := range d.Keys() {
						ns.Set(k, d.m[k])
					}
				}
			}
			for _, k := range kwargs.Keys() {
				ns.Set(k, kwargs.m[k])
			}
			return ns, nil
		}),
		"dict": Func(func(_ []any, kwargs *Dict) (any, error) {
			d := NewDict()
			for _, k := range kwargs.Keys() {
				d.Set(k, kwargs.m[k])
			}
			return d, nil
		}),
		"range": Func(func(args []any, _ *Dict) (any, error) {
			var b [3]int
			b[2] = 1
			for i, a := range args {
				n, ok := a.(int)
				if !ok || i > 2 {
					return nil, fmt.Errorf("range: want up to three integers")
				}
				b[i] = n
			}
			start, stop, step := b[0], b[1], b[2]
			if len(args) == 1 {
				start, stop = 0, b[0]
			}
			if step == 0 {
				return nil, fmt.Errorf("range: step cannot be zero")
			}
			out := []any{}
			for i := start; (step > 0 && i < stop) || (step < 0 && i > stop); i += step {
				if len(out) >= 1<<20 {
					return nil, fmt.Errorf("range: too long")
				}
				out = append(out, i)
			}
			return out, nil
		}),
		"strftime_now": Func(func(args []any, _ *Dict) (any, error) {
			if len(args) == 0 {
				return nil, fmt.Errorf("strftime_now needs a format")
			}
			return strftime(now(), str(args[0])), nil
		}),
	}
}

// strftime formats t with the C directives chat templates use (%d %b %Y …).
func strftime(t time.Time, format string) string {
	r := strings.NewReplacer("%d", "02", "%m", "01", "%Y", "2006", "%y", "06", "%b", "Jan", "%B", "January",
		"%a", "Mon", "%A", "Monday", "%H", "15", "%M", "04", "%S", "05", "%p", "PM", "%%", "%")
	// Replace the directives with Go's layout, escaping nothing else: the
	// formats chat templates use have no digits or month names outside them.
	return t.Format(r.Replace(format))
}
