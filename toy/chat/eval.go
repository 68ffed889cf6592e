// eval.go: running the tree — scopes, statements, expressions.

package chat

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
)

// scope holds variables; a for loop or a macro call opens a new one, so that
// {% set %} inside it does not change the variable outside (hence namespace()).
type scope struct {
	vars   map[string]any
	parent *scope
	work   *work // the render's budget, shared by all its scopes
}

// work bounds what one render may do, so that a hostile template (GGUF
// metadata is untrusted input) fails with an error instead of hanging or
// exhausting memory: statements run (nested loops over range(2**20)),
// macro calls nested (a macro calling itself), and output (maxOutput).
type work struct{ steps, depth int }

const (
	maxSteps = 250_000
	maxDepth = 100
)

// child returns a new scope inside s.
func (s *scope) child() *scope { return &scope{vars: map[string]any{}, parent: s, work: s.work} }

// spend counts one statement against the render's budget.
func (s *scope) spend() error {
	if s.work.steps++; s.work.steps > maxSteps {
		return fmt.Errorf("the template runs more than %d statements", maxSteps)
	}
	return nil
}

func (s *scope) lookup(name string) any {
	for ; s != nil; s = s.parent {
		if v, ok := s.vars[name]; ok {
			return v
		}
	}
	return Undefined{name}
}

// loop control signals, passed up as errors.
var (
	errBreak    = errors.New("break outside a loop")
	errContinue = errors.New("continue outside a loop")
)

// maxOutput bounds a render's output, so that a template cannot loop forever
// producing text (range(10**9)).
const maxOutput = 16 << 20

func execute(nodes []node, sc *scope, out *strings.Builder) error {
	for _, n := range nodes {
		if out.Len() > maxOutput {
			return fmt.Errorf("output exceeds %d bytes", maxOutput)
		}
		if err := sc.spend(); err != nil {
			return err
		}
		switch n := n.(type) {
		case textNode:
			out.WriteString(n.s)
		case outputNode:
			v, err := eval(n.e, sc)
			if err != nil {
				return err
			}
			out.WriteString(str(v))
		case ifNode:
			body := n.els
			for i, c := range n.conds {
				v, err := eval(c, sc)
				if err != nil {
					return err
				}
				if truth(v) {
					body = n.bodies[i]
					break
				}
			}
			if err := execute(body, sc, out); err != nil {
				return err
			}
		case forNode:
			if err := execFor(n, sc, out); err != nil {
				return err
			}
		case setNode:
			if err := execSet(n, sc); err != nil {
				return err
			}
		case macroNode:
			sc.vars[n.name] = macro(n, sc)
		case callBlock:
			call := n.call
			call.kwargs = append(slices.Clip(call.kwargs), kwExpr{"caller", literal{macro(n.caller, sc)}})
			v, err := eval(call, sc)
			if err != nil {
				return err
			}
			out.WriteString(str(v))
		case generationBlock:
			if err := execute(n.body, sc, out); err != nil {
				return err
			}
		case filterBlock:
			var b strings.Builder
			if err := execute(n.body, sc, &b); err != nil {
				return err
			}
			fs := sc.child()
			fs.vars[filterBody] = b.String()
			v, err := eval(n.e, fs)
			if err != nil {
				return err
			}
			out.WriteString(str(v))
		case loopControl:
			if n.kind == "break" {
				return errBreak
			}
			return errContinue
		}
	}
	return nil
}

// iterate returns the items a for loop visits: a list's items, a string's
// characters, a dict's keys.
func iterate(v any) ([]any, error) {
	v = plain(v)
	switch v := v.(type) {
	case []any:
		return v, nil
	case string:
		var l []any
		for _, r := range v {
			l = append(l, string(r))
		}
		return l, nil
	case *Dict:
		l := make([]any, 0, v.Len())
		for _, k := range v.Keys() {
			l = append(l, v.key(k))
		}
		return l, nil
	case Undefined:
		return nil, nil // Jinja2's Undefined iterates as empty
	case generator:
		return v.items, nil
	}
	return nil, fmt.Errorf("cannot iterate over %s", typeName(v))
}

