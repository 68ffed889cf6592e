// Splitting a cell into top-level chunks and rewriting the Go that yaegi
// v0.16.1 mishandles, before any of it reaches the interpreter.
package interp

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/scanner"
	"go/token"
	"sort"
	"strings"
)

// chunkKind says how a top-level chunk is evaluated.
type chunkKind int

const (
	importChunk chunkKind = iota // import declarations: deduplicated
	declChunk                    // func, type, var, const declarations
	stmtChunk                    // statements
)

// A chunk is a run of top-level source of one kind.
type chunk struct {
	kind  chunkKind
	line  int    // 1-based line of the chunk in the cell
	start int    // byte offset of the chunk in the cell
	src   string // the chunk's text
	file  *ast.File
	off   int // offset of src within the parsed text (after the wrapper prefix)
	fset  *token.FileSet
}

const (
	declPrefix = "package p;"
	stmtPrefix = "package p; func _() {"
)

// split cuts src at the semicolons (written or implied by a newline) that are
// outside any bracket, parses each piece as declarations or else as
// statements, and merges neighbours of the same kind. yaegi cannot evaluate
// imports, declarations and statements in one chunk.
func split(src string) ([]*chunk, error) {
	fset := token.NewFileSet()
	file := fset.AddFile("cell", -1, len(src))
	var s scanner.Scanner
	var scanErr *SyntaxError
	s.Init(file, []byte(src), func(pos token.Position, msg string) {
		if scanErr == nil {
			scanErr = &SyntaxError{Line: pos.Line, Col: pos.Column, Msg: msg, EOF: strings.Contains(msg, "not terminated")}
		}
	}, 0)
	var pieces [][2]int // byte ranges
	depth, start := 0, -1
	header := false // in the header of an if, for or switch: its semicolons do not end it
	for {
		pos, tok, lit := s.Scan()
		if tok == token.EOF {
			break
		}
		off := file.Offset(pos)
		switch tok {
		case token.IF, token.FOR, token.SWITCH:
			if depth == 0 {
				header = true
			}
		case token.LBRACE:
			if depth == 0 {
				header = false
			}
			depth++
		case token.LPAREN, token.LBRACK:
			depth++
		case token.RPAREN, token.RBRACK, token.RBRACE:
			depth--
		}
		if tok == token.SEMICOLON && depth == 0 && !header {
			if start >= 0 {
				end := off
				if lit == ";" {
					end++
				}
				pieces = append(pieces, [2]int{start, end})
				start = -1
			}
			continue
		}
		if start < 0 {
			start = off
		}
	}
	if scanErr != nil {
		return nil, scanErr
	}
	if start >= 0 {
		pieces = append(pieces, [2]int{start, len(src)})
	}

	var chunks []*chunk
	for _, p := range pieces {
		line := 1 + strings.Count(src[:p[0]], "\n")
		c, err := parseChunk(src[p[0]:p[1]], line)
		if err != nil {
			return nil, err
		}
		c.start = p[0]
		// Merge neighbouring declarations: they may refer to each other
		// forward, which yaegi resolves only within one evaluation.
		if n := len(chunks); n > 0 && c.kind == declChunk && chunks[n-1].kind == declChunk {
			prev := chunks[n-1]
			if m, err := parseChunk(src[prev.start:p[1]], prev.line); err == nil {
				m.start = prev.start
				chunks[n-1] = m
				continue
			}
		}
		chunks = append(chunks, c)
	}
	return chunks, nil
}

// parseChunk parses text as top-level declarations or else as statements.
func parseChunk(text string, line int) (*chunk, error) {
	fset := token.NewFileSet()
	if f, err := parser.ParseFile(fset, "", declPrefix+text, parser.SkipObjectResolution); err == nil {
		kind := declChunk
		if len(f.Imports) > 0 {
			kind = importChunk
			for _, d := range f.Decls {
				if g, ok := d.(*ast.GenDecl); !ok || g.Tok != token.IMPORT {
					kind = declChunk
				}
			}
		}
		return &chunk{kind: kind, line: line, src: text, file: f, off: len(declPrefix), fset: fset}, nil
	}
	f, err := parser.ParseFile(fset, "", stmtPrefix+text+"\n}", parser.SkipObjectResolution)
	if err != nil {
		return nil, syntaxError(err, line, strings.Count(text, "\n"))
	}
	return &chunk{kind: stmtChunk, line: line, src: text, file: f, off: len(stmtPrefix), fset: fset}, nil
}

