package interp

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// TestErrorColumns: an error's line and column point into the cell as
// typed, whatever toy rewrote before yaegi saw it (yaegi's own wrapper on
// the first line, a chunk that starts mid-line, a parenthesised call
// argument, a range over an integer, a captured loop variable's copy, the
// define workaround).
func TestErrorColumns(t *testing.T) {
	in, _ := newTest(t)
	eval(t, in, "func one() int { return 1 }\nxs := strings.Fields(\"a b\")")
	for _, c := range []struct{ src, want string }{
		{`nope`, "1:1: undefined: nope"},
		{`x := 1 + "a"`, "1:6: invalid operation: mismatched types untyped int and untyped string"},
		{`y := 1; z := y + nope`, "1:18: undefined: nope"},
		{"\n\n  fmt.Println(nope)", "3:15: undefined: nope"},
		{`fmt.Println(one(), nope)`, "1:20: undefined: nope"},
		{`for i := range 3 { fmt.Println(i, nope) }`, "1:35: undefined: nope"},
		{"for i := range 2 {\n\tf := func() { fmt.Println(i) }\n\tf(nope)\n}", "3:4: undefined: nope"},
		{`func h() { fmt.Println(one(), nope) }`, "1:31: undefined: nope"},
		{"type T struct{}\nfunc (T) M() int {\n\tfor i := range 3 { _ = i + nope }\n\treturn 0\n}", "3:29: undefined: nope"},
		{`w := xs[0] + nope`, "1:14: undefined: nope"},
		{`var w = xs[0] + nope`, "1:17: undefined: nope"},
	} {
		_, err := in.Eval(context.Background(), c.src)
		var ee *EvalError
		if !errors.As(err, &ee) || err.Error() != c.want {
			t.Errorf("%q: %v, want %s", c.src, err, c.want)
		}
	}
}

// TestSyntaxErrorColumns: a syntax error's column counts from the start of
// the line, not of the statement, and inside a function the error is the
// statement's, not a complaint about the declaration.
func TestSyntaxErrorColumns(t *testing.T) {
	in, _ := newTest(t)
	for src, want := range map[string]string{
		`x := := 1`:                         "syntax error: 1:6: expected operand, found ':='",
		`x := 1; y := := 2`:                 "syntax error: 1:14: expected operand, found ':='",
		"func f() {\n\tx := := 1\n}":        "syntax error: 2:7: expected operand, found ':='",
		"func f() {\n\tfmt.Println(1)\n":    "syntax error: line 3: unexpected end of input",
		"for i := 0; i < 2; i++ {\n\tx := ": "syntax error: line 2: unexpected end of input",
	} {
		_, err := in.Eval(context.Background(), src)
		var se *SyntaxError
		if !errors.As(err, &se) || err.Error() != want {
			t.Errorf("%q: %v, want %s", src, err, want)
		}
	}
	if got := IsComplete("func f() {\n\tfmt.Println(1)\n"); got != "incomplete" {
		t.Errorf("IsComplete of an open function: %s", got)
	}
}

// TestFileErrorsNameTheFile: EvalFile's errors and panics name the file,
// line and column, as go run does.
func TestFileErrorsNameTheFile(t *testing.T) {
	in, _ := newTest(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "prog.go")
	run := func(src string) error {
		t.Helper()
		if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := in.EvalFile(context.Background(), path)
		return err
	}
	for _, c := range []struct{ src, want string }{
		{"package main\n\nimport \"fmt\"\n\nfunc main() {\n\tx := 1\n\tfmt.Println(x + \"a\")\n}\n",
			path + ":7:14: invalid operation: mismatched types int and untyped string"},
		{"package main\n\nfunc main() {\n\tx := := 1\n}\n",
			path + ":4:7: syntax error: expected operand, found ':='"},
		{"package main\n\nfunc main() {\n\tnope()\n}\n",
			path + ":4:2: undefined: nope"},
		{"package main\n\nfunc main() {\n\tn := 1\n\tpanic(n)\n}\n",
			"panic: 1 [" + path + ":5:2, in main.main(...)]"},
	} {
		if err := run(c.src); err == nil || err.Error() != c.want {
			t.Errorf("%s:\n%v\nwant\n%s", c.src, err, c.want)
		}
	}
	// A cell after the file has no file name; a function the file defined
	// keeps its place in the file.
	run("package main\n\nfunc get(s []int, i int) int {\n\treturn s[i]\n}\n")
	_, err := in.Eval(context.Background(), "x := 1\nget(nil, x)")
	var pe *PanicError
	if !errors.As(err, &pe) || pe.File != path || pe.Line != 4 || pe.Col != 9 || pe.Where != path+":4:9, in main.get(...)" {
		t.Errorf("a panic in the file's function: %v", err)
	}
	if _, err := in.Eval(context.Background(), "nope"); err == nil || err.Error() != "1:1: undefined: nope" {
		t.Errorf("a cell after the file: %v", err)
	}
}