func execFor(n forNode, sc *scope, out *strings.Builder) error {
	v, err := eval(n.iter, sc)
	if err != nil {
		return err
	}
	all, err := iterate(v)
	if err != nil {
		return err
	}
	inner := sc.child()
	items := all
	if n.cond != nil { // the filter sees each item; loop.* counts what passes
		items = nil
		for _, x := range all {
			if err := unpack(inner.vars, n.vars, x); err != nil {
				return err
			}
			c, err := eval(n.cond, inner)
			if err != nil {
				return err
			}
			if truth(c) {
				items = append(items, x)
			}
		}
	}
	if len(items) == 0 {
		return execute(n.els, sc, out)
	}
	var last any = Undefined{"changed"} // loop.changed(…)'s previous arguments
	changed := Func(func(args []any, _ *Dict) (any, error) {
		v := any(args)
		if equal(v, last) {
			return false, nil
		}
		last = v
		return true, nil
	})
	for i, x := range items {
		if err := unpack(inner.vars, n.vars, x); err != nil {
			return err
		}
		loop := NewDict().Set("index", i+1).Set("index0", i).
			Set("revindex", len(items)-i).Set("revindex0", len(items)-i-1).
			Set("first", i == 0).Set("last", i == len(items)-1).Set("length", len(items)).
			Set("depth", 1).Set("depth0", 0).Set("cycle", cycle(i)).Set("changed", changed)
		if i > 0 {
			loop.Set("previtem", items[i-1])
		}
		if i+1 < len(items) {
			loop.Set("nextitem", items[i+1])
		}
		inner.vars["loop"] = loop
		if err := sc.spend(); err != nil { // an empty body still costs its iterations
			return err
		}
		err := execute(n.body, inner, out)
		if err == errBreak {
			break
		}
		if err != nil && err != errContinue {
			return err
		}
	}
	return nil
}

// cycle is loop.cycle for the i-th item: its i-th argument, round and round.
func cycle(i int) Func {
	return func(args []any, _ *Dict) (any, error) {
		if len(args) == 0 {
			return nil, fmt.Errorf("no items for cycling given")
		}
		return args[i%len(args)], nil
	}
}

func execSet(n setNode, sc *scope) error {
	var v any
	if n.e == nil {
		var b strings.Builder
		if err := execute(n.body, sc, &b); err != nil {
			return err
		}
		v = b.String()
	} else {
		var err error
		if v, err = eval(n.e, sc); err != nil {
			return err
		}
	}
	if n.ns != "" {
		ns, ok := sc.lookup(n.ns).(namespace)
		if !ok {
			return fmt.Errorf("cannot set %s.%s: %s is not a namespace", n.ns, n.names[0], n.ns)
		}
		ns.Set(n.names[0], v)
		return nil
	}
	return unpack(sc.vars, n.names, v)
}

// unpack assigns x to names in vars: to the one name, or item by item to
// several, as Python's a, b = x does.
func unpack(vars map[string]any, names []string, x any) error {
	if len(names) == 1 {
		vars[names[0]] = x
		return nil
	}
	l, ok := plain(x).([]any)
	if !ok || len(l) != len(names) {
		return fmt.Errorf("cannot unpack %s into %d names", repr(x), len(names))
	}
	for i, name := range names {
		vars[name] = l[i]
	}
	return nil
}