// SyntaxError is a cell that does not parse as Go.
type SyntaxError struct {
	Line, Col int
	Msg       string
	EOF       bool // the input ended inside a statement: more may come
}

func (e *SyntaxError) Error() string {
	if e.Col == 0 {
		return fmt.Sprintf("syntax error: line %d: %s", e.Line, e.Msg)
	}
	return fmt.Sprintf("syntax error: %d:%d: %s", e.Line, e.Col, e.Msg)
}

func syntaxError(err error, line, extra int) error {
	if l, ok := err.(scanner.ErrorList); ok && len(l) > 0 {
		e := l[0]
		if e.Pos.Line > extra+1 {
			// The error is at the wrapper's closing brace: the input ended.
			return &SyntaxError{Line: line + extra, Col: 0, Msg: "unexpected end of input", EOF: true}
		}
		col := e.Pos.Column
		if e.Pos.Line == 1 {
			col -= len(stmtPrefix)
			if col < 1 {
				col = 1
			}
		}
		return &SyntaxError{Line: line + e.Pos.Line - 1, Col: col, Msg: e.Msg}
	}
	return &SyntaxError{Line: line, Col: 1, Msg: err.Error()}
}

// body returns the statements of a statement chunk.
func (c *chunk) stmts() []ast.Stmt {
	return c.file.Decls[0].(*ast.FuncDecl).Body.List
}

// offset maps a position in the parsed text to an offset in c.src.
func (c *chunk) offset(p token.Pos) int { return c.fset.Position(p).Offset - c.off }

// edit is a replacement of src[from:to].
type edit struct {
	from, to int
	text     string
}

// apply makes the edits from the last to the first; of two at one offset,
// the longer replacement is made first, so that an insertion there lands
// before it. Insertions at one offset keep their order.
func apply(src string, edits []edit) string {
	sort.SliceStable(edits, func(i, j int) bool {
		if edits[i].from != edits[j].from {
			return edits[i].from > edits[j].from
		}
		return edits[i].to > edits[j].to
	})
	for _, e := range edits {
		src = src[:e.from] + e.text + src[e.to:]
	}
	return src
}

// loopVarEdits gives each loop variable captured by a closure its own copy
// per iteration (Go 1.22 semantics; yaegi shares one variable across
// iterations). A three-clause loop whose body assigns the variable is left
// alone, since a copy would hide that assignment from the loop.
func (c *chunk) loopVarEdits() []edit {
	var edits []edit
	ast.Inspect(c.file, func(n ast.Node) bool {
		var names []*ast.Ident
		var body *ast.BlockStmt
		switch s := n.(type) {
		case *ast.RangeStmt:
			if s.Tok != token.DEFINE {
				return true
			}
			for _, e := range []ast.Expr{s.Key, s.Value} {
				if id, ok := e.(*ast.Ident); ok && id.Name != "_" {
					names = append(names, id)
				}
			}
			body = s.Body
		case *ast.ForStmt:
			init, ok := s.Init.(*ast.AssignStmt)
			if !ok || init.Tok != token.DEFINE {
				return true
			}
			for _, e := range init.Lhs {
				if id, ok := e.(*ast.Ident); ok && id.Name != "_" && !assigns(s.Body, id.Name) {
					names = append(names, id)
				}
			}
			body = s.Body
		default:
			return true
		}
		if len(names) == 0 || !hasFuncLit(body) {
			return true
		}
		var b strings.Builder
		for _, id := range names {
			fmt.Fprintf(&b, " %s := %s;", id.Name, id.Name)
		}
		at := c.offset(body.Lbrace) + 1
		edits = append(edits, edit{at, at, b.String()})
		return true
	})
	return edits
}

func hasFuncLit(n ast.Node) bool {
	found := false
	ast.Inspect(n, func(n ast.Node) bool {
		if _, ok := n.(*ast.FuncLit); ok {
			found = true
		}
		return !found
	})
	return found
}

