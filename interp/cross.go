// Interpreted values crossing into toy's compiled code: the rewrites that let
// yaegi v0.16.1 convert them, so that a user's own architecture, layer,
// schedule or backend plugs into toy interpreted exactly as compiled.
//
// yaegi hands an interpreted value to compiled code as a compiled interface
// (models.Model, nn.Layer …) by building one of the interface wrappers of the
// symbol tables (_github_com_toyml_toy_toy_models_Model …) around it. It does
// so for an argument held in a variable, a single assignment or variable
// declaration, a return and an append, but not for
//
//   - an argument that is itself a call, f(g()): g's result goes to f as it
//     is ("reflect: Call using *struct {…} as type models.Model");
//   - a field of a compiled struct literal, nn.Block{FFN: &MyFFN{…}};
//   - a conversion, engine.Model(m);
//   - a parallel assignment to a compiled interface, m.Embed, m.Norm =
//     &nn.Embedding{…}, &Norm{…} (its temporaries have the values' types).
//
// It also drops values in a parallel assignment that mixes a call, a
// composite literal or a receive with other values: x, y = f(), 2 leaves y
// alone, and m.Norm.W, m.Head = get(…), &nn.Linear{…} loses m.Head.
//
// Before a chunk is evaluated, assignEdits and crossEdits rewrite each of
// these into a form yaegi does convert, keeping what the code means and its
// lines: a call argument or a parallel assignment's value is parenthesised
// ((g()) is an ordinary operand to yaegi, not a nested call); a struct field
// or conversion becomes a typed variable's initialisation, func()
// _toyAs.nn_Layer { var _toyV _toyAs.nn_Layer = (x); return _toyV }(), with
// the interface spelled through package _toyAs that every interpreter
// imports; and a parallel assignment in a statement list goes through
// temporaries of its left-hand sides' types. The user's code stays plain Go.

package interp

import (
	"fmt"
	"go/ast"
	"go/token"
	"reflect"
	"sort"
	"strings"
	"sync"

	"github.com/traefik/yaegi/stdlib"
)

// asPath is the import path of the package of interface names, imported as
// asName in every interpreter. It is no real package.
const (
	asPath = "github.com/toyml/toy/interp/as"
	asName = "_toyAs"
)

