// parse.go: items → a tree of statements and expressions, with Jinja2's
// operator precedence.

package chat

import (
	"fmt"
	"slices"
	"strconv"
)

// Statements.
type (
	textNode   struct{ s string }
	outputNode struct{ e expr }
	ifNode     struct {
		conds  []expr
		bodies [][]node // bodies[i] runs when conds[i] is the first true one
		els    []node
	}
	forNode struct {
		vars      []string // one name, or several to unpack each item
		iter      expr
		cond      expr // optional filter: {% for x in xs if cond %}
		body, els []node
	}
	setNode struct {
		names []string // one name, or several to unpack
		ns    string   // set ns.attr = …: the namespace's name, names[0] the attribute
		e     expr     // nil for a block set: {% set x %}…{% endset %}
		body  []node
	}
	macroNode struct {
		name     string
		params   []string
		defaults []expr // per parameter, nil when required
		body     []node
	}
	loopControl struct{ kind string } // {% break %}, {% continue %}
	// callBlock is {% call[(params)] m(args) %}…{% endcall %}: m called
	// with caller, a macro of the block's body (and params), as a keyword.
	callBlock struct {
		call   callExpr
		caller macroNode
	}
	// filterBlock is {% filter f(args) %}…{% endfilter %}: the body's output
	// bound to filterBody and passed through e (filterBody | f(args)).
	filterBlock struct {
		e    expr
		body []node
	}
	// generationBlock is transformers' {% generation %}…{% endgeneration %},
	// which marks the assistant's tokens and renders its body as it is.
	generationBlock struct{ body []node }
)

// filterBody is the name a filter block's output is bound to.
const filterBody = "\x00filter"

// node is a statement.
type node any

// Expressions.
type (
	literal  struct{ v any }
	nameExpr struct{ name string }
	listExpr struct {
		items []expr
		tuple bool // (a, b), (), or a bare a, b: a tuple
	}
	dictExpr struct{ keys, values []expr }
	attrExpr struct {
		x    expr
		name string
	}
	indexExpr struct{ x, index expr }
	sliceExpr struct{ x, lo, hi, step expr } // nil bounds are absent
	callExpr  struct {
		fn     expr
		args   []expr
		kwargs []kwExpr
	}
	filterExpr struct {
		x      expr
		name   string
		args   []expr
		kwargs []kwExpr
	}
	testExpr struct {
		x    expr
		name string
		args []expr
		not  bool
	}
	unaryExpr struct {
		op string
		x  expr
	} // not, -, +
	binaryExpr struct {
		op   string // or and == != < <= > >= in "not in" + - ~ * / // % **
		x, y expr
	}
	condExpr struct{ cond, then, els expr } // then if cond else els
)

type kwExpr struct {
	name string // "": **e, a mapping's items
	e    expr
}

// unpackExpr is *e among a call's arguments: the items of e.
type unpackExpr struct{ e expr }

// expr is an expression.
type expr any

// parser walks the items; exprParser the tokens of one tag.
type parser struct {
	items []item
	pos   int
}

// parseTemplate parses the items into statements.
func parseTemplate(items []item) ([]node, error) {
	p := &parser{items: items}
	body, end, err := p.block()
	if err != nil {
		return nil, err
	}
	if end != nil {
		return nil, p.errorf(end, "unexpected {%% %s %%}", end.toks[0].text)
	}
	return body, nil
}

func (p *parser) errorf(it *item, format string, args ...any) error {
	return fmt.Errorf("%w: line %d: %s", ErrSyntax, it.line, fmt.Sprintf(format, args...))
}

