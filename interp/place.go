// Where errors and panics stand in the user's cell or file.
//
// The text yaegi evaluates is the user's rewritten (chunk.go, cross.go,
// define.go) and wrapped, so yaegi's own positions would point into text the
// user never wrote. Each run of the user's text reaches yaegi behind a line
// directive (/*line _toy7/_.go:3:9*/, see chunk.code) naming the cell or
// file it came from (the 7th evaluated) and its line and column there;
// yaegi's errors and panics then carry those places, and the functions here
// write them as the user knows them: "3:9: msg" in a cell, "file.go:3:9:
// msg" in a file.
//
// A panic yaegi v0.16.1 places at the start of the function it was raised
// in, whatever statement raised it (runCfg looks the statement up by an
// exec function it never sets). placePanic finds the statement where it
// can: each function body, top-level statement and chunk of var
// declarations is a scope, noted with the places in it where a panic of
// each kind can be raised (index and slice expressions, calls of panic);
// where the scope holds one place of the panic's kind, that is where it was
// raised, else the scope's lines are told.

package interp

import (
	"context"
	"errors"
	"fmt"
	"go/ast"
	"go/token"
	"reflect"
	"regexp"
	"strconv"
	"strings"
)

// yaegiPlace matches a place as yaegi writes it: a directive's file (its
// number captured) or its own "_.go" (which it leaves out in some
// messages), a line and a column.
const yaegiPlace = `(?:(?:_toy(\d+)/)?_\.go:)?(\d+):(\d+): `

var (
	yaegiPos  = regexp.MustCompile(`^` + yaegiPlace)
	yaegiKey  = regexp.MustCompile(`_toy(\d+)/_\.go:`)
	toyMainRE = regexp.MustCompile(`\b_toyMain\d+\b`)
)

// fixErr turns an error of yaegi's into an EvalError at its place in the
// cell or file. A place in text of toy's own (without a directive) is that
// text's line: with line > 0 it is taken as the cell's line where that text
// starts (a synthetic import chunk's).
func (in *Interp) fixErr(err error, line int) error {
	if err == nil {
		return nil
	}
	var pe *PanicError
	var se *SyntaxError
	var ee *EvalError
	if errors.As(err, &pe) || errors.As(err, &se) || errors.As(err, &ee) || errors.Is(err, ErrInterrupted) {
		return err
	}
	msg := err.Error()
	e := &EvalError{File: in.files[in.nsrc], Msg: msg, Err: err}
	if m := yaegiPos.FindStringSubmatch(msg); m != nil {
		e.Line, _ = strconv.Atoi(m[2])
		e.Col, _ = strconv.Atoi(m[3])
		e.Msg = msg[len(m[0]):]
		if m[1] != "" {
			src, _ := strconv.Atoi(m[1])
			e.File = in.files[src]
		} else if line > 0 {
			e.Line += line - 1
		}
	}
	e.Msg = in.unkey(e.Msg)
	return e
}

// unkey rewrites the places a message holds ("previous declaration at
// _toy3/_.go:4:1") as the user knows them.
func (in *Interp) unkey(msg string) string {
	return yaegiKey.ReplaceAllStringFunc(msg, func(k string) string {
		src, _ := strconv.Atoi(yaegiKey.FindStringSubmatch(k)[1])
		if f := in.files[src]; f != "" {
			return f + ":"
		}
		return ""
	})
}

// errAt is an error of toy's own at line:col of the cell or file being
// evaluated.
func (in *Interp) errAt(line, col int, msg string) *EvalError {
	return &EvalError{File: in.files[in.nsrc], Line: line, Col: col, Msg: msg}
}

// A scope is a stretch of a cell or file that yaegi places every panic
// raised in it at the start of: a function body, a top-level statement, or
// a chunk's var declarations (initialised together).
type scope struct {
	from, to lc
	sites    [nSiteKinds][]lc // where each kind of panic can be raised, outside nested function literals
}

// The kinds of panics whose places a scope notes.
const (
	siteIndex = iota // x[i]: reflect.Value.Index
	siteSlice        // x[i:j]: reflect.Value.Slice
	sitePanic        // panic(v)
	nSiteKinds
)

func (a lc) before(b lc) bool { return a.line < b.line || a.line == b.line && a.col <= b.col }