// macro makes a callable of a {% macro %}; it runs in a scope of its own
// over the one it was defined in, and returns its output.
func macro(n macroNode, defined *scope) Func {
	return func(args []any, kwargs *Dict) (any, error) {
		sc := defined.child()
		if sc.work.depth++; sc.work.depth > maxDepth {
			return nil, fmt.Errorf("macro %s: calls nested more than %d deep", n.name, maxDepth)
		}
		defer func() { sc.work.depth-- }()
		if c, ok := kwargs.Get("caller"); ok && !slices.Contains(n.params, "caller") { // from {% call %}
			sc.vars["caller"] = c
		}
		for i, p := range n.params {
			switch v, ok := kwargs.Get(p); {
			case ok:
				sc.vars[p] = v
			case i < len(args):
				sc.vars[p] = args[i]
			case n.defaults[i] != nil:
				d, err := eval(n.defaults[i], defined)
				if err != nil {
					return nil, err
				}
				sc.vars[p] = d
			default:
				sc.vars[p] = Undefined{p}
			}
		}
		// Jinja2's varargs and kwargs: the positional and keyword arguments
		// past the parameters.
		var extra []any
		if len(args) > len(n.params) {
			extra = args[len(n.params):]
		}
		more := NewDict()
		for _, k := range kwargs.Keys() {
			if !slices.Contains(n.params, k) && k != "caller" {
				v, _ := kwargs.Get(k)
				more.Set(k, v)
			}
		}
		sc.vars["varargs"], sc.vars["kwargs"] = tuple{extra}, more
		var b strings.Builder
		if err := execute(n.body, sc, &b); err != nil {
			return nil, err
		}
		return b.String(), nil
	}
}

func eval(e expr, sc *scope) (any, error) {
	switch e := e.(type) {
	case literal:
		return e.v, nil
	case nameExpr:
		return sc.lookup(e.name), nil
	case listExpr:
		l := make([]any, len(e.items))
		for i, x := range e.items {
			v, err := eval(x, sc)
			if err != nil {
				return nil, err
			}
			l[i] = v
		}
		if e.tuple {
			return tuple{l}, nil
		}
		return l, nil
	case dictExpr:
		d := NewDict()
		for i := range e.keys {
			k, err := eval(e.keys[i], sc)
			if err != nil {
				return nil, err
			}
			v, err := eval(e.values[i], sc)
			if err != nil {
				return nil, err
			}
			d.setKey(k, v)
		}
		return d, nil
	case attrExpr:
		x, err := eval(e.x, sc)
		if err != nil {
			return nil, err
		}
		return getAttr(x, e.name)
	case indexExpr:
		x, err := eval(e.x, sc)
		if err != nil {
			return nil, err
		}
		i, err := eval(e.index, sc)
		if err != nil {
			return nil, err
		}
		return getItem(x, i)
	case sliceExpr:
		return evalSlice(e, sc)
	case callExpr:
		fn, err := eval(e.fn, sc)
		if err != nil {
			return nil, err
		}
		f, ok := fn.(Func)
		if !ok {
			return nil, fmt.Errorf("%s is not callable", describe(e.fn, fn))
		}
		args, kwargs, err := evalArgs(e.args, e.kwargs, sc)
		if err != nil {
			return nil, err
		}
		return f(args, kwargs)
	case filterExpr:
		x, err := eval(e.x, sc)
		if err != nil {
			return nil, err
		}
		args, kwargs, err := evalArgs(e.args, e.kwargs, sc)
		if err != nil {
			return nil, err
		}
		return applyFilter(e.name, x, args, kwargs)
	case testExpr:
		x, err := eval(e.x, sc)
		if err != nil {
			return nil, err
		}
		args, _, err := evalArgs(e.args, nil, sc)
		if err != nil {
			return nil, err
		}
		ok, err := applyTest(e.name, x, args)
		return ok != e.not, err
	case unaryExpr:
		x, err := eval(e.x, sc)
		if err != nil {
			return nil, err
		}
		if e.op == "not" {
			return !truth(x), nil
		}
		switch x := x.(type) {
		case int:
			return -x, nil
		case float64:
			return -x, nil
		}
		return nil, fmt.Errorf("cannot negate %s", typeName(x))
	case binaryExpr:
		return evalBinary(e, sc)
	case condExpr:
		c, err := eval(e.cond, sc)
		if err != nil {
			return nil, err
		}
		if truth(c) {
			return eval(e.then, sc)
		}
		if e.els == nil {
			return Undefined{"else"}, nil
		}
		return eval(e.els, sc)
	}
	return nil, fmt.Errorf("unknown expression %T", e)
}