// block parses statements until a tag that ends a block (endfor, else, …)
// and returns that tag unconsumed-by-content, or nil at the end of input.
func (p *parser) block() ([]node, *item, error) {
	var out []node
	for p.pos < len(p.items) {
		it := &p.items[p.pos]
		p.pos++
		switch it.kind {
		case itemText:
			out = append(out, textNode{it.text})
		case itemOutput:
			e := &exprParser{toks: it.toks, line: it.line}
			x, err := e.parseAll()
			if err != nil {
				return nil, nil, err
			}
			out = append(out, outputNode{x})
		case itemStmt:
			if len(it.toks) == 0 || it.toks[0].kind != tokName {
				return nil, nil, p.errorf(it, "empty or malformed tag")
			}
			switch kw := it.toks[0].text; kw {
			case "endif", "elif", "else", "endfor", "endset", "endmacro", "endcall", "endfilter", "endgeneration":
				return out, it, nil
			case "if", "for", "set", "macro", "call":
				parse := map[string]func(*item) (node, error){"if": p.parseIf, "for": p.parseFor, "set": p.parseSet,
					"macro": p.parseMacro, "call": p.parseCall}[kw]
				n, err := parse(it)
				if err != nil {
					return nil, nil, err
				}
				out = append(out, n)
			case "break", "continue":
				out = append(out, loopControl{kw})
			case "filter":
				toks := append([]token{{kind: tokName, text: filterBody}, {kind: tokOp, text: "|"}}, it.toks[1:]...)
				e := &exprParser{toks: toks, line: it.line}
				x, err := e.parseAll()
				if err != nil {
					return nil, nil, err
				}
				body, _, err := p.expect(it, "endfilter")
				if err != nil {
					return nil, nil, err
				}
				out = append(out, filterBlock{x, body})
			case "generation":
				if len(it.toks) != 1 {
					return nil, nil, p.errorf(it, "{%% generation %%} takes no arguments")
				}
				body, _, err := p.expect(it, "endgeneration")
				if err != nil {
					return nil, nil, err
				}
				out = append(out, generationBlock{body})
			default:
				return nil, nil, p.errorf(it, "unknown tag {%% %s %%}", kw)
			}
		}
	}
	return out, nil, nil
}

// expect parses a block and requires it to end with one of the names.
func (p *parser) expect(start *item, names ...string) ([]node, *item, error) {
	body, end, err := p.block()
	if err != nil {
		return nil, nil, err
	}
	if end == nil || !slices.Contains(names, end.toks[0].text) {
		return nil, nil, p.errorf(start, "{%% %s %%} without {%% %s %%}", start.toks[0].text, names[len(names)-1])
	}
	return body, end, nil
}

func (p *parser) parseIf(it *item) (node, error) {
	n := ifNode{}
	for {
		e := &exprParser{toks: it.toks[1:], line: it.line}
		cond, err := e.parseAll()
		if err != nil {
			return nil, err
		}
		body, end, err := p.expect(it, "elif", "else", "endif")
		if err != nil {
			return nil, err
		}
		n.conds, n.bodies = append(n.conds, cond), append(n.bodies, body)
		switch end.toks[0].text {
		case "elif":
			it = end
			continue
		case "else":
			if n.els, _, err = p.expect(it, "endif"); err != nil {
				return nil, err
			}
		}
		return n, nil
	}
}

func (p *parser) parseFor(it *item) (node, error) {
	e := &exprParser{toks: it.toks[1:], line: it.line}
	n := forNode{}
	for {
		name, err := e.name()
		if err != nil {
			return nil, err
		}
		n.vars = append(n.vars, name)
		if !e.accept(",") {
			break
		}
	}
	if !e.acceptName("in") {
		return nil, e.errorf("want 'in' in for")
	}
	var err error
	if n.iter, err = e.parseCondFree(); err != nil {
		return nil, err
	}
	if e.acceptName("if") {
		if n.cond, err = e.parseOr(); err != nil {
			return nil, err
		}
	}
	if err := e.done(); err != nil {
		return nil, err
	}
	body, end, err := p.expect(it, "else", "endfor")
	if err != nil {
		return nil, err
	}
	n.body = body
	if end.toks[0].text == "else" {
		if n.els, _, err = p.expect(it, "endfor"); err != nil {
			return nil, err
		}
	}
	return n, nil
}

