// Small lexing helpers over go/scanner and go/parser.

package interp

import (
	"go/ast"
	"go/parser"
	"go/scanner"
	"go/token"
	"reflect"

	"github.com/traefik/yaegi/stdlib"
)

// scannerLite scans Go tokens, ignoring errors.
type scannerLite struct{ s scanner.Scanner }

func (l *scannerLite) init(src string) {
	fset := token.NewFileSet()
	f := fset.AddFile("", -1, len(src))
	l.s.Init(f, []byte(src), func(token.Position, string) {}, 0)
}

// pos returns the next token and its byte offset.
func (l *scannerLite) pos() (int, token.Token) {
	p, tok, _ := l.s.Scan()
	return int(p) - 1, tok
}

func (l *scannerLite) next() token.Token {
	_, tok, _ := l.s.Scan()
	return tok
}

// parseExpr parses an expression, or returns a bad expression.
func parseExpr(s string) ast.Expr {
	e, err := parser.ParseExpr(s)
	if err != nil {
		return &ast.BadExpr{}
	}
	return e
}

func stdSymbols() map[string]map[string]reflect.Value { return stdlib.Symbols }
