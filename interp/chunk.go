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
	src   string // the chunk's text, perhaps rewritten
	at    []lc   // where each byte of src stands in the cell; {0, 0} for rewrites' own text
	key   string // the file name of the cell's line directives (see code)
	file  *ast.File
	off   int // offset of src within the parsed text (after the wrapper prefix)
	fset  *token.FileSet
}

// lc is a line and a column (1-based, columns in bytes as Go counts them).
type lc struct{ line, col int32 }

// positions returns the place of each byte of text, which starts at line
// and col; the entry past the end is where the text ends.
func positions(text string, line, col int) []lc {
	at := make([]lc, len(text)+1)
	l, c := int32(line), int32(col)
	for i := 0; i <= len(text); i++ {
		at[i] = lc{l, c}
		if i < len(text) && text[i] == '\n' {
			l, c = l+1, 1
		} else {
			c++
		}
	}
	return at
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
		col := p[0] - strings.LastIndexByte(src[:p[0]], '\n')
		c, err := parseChunk(src[p[0]:p[1]], line)
		if se, ok := err.(*SyntaxError); ok && se.Line == line && se.Col > 0 {
			se.Col += col - 1 // the chunk starts at col
		}
		if err != nil {
			return nil, err
		}
		c.start, c.at = p[0], positions(c.src, line, col)
		// Merge neighbouring declarations: they may refer to each other
		// forward, which yaegi resolves only within one evaluation.
		if n := len(chunks); n > 0 && c.kind == declChunk && chunks[n-1].kind == declChunk {
			prev := chunks[n-1]
			if m, err := parseChunk(src[prev.start:p[1]], prev.line); err == nil {
				m.start, m.at = prev.start, positions(m.src, prev.line, int(prev.at[0].col))
				chunks[n-1] = m
				continue
			}
		}
		chunks = append(chunks, c)
	}
	return chunks, nil
}

// parseChunk parses text, which starts line line of the cell, as top-level
// declarations or else as statements.
func parseChunk(text string, line int) (*chunk, error) {
	c, err := parseText(text, line)
	if err == nil {
		c.at = positions(text, line, 1)
	}
	return c, err
}

// parseText is parseChunk leaving the positions (c.at) to the caller.
func parseText(text string, line int) (*chunk, error) {
	fset := token.NewFileSet()
	f, declErr := parser.ParseFile(fset, "", declPrefix+text, parser.SkipObjectResolution)
	if declErr == nil {
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
		// Tell the reading that went further: in func f() { x := := 1 }
		// the declaration's error, not the statement's at f.
		if errOffset(declErr)-len(declPrefix) > errOffset(err)-len(stmtPrefix) {
			return nil, syntaxError(declErr, line, text, len(declPrefix), len(text))
		}
		return nil, syntaxError(err, line, text, len(stmtPrefix), len(text)+1)
	}
	return &chunk{kind: stmtChunk, line: line, src: text, file: f, off: len(stmtPrefix), fset: fset}, nil
}

// SyntaxError is a cell that does not parse as Go.
type SyntaxError struct {
	File      string // the file EvalFile ran; "" in a cell
	Line, Col int
	Msg       string
	EOF       bool // the input ended inside a statement: more may come
}

// Error reads "syntax error: 3:5: msg" in a cell, and as Go's compiler
// writes it, "file.go:3:5: syntax error: msg", in a file.
func (e *SyntaxError) Error() string {
	switch {
	case e.File != "" && e.Col == 0:
		return fmt.Sprintf("%s:%d: syntax error: %s", e.File, e.Line, e.Msg)
	case e.File != "":
		return fmt.Sprintf("%s:%d:%d: syntax error: %s", e.File, e.Line, e.Col, e.Msg)
	case e.Col == 0:
		return fmt.Sprintf("syntax error: line %d: %s", e.Line, e.Msg)
	}
	return fmt.Sprintf("syntax error: %d:%d: %s", e.Line, e.Col, e.Msg)
}

// syntaxError is a parse error of text, which starts line line of the cell,
// read behind prefix bytes of wrapper. An error at end (of text, past
// prefix) or after it is at the wrapper's closing brace or the file's end:
// the input ended.
func syntaxError(err error, line int, text string, prefix, end int) error {
	if l, ok := err.(scanner.ErrorList); ok && len(l) > 0 {
		e := l[0]
		if e.Pos.Offset-prefix >= end {
			return &SyntaxError{Line: line + strings.Count(text, "\n"), Col: 0, Msg: "unexpected end of input", EOF: true}
		}
		col := e.Pos.Column
		if e.Pos.Line == 1 {
			col -= prefix
			if col < 1 {
				col = 1
			}
		}
		return &SyntaxError{Line: line + e.Pos.Line - 1, Col: col, Msg: e.Msg}
	}
	return &SyntaxError{Line: line, Col: 1, Msg: err.Error()}
}