func (p *parser) parseSet(it *item) (node, error) {
	e := &exprParser{toks: it.toks[1:], line: it.line}
	n := setNode{}
	name, err := e.name()
	if err != nil {
		return nil, err
	}
	if e.accept(".") {
		attr, err := e.name()
		if err != nil {
			return nil, err
		}
		n.ns, name = name, attr
	}
	n.names = []string{name}
	for n.ns == "" && e.accept(",") {
		name, err := e.name()
		if err != nil {
			return nil, err
		}
		n.names = append(n.names, name)
	}
	if e.atEnd() { // block set
		if n.body, _, err = p.expect(it, "endset"); err != nil {
			return nil, err
		}
		return n, nil
	}
	if !e.accept("=") {
		return nil, e.errorf("want '=' in set")
	}
	if n.e, err = e.parseAll(); err != nil {
		return nil, err
	}
	return n, nil
}

func (p *parser) parseMacro(it *item) (node, error) {
	e := &exprParser{toks: it.toks[1:], line: it.line}
	n := macroNode{}
	var err error
	if n.name, err = e.name(); err != nil {
		return nil, err
	}
	if !e.accept("(") {
		return nil, e.errorf("want '(' after the macro's name")
	}
	if err := e.parseParams(&n); err != nil {
		return nil, err
	}
	if err := e.done(); err != nil {
		return nil, err
	}
	if n.body, _, err = p.expect(it, "endmacro"); err != nil {
		return nil, err
	}
	return n, nil
}

// parseCall reads {% call[(params)] m(args) %}, then the body to {% endcall %}.
func (p *parser) parseCall(it *item) (node, error) {
	e := &exprParser{toks: it.toks[1:], line: it.line}
	n := callBlock{caller: macroNode{name: "caller"}}
	if e.accept("(") {
		if err := e.parseParams(&n.caller); err != nil {
			return nil, err
		}
	}
	x, err := e.parseAll()
	if err != nil {
		return nil, err
	}
	var ok bool
	if n.call, ok = x.(callExpr); !ok {
		return nil, p.errorf(it, "{%% call %%} wants a macro call")
	}
	if n.caller.body, _, err = p.expect(it, "endcall"); err != nil {
		return nil, err
	}
	return n, nil
}

// parseParams reads a macro's parameters after its '(' to the ')'.
func (e *exprParser) parseParams(n *macroNode) error {
	for !e.accept(")") {
		param, err := e.name()
		if err != nil {
			return err
		}
		var def expr
		if e.accept("=") {
			if def, err = e.parseExpr(); err != nil {
				return err
			}
		}
		n.params, n.defaults = append(n.params, param), append(n.defaults, def)
		if !e.accept(",") && !e.peekOp(")") {
			return e.errorf("want ',' or ')' in the macro's parameters")
		}
	}
	return nil
}

type exprParser struct {
	toks []token
	pos  int
	line int
}

func (e *exprParser) errorf(format string, args ...any) error {
	near := "the end of the tag"
	if e.pos < len(e.toks) {
		near = strconv.Quote(e.toks[e.pos].text)
	}
	return fmt.Errorf("%w: line %d: %s (near %s)", ErrSyntax, e.line, fmt.Sprintf(format, args...), near)
}

func (e *exprParser) atEnd() bool { return e.pos >= len(e.toks) }

func (e *exprParser) peek() (token, bool) {
	if e.atEnd() {
		return token{}, false
	}
	return e.toks[e.pos], true
}

func (e *exprParser) peekOp(op string) bool {
	t, ok := e.peek()
	return ok && t.kind == tokOp && t.text == op
}

func (e *exprParser) peekName(name string) bool {
	t, ok := e.peek()
	return ok && t.kind == tokName && t.text == name
}

