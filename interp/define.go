// Top-level defines that yaegi v0.16.1 cannot type.
//
// yaegi's global type analysis (gta.go) leaves the type of an index
// expression unset when the indexed operand has a compiled type, so
// `n := x[0]` with x from compiled code fails with "constant definition
// loop", and `n := x[0] + ""` or `n := *(&x[0])` panic inside yaegi. Both
// happen while compiling: nothing of the statement has run. The workaround
// evaluates each right-hand side once into a temporary any, reads the
// value's type, spells it as Go and asserts the temporary to it:
//
//	_toyv0 := func() any { return x[0] }()
//	n := _toyv0.(string)

package interp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"go/ast"
	"go/token"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"sync/atomic"
)

// defineWorkarounds counts the statements evaluated through the workaround
// (for tests).
var defineWorkarounds atomic.Int64

// compileFailure reports whether err is one of yaegi's failures to type a
// statement before running any of it: a "definition loop" from its global
// type analysis, or a panic raised while compiling.
func compileFailure(err error) bool {
	if err == nil {
		return false
	}
	var pe *PanicError
	if errors.As(err, &pe) {
		return pe.compile
	}
	return strings.Contains(err.Error(), "definition loop")
}

// compileStack reports whether a panic's stack is yaegi compiling, not
// running, code.
func compileStack(stack []byte) bool {
	return bytes.Contains(stack, []byte("(*Interpreter).CompileAST(")) &&
		!bytes.Contains(stack, []byte("(*Interpreter).Execute("))
}

// evalEach evaluates a statement chunk that failed to compile (err) one
// statement at a time, working around the defines yaegi cannot type. A
// statement runs only after the ones before it succeeded.
func (in *Interp) evalEach(ctx context.Context, c *chunk, err error) (reflect.Value, error) {
	stmts := c.stmts()
	if len(stmts) == 1 {
		return in.evalDefine(ctx, c, stmts[0], err)
	}
	var v reflect.Value
	for _, s := range stmts {
		sub, perr := c.sub(s)
		if perr != nil {
			return reflect.Value{}, err
		}
		if v, err = in.evalRetry(ctx, in.prepare(sub, false), sub); err != nil {
			return v, err
		}
	}
	return v, nil
}

// sub returns a chunk of one of c's statements, in its place in the cell.
func (c *chunk) sub(s ast.Stmt) (*chunk, error) {
	from, to := c.offset(s.Pos()), c.offset(s.End())
	line, _ := c.pos(s.Pos())
	sc, err := parseText(c.src[from:to], line)
	if err != nil || sc.kind != stmtChunk || len(sc.stmts()) != 1 {
		return nil, fmt.Errorf("interp: cannot isolate statement")
	}
	sc.start, sc.at, sc.key = c.start+from, c.at[from:to+1], c.key
	return sc, nil
}