// errOffset is the offset of a parse error's first position, -1 if none.
func errOffset(err error) int {
	if l, ok := err.(scanner.ErrorList); ok && len(l) > 0 {
		return l[0].Pos.Offset
	}
	return -1
}

// body returns the statements of a statement chunk.
func (c *chunk) stmts() []ast.Stmt {
	return c.file.Decls[0].(*ast.FuncDecl).Body.List
}

// offset maps a position in the parsed text to an offset in c.src.
func (c *chunk) offset(p token.Pos) int { return c.fset.Position(p).Offset - c.off }

// pos returns where a position of c's parsed text stands in the cell. Text
// a rewrite added takes the place of the cell's text after it.
func (c *chunk) pos(p token.Pos) (line, col int) {
	for i := c.offset(p); i < len(c.at); i++ {
		if c.at[i].line > 0 {
			return int(c.at[i].line), int(c.at[i].col)
		}
	}
	return c.line, 1
}

// rewrite returns c with edits made, parsed again; the text c had keeps its
// place in the cell.
func (c *chunk) rewrite(edits []edit) (*chunk, error) {
	src, at := applyAt(c.src, c.at, edits)
	c2, err := parseText(src, c.line)
	if err != nil {
		return nil, err
	}
	c2.start, c2.at, c2.key = c.start, at, c.key
	return c2, nil
}

// code returns c's text as yaegi is given it: each run of the cell's text
// preceded by a line directive, /*line KEY:LINE:COL*/, that tells yaegi
// where the run stands in the cell, so that its errors and panics point into
// the user's lines and columns however the text was rewritten or wrapped.
func (c *chunk) code() string { return annotate(c.src, c.at, c.key) }

// codeOf is code for one node of c's parsed text.
func (c *chunk) codeOf(n ast.Node) string {
	from, to := c.offset(n.Pos()), c.offset(n.End())
	return annotate(c.src[from:to], c.at[from:to+1], c.key)
}

// annotate writes src, whose bytes stand at at in a cell, with the line
// directives described at code. A directive stands where a run of the
// cell's text starts: where src starts, after a rewrite's text, and after a
// cut; rewrites cut and insert between tokens only, so a directive never
// splits one. key "" is yaegi's own file name, "_.go".
func annotate(src string, at []lc, key string) string {
	if key == "" {
		key = yaegiFile
	}
	var b strings.Builder
	next := lc{} // where the byte after the previous one of the cell stands
	for i := 0; i < len(src); i++ {
		p := at[i]
		if p.line > 0 && p != next {
			fmt.Fprintf(&b, "/*line %s:%d:%d*/", key, p.line, p.col)
		}
		b.WriteByte(src[i])
		switch {
		case p.line == 0:
			next = lc{}
		case src[i] == '\n':
			next = lc{p.line + 1, 1}
		default:
			next = lc{p.line, p.col + 1}
		}
	}
	return b.String()
}

// yaegiFile is the file name yaegi gives the code it evaluates. A line
// directive's file name must end in it: yaegi files a cell's imports under
// the base name of its positions' file.
const yaegiFile = "_.go"

// edit is a replacement of src[from:to].
type edit struct {
	from, to int
	text     string
}

// applyAt makes the edits from the last to the first; of two at one offset,
// the longer replacement is made first, so that an insertion there lands
// before it, and insertions at one offset keep their order. It keeps at, the
// places of src's bytes (and of its end), in step: the text an edit inserts
// has no place ({0, 0}).
func applyAt(src string, at []lc, edits []edit) (string, []lc) {
	sort.SliceStable(edits, func(i, j int) bool {
		if edits[i].from != edits[j].from {
			return edits[i].from > edits[j].from
		}
		return edits[i].to > edits[j].to
	})
	for _, e := range edits {
		src = src[:e.from] + e.text + src[e.to:]
		if at != nil {
			at = append(at[:e.from:e.from], append(make([]lc, len(e.text)), at[e.to:]...)...)
		}
	}
	return src, at
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