// TestBoundsPanics: an index or slice out of range reads as compiled Go
// has it (a runtime.Error: "index out of range [5] with length 2"), at
// the expression's line, with the numbers where the expression is at the
// cell's top level and reads variables only.
func TestBoundsPanics(t *testing.T) {
	in, _ := newTest(t)
	eval(t, in, "s := []int{1, 2}\ni := 5\narr := [3]int{}\nstr := \"abc\"\nxs := strings.Fields(\"a b\")\nsub := s[:1]")
	eval(t, in, "func get(s []int, i int) int {\n\tn := len(s)\n\t_ = n\n\treturn s[i]\n}")
	eval(t, in, "func two(s []int) int {\n\treturn s[0] + s[1]\n}")
	for _, c := range []struct{ src, want string }{
		{`s[5]`, "panic: runtime error: index out of range [5] with length 2 [line 1]"},
		{"\nfmt.Println(s[i])", "panic: runtime error: index out of range [5] with length 2 [line 2]"},
		{`v := s[i-1]`, "panic: runtime error: index out of range [4] with length 2 [line 1]"},
		{`arr[i]`, "panic: runtime error: index out of range [5] with length 3 [line 1]"},
		{`str[i]`, "panic: runtime error: index out of range [5] with length 3 [line 1]"},
		{`q := xs[7]`, "panic: runtime error: index out of range [7] with length 2 [line 1]"},
		{`s[1:i]`, "panic: runtime error: slice bounds out of range [:5] with capacity 2 [line 1]"},
		{`sub[:i]`, "panic: runtime error: slice bounds out of range [:5] with capacity 2 [line 1]"},
		{`j := 1; str[2:j]`, "panic: runtime error: slice bounds out of range [2:1] [line 1]"},
		{`s[0:1:i]`, "panic: runtime error: slice bounds out of range [::5] with capacity 2 [line 1]"},
		// Two expressions out of range: which one failed is not told.
		{`s[i] + s[i+1]`, "panic: runtime error: index out of range [line 1]"},
		// In a function: the line, without the numbers.
		{`get(s, 3)`, "panic: runtime error: index out of range [line 4, in main.get(...)]"},
		{"for k := 0; k < 3; k++ {\n\tfmt.Println(s[k])\n}", "panic: runtime error: index out of range [line 2]"},
		// Two places it can be raised: the function's lines.
		{`two(nil)`, "panic: runtime error: index out of range [lines 1-3, in main.two(...)]"},
	} {
		_, err := in.Eval(context.Background(), c.src)
		var re runtime.Error
		if err == nil || err.Error() != c.want || !errors.As(err, &re) {
			t.Errorf("%q: %v, want %s", c.src, err, c.want)
		}
	}
	// The variables were not changed by reading them back.
	if got := eval(t, in, `fmt.Sprint(s, i, len(sub), cap(sub))`); got != `"[1 2] 5 1 2"` {
		t.Errorf("after: %s", got)
	}
}

// TestPanicPlaces: yaegi places a panic at the start of its function; the
// call of panic is found where the function has one.
func TestPanicPlaces(t *testing.T) {
	in, _ := newTest(t)
	eval(t, in, "func f(n int) {\n\tn++\n\tif n > 1 {\n\t\tpanic(\"big\")\n\t}\n}")
	eval(t, in, "func g(n int) {\n\tif n > 1 {\n\t\tpanic(\"big\")\n\t}\n\tpanic(\"small\")\n}")
	for src, want := range map[string]string{
		`panic("top")`: "panic: top [line 1]",
		`f(2)`:         "panic: big [line 4, in main.f(...)]",
		`g(0)`:         "panic: small [lines 1-6, in main.g(...)]",
		"x := 0\nfunc() {\n\tx++\n\tpanic(x)\n}()": "panic: 1 [line 4]",
	} {
		_, err := in.Eval(context.Background(), src)
		if err == nil || err.Error() != want {
			t.Errorf("%q: %v, want %s", src, err, want)
		}
	}
}