// crossTables are the compiled packages by import path, and a name in asPath
// for each of their interfaces that yaegi can wrap (one with a wrapper in
// the tables).
var crossTables = sync.OnceValue(func() (t struct {
	pkgs map[string]map[string]reflect.Value
	as   map[reflect.Type]string
	syms map[string]reflect.Value
}) {
	t.pkgs = map[string]map[string]reflect.Value{}
	t.as = map[reflect.Type]string{}
	t.syms = map[string]reflect.Value{}
	var keys []string
	all := map[string]map[string]reflect.Value{}
	for _, m := range []map[string]map[string]reflect.Value{stdlib.Symbols, Symbols} {
		for k, v := range m {
			all[k] = v
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		i := strings.LastIndexByte(k, '/')
		if i < 0 {
			continue
		}
		path, pkg, table := k[:i], k[i+1:], all[k]
		t.pkgs[path] = table
		var names []string
		for name := range table {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			it := typeSymbol(table[name])
			if it == nil || it.Kind() != reflect.Interface || it.NumMethod() == 0 || !table["_"+name].IsValid() {
				continue
			}
			if _, done := t.as[it]; done {
				continue
			}
			fn := pkg + "_" + name
			for n := 2; t.syms[fn].IsValid(); n++ {
				fn = fmt.Sprintf("%s_%s%d", pkg, name, n)
			}
			t.as[it] = fn
			t.syms[fn] = reflect.Zero(reflect.PointerTo(it)) // a type, as the tables enter them
		}
	}
	return t
})

// asSymbols is asPath's table, for yaegi's Use.
func asSymbols() map[string]map[string]reflect.Value {
	return map[string]map[string]reflect.Value{asPath + "/as": crossTables().syms}
}

// typeSymbol returns the type a symbol table entry declares, or nil for a
// function, variable or constant: types are entered as (*T)(nil).
func typeSymbol(v reflect.Value) reflect.Type {
	if !v.IsValid() || v.Kind() != reflect.Pointer || !v.IsNil() {
		return nil
	}
	return v.Type().Elem()
}

// builtinTypes are the predeclared types, for map keys and conversions.
var builtinTypes = map[string]reflect.Type{
	"bool": reflect.TypeFor[bool](), "string": reflect.TypeFor[string](),
	"int": reflect.TypeFor[int](), "int8": reflect.TypeFor[int8](), "int16": reflect.TypeFor[int16](),
	"int32": reflect.TypeFor[int32](), "int64": reflect.TypeFor[int64](),
	"uint": reflect.TypeFor[uint](), "uint8": reflect.TypeFor[uint8](), "uint16": reflect.TypeFor[uint16](),
	"uint32": reflect.TypeFor[uint32](), "uint64": reflect.TypeFor[uint64](), "uintptr": reflect.TypeFor[uintptr](),
	"float32": reflect.TypeFor[float32](), "float64": reflect.TypeFor[float64](),
	"complex64": reflect.TypeFor[complex64](), "complex128": reflect.TypeFor[complex128](),
	"byte": reflect.TypeFor[byte](), "rune": reflect.TypeFor[rune](), "any": reflect.TypeFor[any](),
	"error": reflect.TypeFor[error](),
}

var builtinFuncs = map[string]bool{
	"append": true, "cap": true, "clear": true, "close": true, "complex": true, "copy": true, "delete": true,
	"imag": true, "len": true, "make": true, "max": true, "min": true, "new": true, "panic": true,
	"print": true, "println": true, "real": true, "recover": true,
}

// compiledType resolves a type expression naming compiled types only
// (pkg.T, *pkg.T, []pkg.T, [N]pkg.T, map[string]pkg.T …), or returns nil.
func (in *Interp) compiledType(e ast.Expr) reflect.Type {
	switch x := e.(type) {
	case *ast.ParenExpr:
		return in.compiledType(x.X)
	case *ast.Ident:
		return builtinTypes[x.Name]
	case *ast.SelectorExpr:
		id, ok := x.X.(*ast.Ident)
		if !ok {
			return nil
		}
		path, ok := in.imports[id.Name]
		if !ok {
			return nil
		}
		return typeSymbol(crossTables().pkgs[path][x.Sel.Name])
	case *ast.StarExpr:
		if t := in.compiledType(x.X); t != nil {
			return reflect.PointerTo(t)
		}
	case *ast.ArrayType:
		if t := in.compiledType(x.Elt); t != nil {
			return reflect.SliceOf(t) // an array's elements are all this needs
		}
	case *ast.MapType:
		k, v := in.compiledType(x.Key), in.compiledType(x.Value)
		if k != nil && v != nil && k.Comparable() {
			return reflect.MapOf(k, v)
		}
	}
	return nil
}

// importedFunc reports whether a call's function is a compiled package's
// (or an interpreted generic overlay's) function or type: pkg.F.
func (in *Interp) importedFunc(fun ast.Expr) bool {
	sel, ok := fun.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	id, ok := sel.X.(*ast.Ident)
	if !ok {
		return false
	}
	_, ok = in.imports[id.Name]
	return ok
}

// noteDecls records how many results the cell's functions and methods
// return, so that a call of one as the only argument of another can be
// told single-valued.
func (in *Interp) noteDecls(c *chunk) {
	if in.funcs == nil {
		in.funcs, in.methods = map[string]int{}, map[string]int{}
	}
	for _, d := range c.file.Decls {
		f, ok := d.(*ast.FuncDecl)
		if !ok {
			continue
		}
		n := results(f.Type)
		if f.Recv == nil {
			in.funcs[f.Name.Name] = n
		} else if old, seen := in.methods[f.Name.Name]; seen && old != n {
			in.methods[f.Name.Name] = -1
		} else {
			in.methods[f.Name.Name] = n
		}
	}
}

func results(t *ast.FuncType) int {
	if t.Results == nil {
		return 0
	}
	n := 0
	for _, f := range t.Results.List {
		n += max(1, len(f.Names))
	}
	return n
}

// singleResult reports whether call is known to return exactly one value.
func (in *Interp) singleResult(call *ast.CallExpr) bool {
	switch f := call.Fun.(type) {
	case *ast.Ident:
		return in.funcs[f.Name] == 1
	case *ast.SelectorExpr:
		return in.methods[f.Sel.Name] == 1
	case *ast.FuncLit:
		return results(f.Type) == 1
	}
	return false
}

// crossEdits returns the rewrites of c described at the top of this file.
func (in *Interp) crossEdits(c *chunk) []edit {
	var edits []edit
	span := func(e ast.Node) (int, int) { return c.offset(e.Pos()), c.offset(e.End()) }
	paren := func(e ast.Expr) {
		if _, ok := e.(*ast.ParenExpr); ok {
			return
		}
		from, to := span(e)
		edits = append(edits, edit{from, from, "("}, edit{to, to, ")"})
	}
	asIface := func(t reflect.Type) string {
		if t == nil || t.Kind() != reflect.Interface {
			return ""
		}
		return crossTables().as[t]
	}
	// through makes [from, e) … [e, to) a typed variable's initialisation.
	through := func(from int, e ast.Expr, to int, fn string) {
		t := asName + "." + fn
		edits = append(edits, edit{from, c.offset(e.Pos()), "func() " + t + " { var _toyV " + t + " = ("},
			edit{c.offset(e.End()), to, "); return _toyV }()"})
	}
	// Multi-valued right-hand sides that yaegi assigns wrongly beside others.
	parallel := func(rhs []ast.Expr) {
		for _, e := range rhs {
			switch x := e.(type) {
			case *ast.CallExpr, *ast.CompositeLit:
				paren(e)
			case *ast.UnaryExpr:
				if x.Op == token.ARROW {
					paren(e)
				}
			}
		}
	}
	elided := map[*ast.CompositeLit]reflect.Type{}
	ast.Inspect(c.file, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.AssignStmt:
			if len(x.Lhs) > 1 && len(x.Lhs) == len(x.Rhs) {
				parallel(x.Rhs)
			}
		case *ast.ValueSpec:
			if len(x.Names) > 1 && len(x.Names) == len(x.Values) {
				parallel(x.Values)
			}
		case *ast.CallExpr:
			if len(x.Args) == 1 && x.Ellipsis == token.NoPos {
				if fn := asIface(in.compiledType(x.Fun)); fn != "" {
					through(c.offset(x.Pos()), x.Args[0], c.offset(x.Rparen)+1, fn)
					return true
				}
			}
			if id, ok := x.Fun.(*ast.Ident); ok && (builtinFuncs[id.Name] || builtinTypes[id.Name] != nil) {
				return true
			}
			for _, a := range x.Args {
				ac, ok := a.(*ast.CallExpr)
				if !ok || in.importedFunc(ac.Fun) {
					continue
				}
				if id, ok := ac.Fun.(*ast.Ident); ok && (builtinFuncs[id.Name] || builtinTypes[id.Name] != nil) {
					continue
				}
				if len(x.Args) > 1 || in.singleResult(ac) {
					paren(a)
				}
			}
		case *ast.CompositeLit:
			t := elided[x]
			if x.Type != nil {
				t = in.compiledType(x.Type)
			}
			if t == nil {
				return true
			}
			for t.Kind() == reflect.Pointer {
				t = t.Elem()
			}
			switch t.Kind() {
			case reflect.Struct:
				for i, e := range x.Elts {
					var f reflect.StructField
					if kv, ok := e.(*ast.KeyValueExpr); ok {
						id, ok := kv.Key.(*ast.Ident)
						if !ok {
							continue
						}
						f, ok = t.FieldByName(id.Name)
						if !ok {
							continue
						}
						e = kv.Value
					} else if i < t.NumField() {
						f = t.Field(i)
					} else {
						continue
					}
					if id, ok := e.(*ast.Ident); ok && id.Name == "nil" {
						continue
					}
					if fn := asIface(f.Type); fn != "" {
						from, to := span(e)
						through(from, e, to, fn)
					} else if lit, ok := e.(*ast.CompositeLit); ok && lit.Type == nil {
						elided[lit] = f.Type
					}
				}
			case reflect.Slice, reflect.Array, reflect.Map:
				for _, e := range x.Elts {
					if kv, ok := e.(*ast.KeyValueExpr); ok {
						if lit, ok := kv.Key.(*ast.CompositeLit); ok && lit.Type == nil && t.Kind() == reflect.Map {
							elided[lit] = t.Key()
						}
						e = kv.Value
					}
					if lit, ok := e.(*ast.CompositeLit); ok && lit.Type == nil {
						elided[lit] = t.Elem()
					}
				}
			}
		}
		return true
	})
	return edits
}