// evalDefine evaluates the define s (`a := rhs`, `a, b := r1, r2`,
// `a, b := f()`, `v, ok := m[k]`) that yaegi failed to compile with err,
// through temporaries. Other statements come back with err.
func (in *Interp) evalDefine(ctx context.Context, c *chunk, s ast.Stmt, err error) (reflect.Value, error) {
	as, ok := s.(*ast.AssignStmt)
	if !ok || as.Tok != token.DEFINE || len(as.Rhs) == 0 {
		return reflect.Value{}, err
	}
	text := func(n ast.Node) string { return c.src[c.offset(n.Pos()):c.offset(n.End())] }
	var names []string
	for _, e := range as.Lhs {
		id, ok := e.(*ast.Ident)
		if !ok {
			return reflect.Value{}, err
		}
		names = append(names, id.Name)
	}
	n := len(names)
	tmps := make([]string, n)
	for i := range tmps {
		tmps[i] = fmt.Sprintf("_toyv%d", i)
	}
	line, col := c.pos(as.Pos())
	rhsText := text(as.Rhs[0])
	if len(as.Rhs) > 1 {
		rhsText = c.src[c.offset(as.Rhs[0].Pos()):c.offset(as.Rhs[len(as.Rhs)-1].End())]
	}
	fail := func(name, why string) error {
		return in.errAt(line, col, fmt.Sprintf("yaegi cannot type %s := %s, and the workaround cannot name the type of %s (%s); write %s := func() T { return %s }() with T its type",
			strings.Join(names, ", "), rhsText, name, why, name, rhsText))
	}

	// Static types where the source tells them, as Go text or as a
	// reflect.Type; else the dynamic type of the value is used.
	spelled := make([]string, n)
	static := make([]reflect.Type, n)
	var code string
	rhs := ast.Unparen(as.Rhs[0])
	switch {
	case len(as.Rhs) == n:
		var parts []string
		for i, e := range as.Rhs {
			parts = append(parts, "func() any { return "+c.codeOf(e)+" }()")
			spelled[i], static[i] = in.staticType(ctx, c, e, 0)
		}
		code = strings.Join(tmps, ", ") + " := " + strings.Join(parts, ", ")
	case n == 2 && commaOK(rhs):
		code = "_toyv0, _toyv1 := func() (any, any) { _toyA, _toyB := " + c.codeOf(rhs) + "; return _toyA, _toyB }()"
		spelled[0], static[0] = in.staticType(ctx, c, rhs, 0)
		spelled[1] = "bool"
	case isCall(rhs):
		code = strings.Join(tmps, ", ") + " := func() (" + strings.TrimSuffix(strings.Repeat("any, ", n), ", ") + ") { return " + c.codeOf(rhs) + " }()"
		for i := range n {
			spelled[i], static[i] = in.staticType(ctx, c, rhs, i)
		}
	default:
		return reflect.Value{}, fail(names[0], "unsupported form")
	}
	defineWorkarounds.Add(1)
	if _, err := in.eval(ctx, ";"+code); err != nil {
		return reflect.Value{}, in.undefinedErr(c, as, err)
	}
	defer in.clearTemps(tmps)

	var defs []string
	for i, name := range names {
		if name == "_" {
			continue
		}
		t := spelled[i]
		if t == "" && static[i] != nil {
			var ok bool
			if t, ok = in.spell(static[i]); !ok {
				return reflect.Value{}, fail(name, in.unnamed(static[i]))
			}
		}
		v, err := in.eval(ctx, tmps[i])
		if err != nil {
			return reflect.Value{}, err
		}
		if v.IsValid() && v.Kind() == reflect.Interface {
			v = v.Elem()
		}
		switch {
		case !v.IsValid() && t != "":
			// A nil interface: the zero value of the static type.
			defs = append(defs, fmt.Sprintf("%s := func() %s { var r %s; return r }()", name, t, t))
			continue
		case !v.IsValid():
			return reflect.Value{}, fail(name, "the value is nil")
		case t == "":
			var ok bool
			if t, ok = in.spell(v.Type()); !ok {
				return reflect.Value{}, fail(name, in.unnamed(v.Type()))
			}
		}
		defs = append(defs, fmt.Sprintf("%s := %s.(%s)", name, tmps[i], t))
	}
	if _, err := in.eval(ctx, ";"+strings.Join(defs, "; ")); err != nil {
		return reflect.Value{}, fail(strings.Join(names, ", "), in.fixErr(err, 0).Error())
	}
	return reflect.Value{}, nil
}

// clearTemps drops the temporaries' values, so they hold nothing alive.
func (in *Interp) clearTemps(tmps []string) {
	var b strings.Builder
	for _, t := range tmps {
		fmt.Fprintf(&b, "%s = nil\n", t)
	}
	in.eval(context.Background(), b.String())
}

// commaOK reports whether e yields a value and a boolean in a two-name
// define: a map index, a type assertion or a receive.
func commaOK(e ast.Expr) bool {
	switch x := e.(type) {
	case *ast.IndexExpr, *ast.TypeAssertExpr:
		return true
	case *ast.UnaryExpr:
		return x.Op == token.ARROW
	}
	return false
}

func isCall(e ast.Expr) bool { _, ok := e.(*ast.CallExpr); return ok }

// staticType returns the type of e's result i when the source tells it
// without running anything: as text for a type assertion, else as the
// element type of an indexed name or the result type of a called name.
func (in *Interp) staticType(ctx context.Context, c *chunk, e ast.Expr, i int) (string, reflect.Type) {
	text := func(n ast.Node) string { return c.src[c.offset(n.Pos()):c.offset(n.End())] }
	switch x := ast.Unparen(e).(type) {
	case *ast.TypeAssertExpr:
		if x.Type != nil {
			return text(x.Type), nil
		}
	case *ast.IndexExpr:
		if !pure(x.X) {
			return "", nil
		}
		v, err := in.eval(ctx, text(x.X))
		if err != nil || !v.IsValid() {
			return "", nil
		}
		t := v.Type()
		if t.Kind() == reflect.Pointer && t.Elem().Kind() == reflect.Array {
			t = t.Elem()
		}
		switch t.Kind() {
		case reflect.Slice, reflect.Array, reflect.Map:
			return "", t.Elem()
		case reflect.String:
			return "byte", nil
		}
	case *ast.CallExpr:
		if !pure(x.Fun) {
			return "", nil
		}
		v, err := in.eval(ctx, text(x.Fun))
		if err != nil || !v.IsValid() || v.Kind() != reflect.Func || i >= v.Type().NumOut() {
			return "", nil
		}
		return "", v.Type().Out(i)
	}
	return "", nil
}

