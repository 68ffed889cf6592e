package interp

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestIndexDefine covers top-level defines indexing a compiled slice, array
// or map, which yaegi v0.16.1 cannot type ("constant definition loop", or a
// panic inside yaegi): define.go works around them.
func TestIndexDefine(t *testing.T) {
	in, out := newTest(t)
	before := defineWorkarounds.Load()
	cases := []struct{ src, want string }{
		{"x := strings.Fields(\"a b\")\nn := x[0]", ""},
		{`n + "!"`, `"a!"`}, // n is a string in a later cell
		{`fmt.Sprintf("%T", n)`, `"string"`},
		{`n2 := x[0] + ""`, ""}, // panicked inside yaegi
		{`n3 := *(&x[0])`, ""},  // likewise
		{`n2 + n3`, `"aa"`},
		{`a, b := x[0], x[1]`, ""},
		{`b + a`, `"ba"`},
		{`m := x[1]; m`, `"b"`},
		{`t := tensor.FromFloat32([]float32{1, 2, 3, 4, 5, 6}, 2, 3)`, ""},
		{`s := t.Shape(); n4 := s[0]*2`, ""},
		{`fmt.Sprintf("%T %v", n4, n4)`, `"int 4"`},
		{`s1 := s[1]`, ""},
		{`s1 * 2`, "6"},
		{`d := t.Data()`, ""},
		{`f := d[4]`, ""},
		{`fmt.Sprintf("%T %v", f, f)`, `"float32 5"`},
		{"logits := t\nlast := logits.Row(logits.Rows() - 1)\nv := last[0]", ""}, // the tour's style
		{`v`, "4"},
		{`import "net/url"`, ""},
		{`q, _ := url.ParseQuery("a=1&a=2")`, ""},
		{`qa := q["a"]`, ""},
		{`fmt.Sprintf("%T %v", qa, qa)`, `"[]string [1 2]"`},
		{`qb, ok := q["b"]`, ""},
		{`qb == nil && !ok`, "true"},
		{`var vx = x[0]`, ""}, // a var declaration: the same definition loop
		{`vx + "?"`, `"a?"`},
		{`var va, vb = s[0], x[1]`, ""},
		{`fmt.Sprint(va, vb)`, `"2b"`},
	}
	for _, c := range cases {
		out.Reset()
		if got := eval(t, in, c.src); got != c.want {
			t.Errorf("%q = %q, want %q", c.src, got, c.want)
		}
		if out.Len() > 0 {
			t.Errorf("%q printed %q", c.src, out.String())
		}
	}
	if defineWorkarounds.Load() == before {
		t.Error("the workaround never ran: yaegi fixed? update define.go")
	}
	// The temporaries hold nothing alive.
	if got := eval(t, in, `_toyv0 == nil && _toyv1 == nil`); got != "true" {
		t.Errorf("temporaries not cleared: %s", got)
	}
}

// TestIndexDefineErrors: what the workaround cannot do comes back as a
// clear error on the statement's line, never as a crash.
func TestIndexDefineErrors(t *testing.T) {
	in, _ := newTest(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "f"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	eval(t, in, `x := strings.Fields("a b")`)
	eval(t, in, `ents, _ := os.ReadDir(`+"`"+dir+"`"+`)`)

	// fs.DirEntry cannot be named until io/fs is imported.
	_, err := in.Eval(context.Background(), "\nen := ents[0]")
	if err == nil || !strings.HasPrefix(err.Error(), "2:") ||
		!strings.Contains(err.Error(), `import "io/fs"`) ||
		!strings.Contains(err.Error(), "en := func() T { return ents[0] }()") {
		t.Errorf("unnamed type: %v", err)
	}
	if got := eval(t, in, "import \"io/fs\"\nen := ents[0]\nen.Name()"); got != `"f"` {
		t.Errorf("after importing io/fs: %s", got)
	}

	// An index out of range panics in the cell: a PanicError on its line.
	_, err = in.Eval(context.Background(), "y := 1\n\nq := x[7]")
	var pe *PanicError
	if !errors.As(err, &pe) || !strings.Contains(err.Error(), "out of range") || !strings.Contains(pe.Where, "line 3") {
		t.Errorf("out of range: %v", err)
	}
	if _, err := in.Eval(context.Background(), "q"); err == nil {
		t.Error("q defined after a panic")
	}
	// Likewise inside an expression yaegi used to panic on.
	if _, err := in.Eval(context.Background(), `q2 := x[7] + ""`); !errors.As(err, &pe) {
		t.Errorf("out of range in an expression: %v", err)
	}

	// A nil interface whose type the source does not tell.
	eval(t, in, `import "reflect"`)
	eval(t, in, `es := reflect.ValueOf([]error{nil}).Interface().([]error)`)
	c, err := parseChunk("e := es[:1][0]", 1)
	if err != nil {
		t.Fatal(err)
	}
	_, err = in.evalDefine(context.Background(), c, c.stmts()[0], errors.New("definition loop"))
	if err == nil || !strings.Contains(err.Error(), "the value is nil") || !strings.Contains(err.Error(), "e := func() T { return es[:1][0] }()") {
		t.Errorf("nil value: %v", err)
	}
	// Where the source tells the interface type, nil is fine.
	c, _ = parseChunk("e := es[0]", 1)
	if _, err := in.evalDefine(context.Background(), c, c.stmts()[0], errors.New("definition loop")); err != nil {
		t.Errorf("nil error element: %v", err)
	}
	if got := eval(t, in, `fmt.Sprintf("%v", e == nil)`); got != `"true"` {
		t.Errorf("e == nil: %s", got)
	}
}

// TestIndexDefineNoRetry: cells yaegi compiles go through once, untouched.
func TestIndexDefineNoRetry(t *testing.T) {
	in, out := newTest(t)
	before := defineWorkarounds.Load()
	for _, src := range []string{
		`x := strings.Fields("a b")`,
		`k := len(x[0])`,
		`w := func() string { return x[1] }()`,
		`ys := []string{"c"}; y := ys[0]`,
		`fmt.Println(x[0], k, w, y)`,
		`for i := range 2 { fmt.Print(i) }`,
	} {
		eval(t, in, src)
	}
	if got := defineWorkarounds.Load() - before; got != 0 {
		t.Errorf("%d statements went through the workaround", got)
	}
	if out.String() != "a 1 b c\n01" {
		t.Errorf("output %q", out.String())
	}
}

// TestIndexDefineUndefined: an undefined name on the right of a define is
// reported as such, at its own position, not as yaegi's internal panic.
func TestIndexDefineUndefined(t *testing.T) {
	in, _ := newTest(t)
	for src, want := range map[string]string{
		"x := 1 + undefinedName":        "1:10: undefined: undefinedName",
		"y := 2\nz := f(undefinedName)": "2:8: undefined: undefinedName",
	} {
		_, err := in.Eval(context.Background(), src)
		if err == nil || err.Error() != want {
			t.Errorf("%q: %v, want %s", src, err, want)
		}
		if name, _ := Describe(err); name != "error" {
			t.Errorf("%q: described as %s, want error", src, name)
		}
	}
}