func (e *exprParser) accept(op string) bool {
	if e.peekOp(op) {
		e.pos++
		return true
	}
	return false
}

func (e *exprParser) acceptName(name string) bool {
	if e.peekName(name) {
		e.pos++
		return true
	}
	return false
}

func (e *exprParser) name() (string, error) {
	t, ok := e.peek()
	if !ok || t.kind != tokName {
		return "", e.errorf("want a name")
	}
	e.pos++
	return t.text, nil
}

func (e *exprParser) done() error {
	if !e.atEnd() {
		return e.errorf("unexpected token")
	}
	return nil
}

// parseAll parses one expression (a bare tuple "a, b" is a list) and requires the end.
func (e *exprParser) parseAll() (expr, error) {
	x, err := e.parseExpr()
	if err != nil {
		return nil, err
	}
	if e.peekOp(",") {
		items := []expr{x}
		for e.accept(",") && !e.atEnd() {
			y, err := e.parseExpr()
			if err != nil {
				return nil, err
			}
			items = append(items, y)
		}
		x = listExpr{items, true}
	}
	return x, e.done()
}

// parseExpr: the conditional expression "a if cond else b", lowest precedence.
func (e *exprParser) parseExpr() (expr, error) {
	x, err := e.parseOr()
	if err != nil {
		return nil, err
	}
	for e.acceptName("if") {
		cond, err := e.parseOr()
		if err != nil {
			return nil, err
		}
		var els expr
		if e.acceptName("else") {
			if els, err = e.parseExpr(); err != nil {
				return nil, err
			}
		}
		x = condExpr{cond, x, els}
	}
	return x, nil
}

// parseCondFree is an expression without a trailing "if" (a for loop's iterable).
func (e *exprParser) parseCondFree() (expr, error) { return e.parseOr() }

func (e *exprParser) parseOr() (expr, error) {
	x, err := e.parseAnd()
	for err == nil && e.acceptName("or") {
		var y expr
		y, err = e.parseAnd()
		x = binaryExpr{"or", x, y}
	}
	return x, err
}

func (e *exprParser) parseAnd() (expr, error) {
	x, err := e.parseNot()
	for err == nil && e.acceptName("and") {
		var y expr
		y, err = e.parseNot()
		x = binaryExpr{"and", x, y}
	}
	return x, err
}

func (e *exprParser) parseNot() (expr, error) {
	if e.acceptName("not") {
		x, err := e.parseNot()
		return unaryExpr{"not", x}, err
	}
	return e.parseCompare()
}

func (e *exprParser) parseCompare() (expr, error) {
	x, err := e.parseMath1()
	if err != nil {
		return nil, err
	}
	for {
		op := ""
		switch t, _ := e.peek(); {
		case t.kind == tokOp && slices.Contains([]string{"==", "!=", "<", "<=", ">", ">="}, t.text):
			op = t.text
			e.pos++
		case t.kind == tokName && t.text == "in":
			op = "in"
			e.pos++
		case t.kind == tokName && t.text == "not" && e.pos+1 < len(e.toks) && e.toks[e.pos+1].text == "in":
			op = "not in"
			e.pos += 2
		default:
			return x, nil
		}
		y, err := e.parseMath1()
		if err != nil {
			return nil, err
		}
		x = binaryExpr{op, x, y}
	}
}

// parseMath1: + and - (and ~, which Jinja2 places just above them).
func (e *exprParser) parseMath1() (expr, error) {
	x, err := e.parseConcat()
	for err == nil && (e.peekOp("+") || e.peekOp("-")) {
		op := e.toks[e.pos].text
		e.pos++
		var y expr
		y, err = e.parseConcat()
		x = binaryExpr{op, x, y}
	}
	return x, err
}

func (e *exprParser) parseConcat() (expr, error) {
	x, err := e.parseMath2()
	for err == nil && e.accept("~") {
		var y expr
		y, err = e.parseMath2()
		x = binaryExpr{"~", x, y}
	}
	return x, err
}

