// builtins.go: the filters, tests, methods and global functions chat
// templates use.

package chat

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// applyFilter is x | name(args).
func applyFilter(name string, x any, args []any, kwargs *Dict) (any, error) {
	switch name {
	case "safe", "escape", "e", "string", "pprint": // they tell a Markup or a tuple apart
	default:
		x = plain(x)
	}
	for i := range args {
		args[i] = plain(args[i])
	}
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
		if chars := arg(0, "chars", nil); chars != nil {
			return strings.Trim(s, str(chars)), err
		}
		return strings.TrimSpace(s), err
	case "upper", "lower", "title", "capitalize":
		s, err := asString(name, x)
		if err != nil {
			return nil, err
		}
		if name == "title" { // Jinja2's: words start after spaces and -([{<, unlike str.title
			r := []rune(s)
			for i := range r {
				if i == 0 || unicode.IsSpace(r[i-1]) || strings.ContainsRune("-([{<", r[i-1]) {
					r[i] = unicode.ToUpper(r[i])
				} else {
					r[i] = unicode.ToLower(r[i])
				}
			}
			return string(r), nil
		}
		return stringMethod(s, name)(nil, nil)
	case "length", "count":
		return length(x)
	case "string":
		return str(x), nil
	case "list":
		return iterate(x)
	case "safe":
		return markup(str(x)), nil
	case "escape", "e":
		return escape(x), nil
	case "tojson": // transformers' tojson(x, ensure_ascii, indent, separators, sort_keys)
		o := jsonOpts{item: ", ", key: ": ", ascii: truth(arg(0, "ensure_ascii", false)), sorted: truth(arg(3, "sort_keys", false))}
		switch n := arg(1, "indent", nil).(type) {
		case int:
			s := strings.Repeat(" ", max(n, 0))
			o.indent, o.item = &s, ","
		case string:
			o.indent, o.item = &n, ","
		}
		if sep, ok := plain(arg(2, "separators", nil)).([]any); ok && len(sep) == 2 {
			o.item, o.key = str(sep[0]), str(sep[1])
		}
		return toJSON(x, o, 0)
	case "sort": // sort(reverse=false, case_sensitive=false, attribute=none)
		l, err := iterate(x)
		if err != nil {
			return nil, err
		}
		l = slices.Clone(l)
		attr, fold := arg(2, "attribute", nil), !truth(arg(1, "case_sensitive", false))
		var cmpErr error
		keyOf := func(v any) any {
			if attr != nil {
				if v, err = attrGetter(v, str(attr)); err != nil && cmpErr == nil {
					cmpErr = err
				}
			}
			if fold {
				return lowerIfString(v)
			}
			return v
		}
		rev := truth(arg(0, "reverse", false))
		slices.SortStableFunc(l, func(a, b any) int {
			c, err := compare(keyOf(a), keyOf(b))
			if err != nil && cmpErr == nil {
				cmpErr = err
			}
			if rev {
				return -c
			}
			return c
		})
		return l, cmpErr
	case "min", "max":
		l, err := iterate(x)
		if err != nil {
			return nil, err
		}
		if len(l) == 0 {
			return Undefined{name}, nil
		}
		best, bestKey := l[0], any(nil)
		for i, v := range l {
			k := v
			if a := arg(1, "attribute", nil); a != nil {
				if k, err = attrGetter(v, str(a)); err != nil {
					return nil, err
				}
			}
			if !truth(arg(0, "case_sensitive", false)) {
				k = lowerIfString(k)
			}
			if i > 0 {
				c, err := compare(k, bestKey)
				if err != nil {
					return nil, err
				}
				if name == "min" && c >= 0 || name == "max" && c <= 0 {
					continue
				}
			}
			best, bestKey = v, k
		}
		return best, nil
	case "sum":
		l, err := iterate(x)
		if err != nil {
			return nil, err
		}
		total := arg(1, "start", 0)
		for _, v := range l {
			if a := arg(0, "attribute", nil); a != nil {
				if v, err = attrGetter(v, str(a)); err != nil {
					return nil, err
				}
			}
			if total, err = arith("+", total, v); err != nil {
				return nil, err
			}
		}
		return total, nil
	case "round": // round(precision=0, method="common")
		f, ok := number(x)
		if !ok {
			return nil, fmt.Errorf("round: %s is not a number", typeName(x))
		}
		p, _ := arg(0, "precision", 0).(int)
		m := math.Pow(10, float64(p))
		switch str(arg(1, "method", "common")) {
		case "ceil":
			return math.Ceil(f*m) / m, nil
		case "floor":
			return math.Floor(f*m) / m, nil
		}
		return math.RoundToEven(f*m) / m, nil // Python's round
	case "batch", "slice":
		l, err := iterate(x)
		if err != nil {
			return nil, err
		}
		n, _ := arg(0, map[string]string{"batch": "linecount", "slice": "slices"}[name], 1).(int)
		if n <= 0 {
			return nil, fmt.Errorf("%s: want a positive count", name)
		}
		fill, hasFill := kwargs.Get("fill_with")
		if len(args) > 1 {
			fill, hasFill = args[1], true
		}
		var out []any
		if name == "batch" {
			for i := 0; i < len(l); i += n {
				b := slices.Clone(l[i:min(i+n, len(l))])
				for hasFill && len(b) < n {
					b = append(b, fill)
				}
				out = append(out, b)
			}
			return generator{out}, nil
		}
		per, extra := len(l)/n, len(l)%n
		for i, start := 0, 0; i < n; i++ {
			end := start + per
			if i < extra {
				end++
			}
			b := slices.Clone(l[start:end])
			if hasFill && i >= extra && extra > 0 {
				b = append(b, fill)
			}
			out = append(out, b)
			start = end
		}
		return generator{out}, nil
	case "wordcount":
		s, err := asString(name, x)
		return len(strings.FieldsFunc(s, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '_' })), err
	case "center":
		s, err := asString(name, x)
		w, _ := arg(0, "width", 80).(int)
		return pad(s, w, " ", "center"), err
	case "truncate": // truncate(length=255, killwords=false, end="...", leeway=5)
		s, err := asString(name, x)
		n, _ := arg(0, "length", 255).(int)
		end := str(arg(2, "end", "..."))
		leeway, _ := arg(3, "leeway", 5).(int)
		r := []rune(s)
		if len(r) <= n+leeway {
			return s, err
		}
		cut := string(r[:max(n-len([]rune(end)), 0)])
		if !truth(arg(1, "killwords", false)) {
			if i := strings.LastIndex(cut, " "); i >= 0 {
				cut = cut[:i]
			}
		}
		return cut + end, err
	case "forceescape":
		return escape(str(x)), nil
	case "pprint":
		return repr(x), nil
	case "format":
		s, err := asString(name, x)
		if err != nil {
			return nil, err
		}
		return percentFormat(s, args)
	case "dictsort": // dictsort(case_sensitive=false, by="key", reverse=false)
		d, ok := x.(*Dict)
		if !ok {
			return nil, fmt.Errorf("dictsort: want a dict, got %s", typeName(x))
		}
		items, _ := dictMethod(d, "items")(nil, nil)
		l := items.([]any)
		pos := 0
		if str(arg(1, "by", "key")) == "value" {
			pos = 1
		}
		fold := !truth(arg(0, "case_sensitive", false))
		var cmpErr error
		slices.SortStableFunc(l, func(a, b any) int {
			x, y := a.(tuple).items[pos], b.(tuple).items[pos]
			if fold {
				x, y = lowerIfString(x), lowerIfString(y)
			}
			c, err := compare(x, y)
			if err != nil && cmpErr == nil {
				cmpErr = err
			}
			return c
		})
		if truth(arg(2, "reverse", false)) {
			slices.Reverse(l)
		}
		return l, cmpErr
	case "items":
		if _, undef := x.(Undefined); undef {
			return []any{}, nil
		}
		d, ok := x.(*Dict)
		if !ok {
			return nil, fmt.Errorf("items: want a dict, got %s", typeName(x))
		}
		return dictMethod(d, "items")(nil, nil)
	case "first", "last":
		if _, ok := x.(generator); ok && name == "last" {
			return nil, fmt.Errorf("last: a generator cannot be reversed")
		}
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
			if a, ok := kwargs.Get("attribute"); ok {
				if v, err = attrGetter(v, str(a)); err != nil {
					return nil, err
				}
			}
			parts[i] = str(v)
		}
		return strings.Join(parts, str(arg(0, "d", ""))), nil
	case "replace":
		s, err := asString(name, x)
		n, _ := arg(2, "count", -1).(int)
		return strings.Replace(s, str(arg(0, "old", "")), str(arg(1, "new", "")), n), err
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
		if sx, ok := x.(string); ok {
			if f, err := strconv.ParseFloat(strings.TrimSpace(sx), 64); err == nil {
				return f, nil
			}
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
		return generator{l}, err
	case "unique":
		l, err := iterate(x)
		var out []any
		for _, v := range l {
			if !slices.ContainsFunc(out, func(u any) bool {
				if truth(arg(0, "case_sensitive", false)) {
					return equal(u, v)
				}
				return equal(lowerIfString(u), lowerIfString(v))
			}) {
				out = append(out, v)
			}
		}
		return generator{out}, err
	case "select", "reject", "selectattr", "rejectattr":
		if !truth(x) { // Jinja2 iterates only a true value
			return generator{}, nil
		}
		l, err := selectItems(name, x, args)
		if err != nil {
			return nil, err
		}
		return generator{l.([]any)}, nil
	case "map":
		if !truth(x) {
			return generator{}, nil
		}
		l, err := iterate(x)
		if err != nil {
			return nil, err
		}
		out := make([]any, len(l))
		for i, v := range l {
			if attr, ok := kwargs.Get("attribute"); ok {
				if out[i], err = attrGetter(v, str(attr)); err != nil {
					return nil, err
				}
				if _, undef := out[i].(Undefined); undef {
					if d, ok := kwargs.Get("default"); ok {
						out[i] = d
					}
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
		return generator{out}, nil
	case "indent":
		s, err := asString(name, x)
		width := 4
		if n, ok := arg(0, "width", 4).(int); ok {
			width = n
		}
		if width < 0 || width > maxOutput {
			return nil, fmt.Errorf("indent: width %d", width)
		}
		pad := strings.Repeat(" ", width)
		if w, ok := arg(0, "width", 4).(string); ok {
			pad = w
		}
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

func lowerIfString(x any) any {
	if s, ok := x.(string); ok {
		return strings.ToLower(s)
	}
	return x
}

func asString(op string, x any) (string, error) {
	if s, ok := x.(string); ok {
		return s, nil
	}
	return str(x), nil
}

func length(x any) (any, error) {
	x = plain(x)
	switch v := x.(type) {
	case string:
		return len([]rune(v)), nil
	case []any:
		return len(v), nil
	case *Dict:
		return v.Len(), nil
	case Undefined:
		return 0, nil
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
			if subject, err = attrGetter(v, str(args[0])); err != nil {
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
	x = plain(x)
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
		case string, []any, *Dict, Undefined: // Jinja2's Undefined is an empty iterable
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
			if l, ok := plain(args[0]).([]any); ok { // a tuple of choices
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
	case "rsplit":
		return func(args []any, kwargs *Dict) (any, error) {
			sep, ok := strArg(args, 0)
			n := -1
			if len(args) > 1 {
				n, _ = args[1].(int)
			}
			if !ok || n < 0 {
				return stringMethod(s, "split")(args, kwargs)
			}
			parts := strings.Split(s, sep)
			if len(parts) > n+1 {
				head := strings.Join(parts[:len(parts)-n], sep)
				parts = append([]string{head}, parts[len(parts)-n:]...)
			}
			out := make([]any, len(parts))
			for i, p := range parts {
				out[i] = p
			}
			return out, nil
		}
	case "splitlines":
		return func([]any, *Dict) (any, error) {
			out := []any{}
			for _, l := range strings.Split(strings.TrimSuffix(strings.ReplaceAll(s, "\r\n", "\n"), "\n"), "\n") {
				out = append(out, l)
			}
			if s == "" {
				out = []any{}
			}
			return out, nil
		}
	case "removeprefix":
		return func(args []any, _ *Dict) (any, error) { p, _ := strArg(args, 0); return strings.TrimPrefix(s, p), nil }
	case "removesuffix":
		return func(args []any, _ *Dict) (any, error) { p, _ := strArg(args, 0); return strings.TrimSuffix(s, p), nil }
	case "isalpha", "isdigit", "isspace", "isalnum":
		is := map[string]func(rune) bool{"isalpha": unicode.IsLetter, "isdigit": unicode.IsDigit, "isspace": unicode.IsSpace,
			"isalnum": func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }}[name]
		return func([]any, *Dict) (any, error) {
			return s != "" && !strings.ContainsFunc(s, func(r rune) bool { return !is(r) }), nil
		}
	case "islower", "isupper":
		return func([]any, *Dict) (any, error) {
			cased := strings.ContainsFunc(s, func(r rune) bool { return unicode.IsUpper(r) || unicode.IsLower(r) })
			if name == "islower" {
				return cased && strings.ToLower(s) == s, nil
			}
			return cased && strings.ToUpper(s) == s, nil
		}
	case "swapcase":
		return func([]any, *Dict) (any, error) {
			return strings.Map(func(r rune) rune {
				if unicode.IsUpper(r) {
					return unicode.ToLower(r)
				}
				return unicode.ToUpper(r)
			}, s), nil
		}
	case "casefold":
		return func([]any, *Dict) (any, error) { return strings.ToLower(s), nil }
	case "index", "rfind":
		return func(args []any, _ *Dict) (any, error) {
			sub, _ := strArg(args, 0)
			i := strings.Index(s, sub)
			if name == "rfind" {
				i = strings.LastIndex(s, sub)
			}
			if i < 0 {
				if name == "index" {
					return nil, fmt.Errorf("substring not found")
				}
				return -1, nil
			}
			return len([]rune(s[:i])), nil
		}
	case "zfill", "center", "ljust", "rjust":
		return func(args []any, _ *Dict) (any, error) {
			w, _ := firstArg(args).(int)
			fill := " "
			if f, ok := strArg(args, 1); ok {
				fill = f
			}
			return pad(s, w, fill, name), nil
		}
	case "format":
		return func(args []any, kwargs *Dict) (any, error) { return strFormat(s, args, kwargs) }
	case "partition":
		return func(args []any, _ *Dict) (any, error) {
			sep, _ := strArg(args, 0)
			if sep == "" {
				return nil, fmt.Errorf("partition: empty separator")
			}
			before, after, found := strings.Cut(s, sep)
			if !found {
				return tuple{[]any{s, "", ""}}, nil
			}
			return tuple{[]any{before, sep, after}}, nil
		}
	}
	return nil
}

func firstArg(args []any) any {
	if len(args) == 0 {
		return nil
	}
	return args[0]
}

// pad is str.zfill, center, ljust and rjust to width w.
func pad(s string, w int, fill, how string) string {
	n := w - len([]rune(s))
	if n <= 0 || n > maxOutput || len(fill) != 1 && how != "zfill" && len([]rune(fill)) != 1 {
		return s
	}
	switch how {
	case "zfill":
		sign := ""
		if strings.HasPrefix(s, "-") || strings.HasPrefix(s, "+") {
			sign, s = s[:1], s[1:]
		}
		return sign + strings.Repeat("0", n) + s
	case "ljust":
		return s + strings.Repeat(fill, n)
	case "rjust":
		return strings.Repeat(fill, n) + s
	}
	left := n/2 + n&w&1 // Python's center
	return strings.Repeat(fill, left) + s + strings.Repeat(fill, n-left)
}

// strFormat is str.format with plain {}, {0} and {name} fields (no format specs).
func strFormat(s string, args []any, kwargs *Dict) (string, error) {
	var b strings.Builder
	auto := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '{' && i+1 < len(s) && s[i+1] == '{' || c == '}' && i+1 < len(s) && s[i+1] == '}' {
			b.WriteByte(c)
			i++
			continue
		}
		if c != '{' {
			b.WriteByte(c)
			continue
		}
		j := strings.IndexByte(s[i:], '}')
		if j < 0 {
			return "", fmt.Errorf("format: single '{' in format string")
		}
		field := s[i+1 : i+j]
		i += j
		var v any
		if field == "" {
			if auto >= len(args) {
				return "", fmt.Errorf("format: replacement index %d out of range", auto)
			}
			v, auto = args[auto], auto+1
		} else if n, err := strconv.Atoi(field); err == nil {
			if n >= len(args) {
				return "", fmt.Errorf("format: replacement index %d out of range", n)
			}
			v = args[n]
		} else {
			var ok bool
			if v, ok = kwargs.Get(field); !ok {
				return "", fmt.Errorf("format: no argument %q", field)
			}
		}
		b.WriteString(str(v))
	}
	return b.String(), nil
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
					out = append(out, tuple{[]any{d.key(k), d.m[k]}})
				case "keys":
					out = append(out, d.key(k))
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
	var b strings.Builder
	for i := 0; i < len(format); i++ {
		if format[i] != '%' || i+1 >= len(format) {
			b.WriteByte(format[i])
			continue
		}
		i++
		noPad := format[i] == '-' && i+1 < len(format) // glibc's %-d: no leading zero
		if noPad {
			i++
		}
		num := func(n, width int) string {
			if noPad {
				return strconv.Itoa(n)
			}
			return fmt.Sprintf("%0*d", width, n)
		}
		h12 := t.Hour() % 12
		if h12 == 0 {
			h12 = 12
		}
		switch format[i] {
		case 'd':
			b.WriteString(num(t.Day(), 2))
		case 'e':
			fmt.Fprintf(&b, "%2d", t.Day())
		case 'm':
			b.WriteString(num(int(t.Month()), 2))
		case 'Y':
			b.WriteString(strconv.Itoa(t.Year()))
		case 'y':
			b.WriteString(num(t.Year()%100, 2))
		case 'H':
			b.WriteString(num(t.Hour(), 2))
		case 'I':
			b.WriteString(num(h12, 2))
		case 'M':
			b.WriteString(num(t.Minute(), 2))
		case 'S':
			b.WriteString(num(t.Second(), 2))
		case 'j':
			b.WriteString(num(t.YearDay(), 3))
		case 'p':
			b.WriteString(t.Format("PM"))
		case 'b', 'h':
			b.WriteString(t.Format("Jan"))
		case 'B':
			b.WriteString(t.Format("January"))
		case 'a':
			b.WriteString(t.Format("Mon"))
		case 'A':
			b.WriteString(t.Format("Monday"))
		case 'w':
			b.WriteString(strconv.Itoa(int(t.Weekday())))
		case 'u':
			b.WriteString(strconv.Itoa((int(t.Weekday())+6)%7 + 1))
		case 'F':
			b.WriteString(t.Format("2006-01-02"))
		case 'T':
			b.WriteString(t.Format("15:04:05"))
		case '%':
			b.WriteByte('%')
		default:
			b.WriteByte('%')
			b.WriteByte(format[i])
		}
	}
	return b.String()
}

// attrGetter is Jinja2's attribute getter for map, selectattr, sort, join
// (attribute="a.b.0"): each dotted part an item (a number a list index).
func attrGetter(v any, attr string) (any, error) {
	for _, part := range strings.Split(attr, ".") {
		var key any = part
		if n, err := strconv.Atoi(part); err == nil {
			key = n
		}
		var err error
		if v, err = getItem(v, key); err != nil {
			return nil, err
		}
	}
	return v, nil
}

// percentFormat is Python's printf-style s % args: %s %r %d %i %f %e %g %x
// %o %c %%, with flags, width and precision, and %(name)s from a dict.
func percentFormat(s string, args []any) (string, error) {
	var b strings.Builder
	next := 0
	var mapping *Dict
	if len(args) == 1 {
		mapping, _ = args[0].(*Dict)
	}
	for i := 0; i < len(s); i++ {
		if s[i] != '%' {
			b.WriteByte(s[i])
			continue
		}
		j := i + 1
		var v any
		named := false
		if j < len(s) && s[j] == '(' {
			k := strings.IndexByte(s[j:], ')')
			if k < 0 || mapping == nil {
				return "", fmt.Errorf("format requires a mapping")
			}
			v, _ = mapping.Get(s[j+1 : j+k])
			named, j = true, j+k+1
		}
		start := j
		for j < len(s) && strings.IndexByte("-+ #0123456789.", s[j]) >= 0 {
			j++
		}
		if j >= len(s) {
			return "", fmt.Errorf("incomplete format")
		}
		spec, verb := s[start:j], s[j]
		i = j
		if len(strings.Trim(spec, "-+ #0.")) > 4 { // a width or precision past 9999
			return "", fmt.Errorf("format: %q is too wide", spec)
		}
		if verb == '%' {
			b.WriteByte('%')
			continue
		}
		if !named {
			if next >= len(args) {
				return "", fmt.Errorf("not enough arguments for format string")
			}
			v, next = args[next], next+1
		}
		var out string
		switch verb {
		case 's':
			out = fmt.Sprintf("%"+strings.TrimLeft(spec, "#+ 0")+"s", str(v))
		case 'r':
			out = fmt.Sprintf("%"+spec+"s", repr(v))
		case 'd', 'i', 'x', 'X', 'o', 'c':
			f, ok := number(v)
			if !ok {
				return "", fmt.Errorf("%%%c format: a real number is required, not %s", verb, typeName(v))
			}
			if verb == 'c' {
				out = string(rune(int(f)))
				break
			}
			gv := map[byte]string{'d': "d", 'i': "d", 'x': "x", 'X': "X", 'o': "o"}[verb]
			out = fmt.Sprintf("%"+spec+gv, int(f))
		case 'f', 'F', 'e', 'E', 'g', 'G':
			f, ok := number(v)
			if !ok {
				return "", fmt.Errorf("must be real number, not %s", typeName(v))
			}
			if !strings.Contains(spec, ".") && verb != 'g' && verb != 'G' {
				spec += ".6"
			}
			out = fmt.Sprintf("%"+spec+string(verb), f)
		default:
			return "", fmt.Errorf("unsupported format character %q", verb)
		}
		b.WriteString(out)
	}
	if mapping == nil && next < len(args) {
		return "", fmt.Errorf("not all arguments converted during string formatting")
	}
	return b.String(), nil
}