// scopes returns the scopes of a cell or file's chunks, as split gave them.
func scopes(chunks []*chunk) []scope {
	var out []scope
	for _, c := range chunks {
		switch c.kind {
		case stmtChunk:
			for _, s := range c.stmts() {
				out = c.scope(out, s.Pos(), s.End(), s)
			}
		case declChunk:
			var vars []ast.Node
			for _, d := range c.file.Decls {
				switch d := d.(type) {
				case *ast.FuncDecl:
					if d.Body != nil {
						out = c.scope(out, d.Body.Lbrace, d.Body.End(), d.Body)
					}
				case *ast.GenDecl:
					if d.Tok == token.VAR {
						vars = append(vars, d)
					}
				}
			}
			if len(vars) > 0 {
				out = c.scope(out, vars[0].Pos(), vars[len(vars)-1].End(), vars...)
			}
		}
	}
	return out
}

// scope appends to out the scope [from, to) holding nodes, and those of
// the function literals in them.
func (c *chunk) scope(out []scope, from, to token.Pos, nodes ...ast.Node) []scope {
	at := func(p token.Pos) lc { l, col := c.pos(p); return lc{int32(l), int32(col)} }
	sc := scope{from: at(from), to: at(to)}
	for _, n := range nodes {
		ast.Inspect(n, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.FuncLit:
				out = c.scope(out, n.Body.Lbrace, n.Body.End(), n.Body)
				return false
			case *ast.IndexExpr:
				sc.sites[siteIndex] = append(sc.sites[siteIndex], at(n.Pos()))
			case *ast.SliceExpr:
				sc.sites[siteSlice] = append(sc.sites[siteSlice], at(n.Pos()))
			case *ast.CallExpr:
				if id, ok := n.Fun.(*ast.Ident); ok && id.Name == "panic" {
					sc.sites[sitePanic] = append(sc.sites[sitePanic], at(n.Pos()))
				}
			}
			return true
		})
	}
	return append(out, sc)
}

// siteKind says which kind of place raised a panic, from the stack yaegi
// recovered it on (innermost frames first, yaegi's re-raisings above the
// first panic): the function called right below the first panic. -1 where
// it is none of the kinds.
func siteKind(stack []byte) int {
	lines := strings.Split(string(stack), "\n")
	origin := ""
	for i, l := range lines {
		if strings.HasPrefix(l, "panic(") && i+2 < len(lines) {
			origin = lines[i+2] // after the panic's own "\tfile:line"
		}
	}
	switch {
	case strings.HasPrefix(origin, "reflect.Value.Index("):
		return siteIndex
	case strings.HasPrefix(origin, "reflect.Value.Slice(") || strings.HasPrefix(origin, "reflect.Value.Slice3("):
		return siteSlice
	case strings.HasPrefix(origin, "github.com/traefik/yaegi/interp._panic."):
		return sitePanic
	}
	return -1
}

// placePanic gives a panic of kind (siteKind) its place, from where yaegi
// placed it (see the top of this file).
func (in *Interp) placePanic(pe *PanicError, at *panicSite, kind int) {
	if at == nil {
		return
	}
	pe.src, pe.File = at.src, in.files[at.src]
	p := lc{int32(at.line), int32(at.col)}
	var in1 *scope // the innermost scope holding p
	for i, sc := range in.scopes[at.src] {
		if sc.from.before(p) && p.before(sc.to) && (in1 == nil || in1.from.before(sc.from) && sc.to.before(in1.to)) {
			in1 = &in.scopes[at.src][i]
		}
	}
	switch {
	case in1 == nil:
		pe.Line, pe.Col = at.line, at.col // yaegi's text, or a scope not noted
	case kind >= 0 && len(in1.sites[kind]) == 1:
		pe.Line, pe.Col = int(in1.sites[kind][0].line), int(in1.sites[kind][0].col)
	case in1.from.line == in1.to.line:
		pe.Line = int(in1.from.line)
	}
	switch {
	case pe.Line == 0:
		pe.Where = fmt.Sprintf("lines %d-%d", in1.from.line, in1.to.line)
		if pe.File != "" {
			pe.Where = fmt.Sprintf("%s:%d-%d", pe.File, in1.from.line, in1.to.line)
		}
	case pe.File == "":
		pe.Where = fmt.Sprintf("line %d", pe.Line)
	case pe.Col == 0:
		pe.Where = fmt.Sprintf("%s:%d", pe.File, pe.Line)
	default:
		pe.Where = fmt.Sprintf("%s:%d:%d", pe.File, pe.Line, pe.Col)
	}
	// A cell's statements run in yaegi's function main, some of them in a
	// function literal of toy's (prepare, evalDefine); a file's func main
	// is renamed (evalDeclsOnce).
	if fn := toyMainRE.ReplaceAllString(at.fn, "main"); fn != "main" && fn != "main.func" {
		pe.Where += ", in " + fn + "(...)"
	}
}