func (e *exprParser) parseMath2() (expr, error) {
	x, err := e.parsePow()
	for err == nil && (e.peekOp("*") || e.peekOp("/") || e.peekOp("//") || e.peekOp("%")) {
		op := e.toks[e.pos].text
		e.pos++
		var y expr
		y, err = e.parsePow()
		x = binaryExpr{op, x, y}
	}
	return x, err
}

func (e *exprParser) parsePow() (expr, error) {
	x, err := e.parseUnary(true)
	for err == nil && e.accept("**") {
		var y expr
		y, err = e.parseUnary(true)
		x = binaryExpr{"**", x, y}
	}
	return x, err
}

// parseUnary: -x, +x, then a primary with its postfixes, filters and tests.
func (e *exprParser) parseUnary(withFilter bool) (expr, error) {
	var x expr
	var err error
	switch {
	case e.accept("-"):
		x, err = e.parseUnary(false)
		x = unaryExpr{"-", x}
	case e.accept("+"):
		x, err = e.parseUnary(false)
	default:
		x, err = e.parsePrimary()
		if err == nil {
			x, err = e.parsePostfix(x)
		}
	}
	if err != nil || !withFilter {
		return x, err
	}
	return e.parseFilters(x)
}

func (e *exprParser) parsePrimary() (expr, error) {
	t, ok := e.peek()
	if !ok {
		return nil, e.errorf("want an expression")
	}
	e.pos++
	switch t.kind {
	case tokString:
		s := t.text
		for { // adjacent literals concatenate
			if n, ok := e.peek(); ok && n.kind == tokString {
				s += n.text
				e.pos++
				continue
			}
			return literal{s}, nil
		}
	case tokInt:
		v, err := strconv.Atoi(t.text)
		if err != nil {
			return nil, e.errorf("bad integer")
		}
		return literal{v}, nil
	case tokFloat:
		v, err := strconv.ParseFloat(t.text, 64)
		if err != nil {
			return nil, e.errorf("bad number")
		}
		return literal{v}, nil
	case tokName:
		switch t.text {
		case "true", "True":
			return literal{true}, nil
		case "false", "False":
			return literal{false}, nil
		case "none", "None":
			return literal{nil}, nil
		}
		return nameExpr{t.text}, nil
	}
	switch t.text {
	case "(":
		if e.accept(")") {
			return listExpr{tuple: true}, nil
		}
		x, err := e.parseExpr()
		if err != nil {
			return nil, err
		}
		if e.peekOp(",") { // a tuple
			items := []expr{x}
			for e.accept(",") && !e.peekOp(")") {
				y, err := e.parseExpr()
				if err != nil {
					return nil, err
				}
				items = append(items, y)
			}
			x = listExpr{items, true}
		}
		if !e.accept(")") {
			return nil, e.errorf("want ')'")
		}
		return x, nil
	case "[":
		var l listExpr
		for !e.accept("]") {
			x, err := e.parseExpr()
			if err != nil {
				return nil, err
			}
			l.items = append(l.items, x)
			if !e.accept(",") && !e.peekOp("]") {
				return nil, e.errorf("want ',' or ']'")
			}
		}
		return l, nil
	case "{":
		var d dictExpr
		for !e.accept("}") {
			k, err := e.parseExpr()
			if err != nil {
				return nil, err
			}
			if !e.accept(":") {
				return nil, e.errorf("want ':' in a dict")
			}
			v, err := e.parseExpr()
			if err != nil {
				return nil, err
			}
			d.keys, d.values = append(d.keys, k), append(d.values, v)
			if !e.accept(",") && !e.peekOp("}") {
				return nil, e.errorf("want ',' or '}'")
			}
		}
		return d, nil
	}
	e.pos--
	return nil, e.errorf("unexpected token")
}