// describe names an expression for an error message.
func describe(e expr, v any) string {
	switch e := e.(type) {
	case nameExpr:
		return e.name
	case attrExpr:
		return e.name
	}
	return typeName(v)
}

func evalArgs(args []expr, kwargs []kwExpr, sc *scope) ([]any, *Dict, error) {
	out := make([]any, 0, len(args))
	for _, a := range args {
		u, unpack := a.(unpackExpr)
		if unpack {
			a = u.e
		}
		v, err := eval(a, sc)
		if err != nil {
			return nil, nil, err
		}
		if !unpack {
			out = append(out, v)
			continue
		}
		items, err := iterate(v)
		if err != nil {
			return nil, nil, fmt.Errorf("*%s: %w", describe(u.e, v), err)
		}
		out = append(out, items...)
	}
	kw := NewDict()
	for _, k := range kwargs {
		v, err := eval(k.e, sc)
		if err != nil {
			return nil, nil, err
		}
		if k.name != "" {
			kw.Set(k.name, v)
			continue
		}
		d, ok := v.(*Dict)
		if !ok {
			return nil, nil, fmt.Errorf("**%s is not a mapping", describe(k.e, v))
		}
		for _, key := range d.Keys() {
			x, _ := d.Get(key)
			kw.Set(key, x)
		}
	}
	return out, kw, nil
}

func evalBinary(e binaryExpr, sc *scope) (any, error) {
	x, err := eval(e.x, sc)
	if err != nil {
		return nil, err
	}
	switch e.op { // short-circuit: Python's and/or return an operand
	case "and":
		if !truth(x) {
			return x, nil
		}
		return eval(e.y, sc)
	case "or":
		if truth(x) {
			return x, nil
		}
		return eval(e.y, sc)
	}
	y, err := eval(e.y, sc)
	if err != nil {
		return nil, err
	}
	switch e.op {
	case "==":
		return equal(x, y), nil
	case "!=":
		return !equal(x, y), nil
	case "<", "<=", ">", ">=":
		c, err := compare(x, y)
		if err != nil {
			return nil, err
		}
		return map[string]bool{"<": c < 0, "<=": c <= 0, ">": c > 0, ">=": c >= 0}[e.op], nil
	case "in", "not in":
		in, err := contains(y, x)
		return in == (e.op == "in"), err
	case "~":
		return str(x) + str(y), nil
	}
	return arith(e.op, x, y)
}

// contains is Python's "x in container".
func contains(container, x any) (bool, error) {
	container, x = plain(container), plain(x)
	switch c := container.(type) {
	case string:
		s, ok := x.(string)
		if !ok {
			return false, fmt.Errorf("'in <string>' needs a string, not %s", typeName(x))
		}
		return strings.Contains(c, s), nil
	case []any:
		for _, v := range c {
			if equal(v, x) {
				return true, nil
			}
		}
		return false, nil
	case *Dict:
		k, ok := x.(string)
		_, has := c.Get(k)
		return ok && has, nil
	case Undefined:
		return false, nil // Jinja2's Undefined iterates as empty
	case generator:
		return contains(c.items, x)
	}
	return false, fmt.Errorf("'in' needs a string, list or dict, not %s", typeName(container))
}