// placeErr completes an error of the cell or file just evaluated, whose
// chunks (as split, before any rewrite) are given: a syntax error gets the
// file, a panic of reflect's over an index or slice reads as compiled Go's.
func (in *Interp) placeErr(err error, chunks []*chunk) error {
	var se *SyntaxError
	var pe *PanicError
	switch {
	case errors.As(err, &se):
		if se.File == "" {
			se.File = in.files[in.nsrc]
		}
	case errors.As(err, &pe):
		in.explainBounds(pe, chunks)
	}
	return err
}

// reflectBounds are the panics of reflect's Index and Slice, which yaegi
// calls for x[i] and x[i:j], by what compiled Go calls the same mistake.
var reflectBounds = map[string]string{
	"reflect: slice index out of range":                     "index out of range",
	"reflect: array index out of range":                     "index out of range",
	"reflect: string index out of range":                    "index out of range",
	"reflect.Value.Slice: slice index out of bounds":        "slice bounds out of range",
	"reflect.Value.Slice: string slice index out of bounds": "slice bounds out of range",
	"reflect.Value.Slice3: slice index out of bounds":       "slice bounds out of range",
}

// boundsError is a bounds check failure as the Go runtime reports it (a
// runtime.Error).
type boundsError string

func (e boundsError) Error() string { return "runtime error: " + string(e) }
func (boundsError) RuntimeError()   {}

// explainBounds rewrites a reflect panic of reflectBounds as compiled Go
// writes it: "runtime error: index out of range [5] with length 2". The
// numbers are read back where that can be done without running anything
// again and without being wrong: where the panic stands in a statement or
// var declaration at the top level of the cell or file just evaluated, the
// index or slice expression placePanic found (or where it found none, each
// in that statement outside function literals) is evaluated again if it
// reads variables only, none of them defined by that statement: those
// variables still hold what they held when it failed. Where exactly one is
// out of range, its numbers are told.
func (in *Interp) explainBounds(pe *PanicError, chunks []*chunk) {
	s, _ := pe.Value.(string)
	what, ok := reflectBounds[s]
	if !ok {
		return
	}
	pe.Value = boundsError(what)
	if pe.src != in.nsrc || pe.Line == 0 {
		return
	}
	cands := boundsExprs(chunks, pe.Line, pe.Col)
	for _, b := range cands {
		if l, col := b.c.pos(b.e.Pos()); l == pe.Line && col == pe.Col {
			cands = []boundsCandidate{b}
			break
		}
	}
	var details []string
	for _, b := range cands {
		if d := in.boundsDetail(b.c, b.e, b.defined); d != "" && strings.HasPrefix(what, d[:strings.IndexByte(d, ' ')]) {
			details = append(details, d)
		}
	}
	if len(details) == 1 {
		pe.Value = boundsError(details[0])
	}
}