// parsePostfix: x.name, x[i], x[a:b:c], x(args).
func (e *exprParser) parsePostfix(x expr) (expr, error) {
	for {
		switch {
		case e.accept("."):
			t, ok := e.peek()
			if !ok || (t.kind != tokName && t.kind != tokInt) {
				return nil, e.errorf("want a name after '.'")
			}
			e.pos++
			if t.kind == tokInt {
				n, _ := strconv.Atoi(t.text)
				x = indexExpr{x, literal{n}}
			} else {
				x = attrExpr{x, t.text}
			}
		case e.accept("["):
			var parts [3]expr
			n, colons := 0, 0
			for !e.accept("]") {
				if e.accept(":") {
					colons++
					if n = colons; n > 2 {
						return nil, e.errorf("too many ':' in a slice")
					}
					continue
				}
				y, err := e.parseExpr()
				if err != nil {
					return nil, err
				}
				parts[n] = y
			}
			if colons == 0 {
				if parts[0] == nil {
					return nil, e.errorf("empty subscript")
				}
				x = indexExpr{x, parts[0]}
			} else {
				x = sliceExpr{x, parts[0], parts[1], parts[2]}
			}
		case e.peekOp("("):
			args, kwargs, err := e.parseArgs()
			if err != nil {
				return nil, err
			}
			x = callExpr{x, args, kwargs}
		default:
			return x, nil
		}
	}
}

// parseArgs parses "(a, b, k=v)".
func (e *exprParser) parseArgs() ([]expr, []kwExpr, error) {
	e.accept("(")
	var args []expr
	var kwargs []kwExpr
	for !e.accept(")") {
		if star := e.accept("*"); star || e.accept("**") { // f(*list), f(**dict): Python's unpacking
			v, err := e.parseExpr()
			if err != nil {
				return nil, nil, err
			}
			if star {
				args = append(args, unpackExpr{v})
			} else {
				kwargs = append(kwargs, kwExpr{"", v})
			}
		} else if t, ok := e.peek(); ok && t.kind == tokName && e.pos+1 < len(e.toks) && e.toks[e.pos+1].text == "=" && e.toks[e.pos+1].kind == tokOp {
			e.pos += 2
			v, err := e.parseExpr()
			if err != nil {
				return nil, nil, err
			}
			kwargs = append(kwargs, kwExpr{t.text, v})
		} else {
			v, err := e.parseExpr()
			if err != nil {
				return nil, nil, err
			}
			args = append(args, v)
		}
		if !e.accept(",") && !e.peekOp(")") {
			return nil, nil, e.errorf("want ',' or ')'")
		}
	}
	return args, kwargs, nil
}

// parseFilters: x | f(args) | g, and the tests x is [not] t(args).
func (e *exprParser) parseFilters(x expr) (expr, error) {
	for {
		switch {
		case e.accept("|"):
			name, err := e.name()
			if err != nil {
				return nil, err
			}
			f := filterExpr{x: x, name: name}
			if e.peekOp("(") {
				if f.args, f.kwargs, err = e.parseArgs(); err != nil {
					return nil, err
				}
			}
			x = f
		case e.acceptName("is"):
			t := testExpr{x: x, not: e.acceptName("not")}
			var err error
			if t.name, err = e.name(); err != nil {
				return nil, err
			}
			if e.peekOp("(") {
				if t.args, _, err = e.parseArgs(); err != nil {
					return nil, err
				}
			} else if n, ok := e.peek(); ok && (n.kind == tokString || n.kind == tokInt || n.kind == tokFloat ||
				n.kind == tokName && !slices.Contains([]string{"else", "or", "and", "if", "not", "in", "is"}, n.text)) {
				arg, err := e.parsePrimary()
				if err == nil {
					arg, err = e.parsePostfix(arg)
				}
				if err != nil {
					return nil, err
				}
				t.args = []expr{arg}
			}
			x = t
		default:
			return x, nil
		}
	}
}