// arith is + - * / // % ** on numbers, + on strings and lists, * on a string and an int.
func arith(op string, x, y any) (any, error) {
	if s, ok := plain(x).(string); ok && op == "%" { // printf-style formatting: a tuple holds the arguments
		if t, ok := y.(tuple); ok {
			return percentFormat(s, t.items)
		}
		return percentFormat(s, []any{plain(y)})
	}
	_, mx := x.(markup)
	_, my := y.(markup)
	if op == "+" && (mx || my) { // markupsafe: Markup + str escapes the str
		_, sx := plain(x).(string)
		_, sy := plain(y).(string)
		if sx && sy {
			return escape(x) + escape(y), nil
		}
	}
	x, y = plain(x), plain(y)
	switch op {
	case "+":
		switch a := x.(type) {
		case string:
			if b, ok := y.(string); ok {
				return a + b, nil
			}
		case []any:
			if b, ok := y.([]any); ok {
				return append(append([]any{}, a...), b...), nil
			}
		}
	case "%":
		if s, ok := x.(string); ok { // printf-style formatting
			args, isTuple := y.([]any)
			if !isTuple {
				args = []any{y}
			}
			return percentFormat(s, args)
		}
	case "*":
		if l, ok := x.([]any); ok {
			if n, ok := y.(int); ok {
				if n > 0 && n > maxOutput/max(len(l), 1) {
					return nil, fmt.Errorf("list * %d is too long", n)
				}
				var out []any
				for range max(n, 0) {
					out = append(out, l...)
				}
				if out == nil {
					out = []any{}
				}
				return out, nil
			}
		}
		if s, ok := x.(string); ok {
			if n, ok := y.(int); ok {
				if n > 0 && len(s) > maxOutput/n {
					return nil, fmt.Errorf("%q * %d exceeds %d bytes", s[:min(len(s), 20)], n, maxOutput)
				}
				return strings.Repeat(s, max(n, 0)), nil
			}
		}
	}
	a, ok1 := number(x)
	b, ok2 := number(y)
	_, xb := x.(bool)
	_, yb := y.(bool)
	if !ok1 || !ok2 || xb || yb {
		return nil, fmt.Errorf("unsupported operand types for %s: %s and %s", op, typeName(x), typeName(y))
	}
	ai, aInt := x.(int)
	bi, bInt := y.(int)
	ints := aInt && bInt
	switch op {
	case "+":
		if ints {
			return ai + bi, nil
		}
		return a + b, nil
	case "-":
		if ints {
			return ai - bi, nil
		}
		return a - b, nil
	case "*":
		if ints {
			return ai * bi, nil
		}
		return a * b, nil
	case "/":
		if b == 0 {
			return nil, errors.New("division by zero")
		}
		return a / b, nil
	case "//", "%":
		if b == 0 {
			return nil, errors.New("division by zero")
		}
		q := math.Floor(a / b)
		if op == "%" {
			r := a - q*b
			if ints {
				return int(r), nil
			}
			return r, nil
		}
		if ints {
			return int(q), nil
		}
		return q, nil
	case "**":
		if ints && bi >= 0 {
			if p := math.Pow(a, b); math.Abs(p) < 1<<63 {
				return int(p), nil
			}
			return nil, fmt.Errorf("%v ** %v is past 64-bit integers", a, b) // Python's are unbounded
		}
		return math.Pow(a, b), nil
	}
	return nil, fmt.Errorf("unknown operator %s", op)
}

// getAttr is x.name: a dict's key, a namespace's or loop's field, or a method.
func getAttr(x any, name string) (any, error) {
	x = plain(x)
	switch v := x.(type) {
	case *Dict:
		// Jinja2's x.name looks for a Python attribute first: a dict's
		// methods shadow its keys (schema.items is the method).
		if m := dictMethod(v, name); m != nil {
			return m, nil
		}
		if val, ok := v.Get(name); ok {
			return val, nil
		}
		return Undefined{name}, nil
	case namespace:
		if val, ok := v.Get(name); ok {
			return val, nil
		}
		return Undefined{name}, nil
	case string:
		if m := stringMethod(v, name); m != nil {
			return m, nil
		}
	case []any:
		if m := listMethod(v, name); m != nil {
			return m, nil
		}
	case Undefined:
		return nil, fmt.Errorf("'%s' is undefined (looking up .%s)", v.Name, name)
	}
	return Undefined{name}, nil // none.attr too: Jinja2's getattr gives an Undefined
}