// spell writes t as Go source valid in the interpreter's scope: predeclared
// types, exported types of imported packages, and pointers, slices, arrays,
// maps, channels and functions of those.
func (in *Interp) spell(t reflect.Type) (string, bool) {
	if t.Name() != "" {
		if t.PkgPath() == "" {
			if t == errorType {
				return "error", true
			}
			return t.Name(), true
		}
		if !token.IsExported(t.Name()) || strings.ContainsAny(t.Name(), "[]") {
			return "", false
		}
		var pkgs []string
		for name, path := range in.imports {
			if path == t.PkgPath() {
				pkgs = append(pkgs, name)
			}
		}
		if len(pkgs) == 0 {
			return "", false
		}
		sort.Strings(pkgs)
		return pkgs[0] + "." + t.Name(), true
	}
	elem := func(prefix string, e reflect.Type) (string, bool) {
		s, ok := in.spell(e)
		return prefix + s, ok
	}
	switch t.Kind() {
	case reflect.Pointer:
		return elem("*", t.Elem())
	case reflect.Slice:
		return elem("[]", t.Elem())
	case reflect.Array:
		return elem(fmt.Sprintf("[%d]", t.Len()), t.Elem())
	case reflect.Map:
		k, ok := in.spell(t.Key())
		if !ok {
			return "", false
		}
		return elem("map["+k+"]", t.Elem())
	case reflect.Chan:
		s, ok := in.spell(t.Elem())
		if strings.HasPrefix(s, "<-") {
			s = "(" + s + ")"
		}
		switch t.ChanDir() {
		case reflect.RecvDir:
			return "<-chan " + s, ok
		case reflect.SendDir:
			return "chan<- " + s, ok
		}
		return "chan " + s, ok
	case reflect.Func:
		var ins, outs []string
		for i := range t.NumIn() {
			s, ok := in.spell(t.In(i))
			if !ok {
				return "", false
			}
			if t.IsVariadic() && i == t.NumIn()-1 {
				s = "..." + strings.TrimPrefix(s, "[]")
			}
			ins = append(ins, s)
		}
		for i := range t.NumOut() {
			s, ok := in.spell(t.Out(i))
			if !ok {
				return "", false
			}
			outs = append(outs, s)
		}
		s := "func(" + strings.Join(ins, ", ") + ")"
		switch len(outs) {
		case 0:
		case 1:
			s += " " + outs[0]
		default:
			s += " (" + strings.Join(outs, ", ") + ")"
		}
		return s, true
	case reflect.Interface:
		if t.NumMethod() == 0 {
			return "any", true
		}
	case reflect.Struct:
		if t.NumField() == 0 {
			return "struct{}", true
		}
	}
	return "", false
}

// unnamed says why t cannot be spelled, suggesting an import where one
// would do.
func (in *Interp) unnamed(t reflect.Type) string {
	why := fmt.Sprintf("%v is not a type this cell can name", t)
	for t != nil {
		if t.Name() != "" {
			if t.PkgPath() != "" && token.IsExported(t.Name()) && !strings.ContainsAny(t.Name(), "[]") {
				if _, ok := in.spell(t); !ok {
					why += fmt.Sprintf("; import %q first", t.PkgPath())
				}
			}
			break
		}
		switch t.Kind() {
		case reflect.Pointer, reflect.Slice, reflect.Array, reflect.Chan:
			t = t.Elem()
		case reflect.Map:
			if _, ok := in.spell(t.Key()); !ok {
				t = t.Key()
			} else {
				t = t.Elem()
			}
		default:
			t = nil
		}
	}
	return why
}

// undefinedRE finds the name in yaegi's reports of an undefined identifier,
// which inside the workaround's closure come as "incomplete type NAME".
var undefinedRE = regexp.MustCompile(`(?:undefined: |incomplete type )(\w+)`)

// undefinedErr turns the workaround's failure over an undefined name into
// the plain error at the name's first use in s; other errors pass through.
func (in *Interp) undefinedErr(c *chunk, s *ast.AssignStmt, err error) error {
	m := undefinedRE.FindStringSubmatch(err.Error())
	if m == nil {
		return err
	}
	var at token.Pos
	for _, e := range s.Rhs {
		ast.Inspect(e, func(n ast.Node) bool {
			if id, ok := n.(*ast.Ident); ok && id.Name == m[1] && at == token.NoPos {
				at = id.Pos()
			}
			return at == token.NoPos
		})
	}
	if at == token.NoPos {
		return err
	}
	line, col := c.pos(at)
	return in.errAt(line, col, "undefined: "+m[1])
}

// varAsDefine rewrites a chunk holding one untyped var declaration,
// `var a, b = r1, r2`, as the define `a, b := r1, r2` on the same line (at
// top level both declare globals), so that a declaration yaegi cannot type
// takes the define workaround. Other chunks are not rewritten.
func varAsDefine(c *chunk) (*chunk, bool) {
	if len(c.file.Decls) != 1 {
		return nil, false
	}
	g, ok := c.file.Decls[0].(*ast.GenDecl)
	if !ok || g.Tok != token.VAR || g.Lparen.IsValid() || len(g.Specs) != 1 {
		return nil, false
	}
	vs := g.Specs[0].(*ast.ValueSpec)
	if vs.Type != nil || len(vs.Values) == 0 {
		return nil, false
	}
	d, err := c.rewrite([]edit{
		{c.offset(g.Pos()), c.offset(vs.Names[0].Pos()), ""},
		{c.offset(vs.Names[len(vs.Names)-1].End()), c.offset(vs.Values[0].Pos()), " := "},
	})
	if err != nil || d.kind != stmtChunk {
		return nil, false
	}
	return d, true
}