// crossRewrite returns c with crossEdits applied (c itself when there are
// none). The text keeps its place in the cell.
func (in *Interp) crossRewrite(c *chunk) *chunk {
	if c.kind == declChunk {
		in.noteDecls(c)
	}
	if edits := in.assignEdits(c); len(edits) > 0 {
		if c2, err := c.rewrite(edits); err == nil && c2.kind == c.kind {
			c = c2
		}
	}
	edits := in.crossEdits(c)
	if len(edits) == 0 {
		return c
	}
	c2, err := c.rewrite(edits)
	if err != nil || c2.kind != c.kind {
		return c // cannot happen: the edits add parentheses and calls
	}
	return c2
}

// assignEdits rewrites each parallel assignment l1, l2 = r1, r2 that stands
// in a statement list, and whose left-hand sides hold no call or receive,
// as
//
//	_toyT1, _toyT2 := l1, l2; _toyT1 = r1; _toyT2 = r2; l1, l2 = _toyT1, _toyT2
//
// yaegi v0.16.1 stages a parallel assignment's values in temporaries of the
// right-hand sides' types, which fails where a left-hand side is a compiled
// interface and the value an interpreted type: m.Embed, m.Norm =
// &nn.Embedding{…}, &Norm{…} with Norm an nn.Layer. Here the temporaries
// have the left-hand sides' types, each value is converted by a single
// assignment, and Go's order holds: every right-hand side is evaluated, in
// order, before any variable is assigned. A blank left-hand side keeps its
// value's evaluation (_ = r) and has no temporary.
func (in *Interp) assignEdits(c *chunk) []edit {
	var edits []edit
	text := func(e ast.Node) string { return c.src[c.offset(e.Pos()):c.offset(e.End())] }
	list := func(stmts []ast.Stmt) {
		for _, s := range stmts {
			a, ok := s.(*ast.AssignStmt)
			if !ok || a.Tok != token.ASSIGN || len(a.Lhs) < 2 || len(a.Lhs) != len(a.Rhs) {
				continue
			}
			simple := true
			for _, l := range a.Lhs {
				simple = simple && !hasCallOrRecv(l) && !strings.Contains(text(l), "\n")
			}
			if !simple {
				continue
			}
			var tmps, lhs, reads, sets []string
			for i, l := range a.Lhs {
				if id, ok := l.(*ast.Ident); ok && id.Name == "_" {
					sets = append(sets, "_ = "+text(a.Rhs[i]))
					continue
				}
				in.ntemp++
				t := fmt.Sprintf("_toyT%d", in.ntemp)
				tmps, lhs, reads = append(tmps, t), append(lhs, text(l)), append(reads, text(l))
				sets = append(sets, t+" = "+text(a.Rhs[i]))
			}
			var b strings.Builder
			if len(tmps) > 0 {
				fmt.Fprintf(&b, "%s := %s; ", strings.Join(tmps, ", "), strings.Join(reads, ", "))
			}
			b.WriteString(strings.Join(sets, "; "))
			if len(tmps) > 0 {
				fmt.Fprintf(&b, "; %s = %s", strings.Join(lhs, ", "), strings.Join(tmps, ", "))
			}
			edits = append(edits, edit{c.offset(a.Pos()), c.offset(a.End()), b.String()})
		}
	}
	ast.Inspect(c.file, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.BlockStmt:
			list(x.List)
		case *ast.CaseClause:
			list(x.Body)
		case *ast.CommClause:
			list(x.Body)
		}
		return true
	})
	return edits
}

func hasCallOrRecv(n ast.Node) bool {
	found := false
	ast.Inspect(n, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.CallExpr, *ast.FuncLit:
			found = true
		case *ast.UnaryExpr:
			found = found || x.Op == token.ARROW
		}
		return !found
	})
	return found
}