// getItem is x[i]: a list's or string's item (negative from the end), a dict's key.
func getItem(x, i any) (any, error) {
	x, i = plain(x), plain(i)
	switch v := x.(type) {
	case *Dict:
		if val, ok := v.Get(str(i)); ok {
			return val, nil
		}
		return Undefined{str(i)}, nil
	case namespace:
		return getItem(v.Dict, i)
	case []any, string:
		n, ok := i.(int)
		if !ok {
			if s, ok := i.(string); ok {
				return getAttr(x, s)
			}
			return nil, fmt.Errorf("%s indices must be integers, not %s", typeName(x), typeName(i))
		}
		if l, ok := v.([]any); ok {
			if n < 0 {
				n += len(l)
			}
			if n < 0 || n >= len(l) {
				return Undefined{fmt.Sprintf("[%d]", n)}, nil
			}
			return l[n], nil
		}
		r := []rune(v.(string))
		if n < 0 {
			n += len(r)
		}
		if n < 0 || n >= len(r) {
			return Undefined{fmt.Sprintf("[%d]", n)}, nil
		}
		return string(r[n]), nil
	case Undefined:
		return nil, fmt.Errorf("'%s' is undefined (looking up [%s])", v.Name, repr(i))
	}
	return nil, fmt.Errorf("%s is not subscriptable", typeName(x))
}

// evalSlice is x[lo:hi:step] on a list or string, with Python's bounds.
func evalSlice(e sliceExpr, sc *scope) (any, error) {
	x, err := eval(e.x, sc)
	if err != nil {
		return nil, err
	}
	bound := func(b expr) (int, bool, error) {
		if b == nil {
			return 0, false, nil
		}
		v, err := eval(b, sc)
		if err != nil {
			return 0, false, err
		}
		if v == nil {
			return 0, false, nil
		}
		n, ok := v.(int)
		if !ok {
			return 0, false, fmt.Errorf("slice indices must be integers, not %s", typeName(v))
		}
		return n, true, nil
	}
	lo, hasLo, err := bound(e.lo)
	if err != nil {
		return nil, err
	}
	hi, hasHi, err := bound(e.hi)
	if err != nil {
		return nil, err
	}
	step, hasStep, err := bound(e.step)
	if err != nil {
		return nil, err
	}
	if !hasStep {
		step = 1
	}
	if step == 0 {
		return nil, errors.New("slice step cannot be zero")
	}
	var items []any
	switch v := x.(type) {
	case []any:
		items = v
	case string:
		for _, r := range v {
			items = append(items, string(r))
		}
	default:
		return nil, fmt.Errorf("cannot slice %s", typeName(x))
	}
	n := len(items)
	// Python's slice.indices.
	clamp := func(i int, has bool, def int) int {
		if !has {
			return def
		}
		if i < 0 {
			i += n
		}
		if step > 0 {
			return min(max(i, 0), n)
		}
		return min(max(i, -1), n-1)
	}
	var out []any
	if step > 0 {
		for i := clamp(lo, hasLo, 0); i < clamp(hi, hasHi, n); i += step {
			out = append(out, items[i])
		}
	} else {
		for i := clamp(lo, hasLo, n-1); i > clamp(hi, hasHi, -1); i += step {
			out = append(out, items[i])
		}
	}
	if _, ok := x.(string); ok {
		var b strings.Builder
		for _, c := range out {
			b.WriteString(c.(string))
		}
		return b.String(), nil
	}
	if out == nil {
		out = []any{}
	}
	return out, nil
}