func assigns(n ast.Node, name string) bool {
	found := false
	is := func(e ast.Expr) bool { id, ok := e.(*ast.Ident); return ok && id.Name == name }
	ast.Inspect(n, func(n ast.Node) bool {
		switch s := n.(type) {
		case *ast.AssignStmt:
			if s.Tok != token.DEFINE {
				for _, e := range s.Lhs {
					found = found || is(e)
				}
			}
		case *ast.IncDecStmt:
			found = found || is(s.X)
		case *ast.UnaryExpr:
			found = found || (s.Op == token.AND && is(s.X))
		}
		return !found
	})
	return found
}

// rangeIntEdits rewrites `for i := range n` over an integer (Go 1.22, which
// yaegi v0.16.1 rejects) into a three-clause loop. With all false only
// ranges over expressions that are integers by their syntax are rewritten;
// with all true every range whose operand is not obviously a slice, map,
// string or channel is (the caller retries so after a failure).
func (c *chunk) rangeIntEdits(all bool) []edit {
	return c.rangeIntEditsFunc(func(s *ast.RangeStmt) bool { return isIntExpr(s.X) || all && maybeInt(s.X) })
}

// rangeIntEditsFunc rewrites the ranges without a value that pick chooses.
func (c *chunk) rangeIntEditsFunc(pick func(*ast.RangeStmt) bool) []edit {
	var edits []edit
	n := 0
	ast.Inspect(c.file, func(node ast.Node) bool {
		s, ok := node.(*ast.RangeStmt)
		if !ok || s.Value != nil || (s.Key != nil && s.Tok != token.DEFINE) {
			return true
		}
		if !pick(s) {
			return true
		}
		n++
		key := fmt.Sprintf("_toyI%d", n)
		if id, ok := s.Key.(*ast.Ident); ok && id.Name != "_" {
			key = id.Name
		}
		x := c.src[c.offset(s.X.Pos()):c.offset(s.X.End())]
		lim := fmt.Sprintf("_toyN%d", n)
		text := fmt.Sprintf("for %s, %s := 0, int(%s); %s < %s; %s++ ", key, lim, x, key, lim, key)
		edits = append(edits, edit{c.offset(s.For), c.offset(s.Body.Lbrace), text})
		return true
	})
	return edits
}

func isIntExpr(e ast.Expr) bool {
	switch x := e.(type) {
	case *ast.BasicLit:
		return x.Kind == token.INT
	case *ast.ParenExpr:
		return isIntExpr(x.X)
	case *ast.BinaryExpr:
		return isIntExpr(x.X) || isIntExpr(x.Y)
	case *ast.CallExpr:
		if id, ok := x.Fun.(*ast.Ident); ok {
			switch id.Name {
			case "len", "cap", "int", "int64", "int32", "uint", "min", "max":
				return true
			}
		}
		if sel, ok := x.Fun.(*ast.SelectorExpr); ok {
			switch sel.Sel.Name {
			case "Len", "Rows", "Cols", "Dim", "VocabSize", "ContextLength", "Capacity":
				return true
			}
		}
	}
	return false
}

func maybeInt(e ast.Expr) bool {
	switch e.(type) {
	case *ast.Ident, *ast.SelectorExpr:
		return true
	}
	return false
}

// blockStmt reports whether s declares nothing outside itself, so wrapping
// it in a function literal changes nothing.
func blockStmt(s ast.Stmt) bool {
	switch s.(type) {
	case *ast.IfStmt, *ast.ForStmt, *ast.RangeStmt, *ast.SwitchStmt, *ast.TypeSwitchStmt, *ast.SelectStmt, *ast.BlockStmt:
		return true
	}
	return false
}

// hasTypeSwitch reports whether n holds a type switch outside any function
// literal: at top level these panic yaegi v0.16.1 itself.
func hasTypeSwitch(n ast.Node) bool {
	found := false
	ast.Inspect(n, func(n ast.Node) bool {
		switch n.(type) {
		case *ast.FuncLit:
			return false
		case *ast.TypeSwitchStmt:
			found = true
		}
		return !found
	})
	return found
}