// boundsDetail evaluates the operands of the index or slice expression e
// of chunk c and returns the runtime's message where they are out of range
// ("index out of range [5] with length 2", "slice bounds out of range [:9]
// with capacity 4"), "" where they are not or cannot be read.
func (in *Interp) boundsDetail(c *chunk, e ast.Expr, defined map[string]bool) string {
	val := func(x ast.Expr) (reflect.Value, bool) {
		if x == nil || !readOnly(x, defined) {
			return reflect.Value{}, false
		}
		v, err := in.eval(context.Background(), c.src[c.offset(x.Pos()):c.offset(x.End())])
		for err == nil && v.IsValid() && (v.Kind() == reflect.Interface || v.Kind() == reflect.Pointer && v.Type().Elem().Kind() == reflect.Array) {
			v = v.Elem()
		}
		return v, err == nil && v.IsValid()
	}
	num := func(x ast.Expr) (int64, bool) {
		v, ok := val(x)
		switch {
		case !ok:
		case v.CanInt():
			return v.Int(), true
		case v.CanUint():
			return int64(v.Uint()), true
		}
		return 0, false
	}
	var x ast.Expr
	switch e := e.(type) {
	case *ast.IndexExpr:
		x = e.X
	case *ast.SliceExpr:
		x = e.X
	}
	v, ok := val(x)
	if !ok {
		return ""
	}
	switch v.Kind() {
	case reflect.Slice, reflect.Array, reflect.String:
	default:
		return ""
	}
	n, capacity := int64(v.Len()), "capacity"
	if v.Kind() == reflect.Slice {
		n = int64(v.Cap())
	} else if v.Kind() == reflect.String {
		capacity = "length"
	}
	switch e := e.(type) {
	case *ast.IndexExpr:
		i, ok := num(e.Index)
		switch {
		case !ok || i >= 0 && i < int64(v.Len()):
			return ""
		case i < 0:
			return fmt.Sprintf("index out of range [%d]", i)
		}
		return fmt.Sprintf("index out of range [%d] with length %d", i, v.Len())
	case *ast.SliceExpr:
		lo, hi, max := int64(0), int64(v.Len()), n
		for _, b := range []struct {
			x ast.Expr
			p *int64
		}{{e.Low, &lo}, {e.High, &hi}, {e.Max, &max}} {
			if b.x != nil {
				if *b.p, ok = num(b.x); !ok {
					return ""
				}
			}
		}
		const s = "slice bounds out of range "
		switch {
		case e.Slice3 && (max < 0 || max > n):
			return fmt.Sprintf(s+"[::%d] with %s %d", max, capacity, n)
		case e.Slice3 && (hi < 0 || hi > max):
			return fmt.Sprintf(s+"[:%d:%d]", hi, max)
		case e.Slice3 && (lo < 0 || lo > hi):
			return fmt.Sprintf(s+"[%d:%d:]", lo, hi)
		case !e.Slice3 && (hi < 0 || hi > n):
			return fmt.Sprintf(s+"[:%d] with %s %d", hi, capacity, n)
		case !e.Slice3 && (lo < 0 || lo > hi):
			return fmt.Sprintf(s+"[%d:%d]", lo, hi)
		}
	}
	return ""
}

// boundsCandidate is an index or slice expression, its chunk, and the
// names its statement or declaration defines.
type boundsCandidate struct {
	c       *chunk
	e       ast.Expr
	defined map[string]bool
}

// boundsExprs returns the index and slice expressions, outside function
// literals, of the top-level statement or var declaration of the cell that
// holds line:col; none where that is in a function.
func boundsExprs(chunks []*chunk, line, col int) []boundsCandidate {
	p := lc{int32(line), int32(col)}
	holds := func(c *chunk, n ast.Node) bool {
		l1, c1 := c.pos(n.Pos())
		l2, c2 := c.pos(n.End())
		return lc{int32(l1), int32(c1)}.before(p) && p.before(lc{int32(l2), int32(c2)})
	}
	for _, c := range chunks {
		var roots []ast.Node
		switch c.kind {
		case stmtChunk:
			for _, s := range c.stmts() {
				switch s.(type) {
				case *ast.ExprStmt, *ast.IncDecStmt, *ast.SendStmt, *ast.AssignStmt, *ast.DeclStmt:
					roots = append(roots, s)
				}
			}
		case declChunk:
			for _, d := range c.file.Decls {
				if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.VAR {
					roots = append(roots, g)
				}
			}
		}
		for _, r := range roots {
			if !holds(c, r) {
				continue
			}
			defined := map[string]bool{}
			var found []boundsCandidate
			inFunc := false
			ast.Inspect(r, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.FuncLit:
					inFunc = inFunc || holds(c, n.Body)
					return false
				case *ast.AssignStmt:
					if n.Tok == token.DEFINE {
						for _, l := range n.Lhs {
							if id, ok := l.(*ast.Ident); ok {
								defined[id.Name] = true
							}
						}
					}
				case *ast.ValueSpec:
					for _, id := range n.Names {
						defined[id.Name] = true
					}
				case *ast.IndexExpr, *ast.SliceExpr:
					found = append(found, boundsCandidate{c, n.(ast.Expr), defined})
				}
				return true
			})
			if inFunc {
				return nil
			}
			return found
		}
	}
	return nil
}

// readOnly reports whether evaluating e reads variables and nothing else,
// none of them one of defined.
func readOnly(e ast.Expr, defined map[string]bool) bool {
	ok := true
	ast.Inspect(e, func(n ast.Node) bool {
		switch n := n.(type) {
		case nil, *ast.BasicLit, *ast.ParenExpr, *ast.SelectorExpr, *ast.IndexExpr, *ast.StarExpr, *ast.BinaryExpr:
		case *ast.Ident:
			ok = ok && n.Name != "_" && !defined[n.Name]
		case *ast.UnaryExpr:
			ok = ok && n.Op != token.ARROW
		default:
			ok = false
		}
		return ok
	})
	return ok
}
