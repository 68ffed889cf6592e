package interp

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/toyml/toy/interp/internal/symgen"
	"github.com/toyml/toy/kernels"
)

func newTest(t *testing.T) (*Interp, *bytes.Buffer) {
	t.Helper()
	var out bytes.Buffer
	in, err := New(Options{Stdout: &out, Stderr: &out})
	if err != nil {
		t.Fatal(err)
	}
	return in, &out
}

// eval evaluates src and returns the displayed value ("" for none).
func eval(t *testing.T, in *Interp, src string) string {
	t.Helper()
	r, err := in.Eval(context.Background(), src)
	if err != nil {
		t.Fatalf("%q: %v", src, err)
	}
	b, ok := r.Bundle()
	if !ok {
		return ""
	}
	return b.Text
}

// TestYaegiTraps covers the yaegi v0.16.1 traps package interp works around.
func TestYaegiTraps(t *testing.T) {
	in, out := newTest(t)
	cases := []struct{ src, want, stdout string }{
		{"import \"strings\"\ny := strings.ToUpper(\"a\")\ny", `"A"`, ""}, // imports and statements in one cell
		{`import "strings"`, "", ""},                                      // re-importing
		{`import "github.com/toyml/toy/toy"`, "", ""},                     // a preloaded package
		{`func main() { fmt.Println("main ran") }`, "", "main ran\n"},     // main runs once …
		{`z := 1`, "", ""},           // … not again
		{`func f() {}; f()`, "", ""}, // no result: no stale value
		{`runtime := 3; runtime`, "3", ""},
		{`fmt.Println("hi")`, "", "hi\n"},
		{`var e any = 3; switch v := e.(type) { case int: fmt.Println("int", v) }`, "", "int 3\n"}, // top-level type switch
		{`var fs []func() int; for i := 0; i < 3; i++ { fs = append(fs, func() int { return i }) }; fs[0]() + fs[2]()`, "2", ""},
		{`var gs []func() int; for _, v := range []int{5, 6} { gs = append(gs, func() int { return v }) }; gs[0]()`, "5", ""},
		{`for i := range 3 { fmt.Print(i) }`, "", "012"},
		{`nn2 := 2; for i := range nn2 { fmt.Print(i) }`, "", "01"},
		{`func() { fmt.Println("lit") }()`, "", "lit\n"},
		{`z + 1`, "2", ""},
		{`min(3, 2) + max(1, 4)`, "6", ""},
		{`strings.Cut("a=b", "=")`, `"a", "b", true`, ""},
		{`tensor.FromFloat32([]float32{1, 2, 3, 4}, 2, 2)`, "Tensor[2 2] F32 [1 2 3 4]", ""},
		{`errors.New("bad input")`, "bad input", ""},
		{`fmt.Fprintln(os.Stdout, "to os.Stdout")`, "", "to os.Stdout\n"},
	}
	for _, c := range cases {
		out.Reset()
		if got := eval(t, in, c.src); got != c.want {
			t.Errorf("%q = %q, want %q", c.src, got, c.want)
		}
		if out.String() != c.stdout {
			t.Errorf("%q printed %q, want %q", c.src, out.String(), c.stdout)
		}
	}
	// strings.Lines is Go 1.24: it comes from the overlay.
	if got := eval(t, in, `n := 0; strings.Lines("a\nb\n")(func(string) bool { n++; return true }); n`); got != "2" {
		t.Errorf("strings.Lines: %q", got)
	}
}

func TestErrorsAndPanicsAreReturned(t *testing.T) {
	in, _ := newTest(t)
	for src, name := range map[string]string{
		`x := := 1`:                       "SyntaxError",
		`panic("boom")`:                   "panic",
		`var p *tensor.Tensor; p.Shape()`: "panic",
		`undefinedName`:                   "error",
		`panic(&kernels.NativeCallError{Backend: "native", Missing: "libtoy", Hint: "use TOY_BACKEND=go"})`: "NativeCallError",
	} {
		if src == `panic(&kernels.NativeCallError{Backend: "native", Missing: "libtoy", Hint: "use TOY_BACKEND=go"})` {
			eval(t, in, `import "github.com/toyml/toy/kernels"`)
		}
		_, err := in.Eval(context.Background(), src)
		if got, msg := Describe(err); got != name {
			t.Errorf("%q: %s (%s), want %s", src, got, msg, name)
		}
	}
	if name, msg := Describe(nil); name != "" || msg != "" {
		t.Errorf("Describe(nil) = %q, %q; want empty", name, msg)
	}
	var ne *kernels.NativeCallError
	_, err := in.Eval(context.Background(), `panic(&kernels.NativeCallError{Backend: "native", Missing: "libtoy"})`)
	if !errors.As(err, &ne) {
		t.Errorf("NativeCallError not reachable with errors.As: %v", err)
	}
	if got := eval(t, in, `1 + 1`); got != "2" {
		t.Errorf("after errors: %q", got)
	}
}

func TestInterrupt(t *testing.T) {
	in, _ := newTest(t)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, err := in.Eval(ctx, `for {}`)
	if !errors.Is(err, ErrInterrupted) {
		t.Fatalf("err = %v, want ErrInterrupted", err)
	}
	if got := eval(t, in, `40 + 2`); got != "42" {
		t.Errorf("after an interrupt: %q", got)
	}
}

func TestIsComplete(t *testing.T) {
	for src, want := range map[string]string{
		"x := 1":                   "complete",
		"func f() {":               "incomplete",
		"func f() {\n}":            "complete",
		"s := `raw":                "incomplete",
		"fmt.Println(1,":           "incomplete",
		"x := )":                   "invalid",
		"for i := 0; i < 3; i++ {": "incomplete",
	} {
		if got := IsComplete(src); got != want {
			t.Errorf("IsComplete(%q) = %s, want %s", src, got, want)
		}
	}
}

func TestCompleteAndDoc(t *testing.T) {
	in, _ := newTest(t)
	eval(t, in, `tt := tensor.New(2, 3)`)
	if m, _, _ := in.Complete("tensor.MatM", 11); !slices.Equal(m, []string{"tensor.MatMul", "tensor.MatMulID"}) {
		t.Errorf("Complete(tensor.MatM) = %v", m)
	}
	if m, _, _ := in.Complete("tensor.Softm", 12); len(m) != 1 || m[0] != "tensor.Softmax" {
		t.Errorf("Complete(tensor.Softm) = %v", m)
	}
	if m, _, _ := in.Complete("tt.Resh", 7); len(m) != 1 || m[0] != "tt.Reshape" {
		t.Errorf("Complete(tt.Resh) = %v", m)
	}
	if d, ok := in.Doc("toy.Load"); !ok || !strings.Contains(d, "func Load(path string)") {
		t.Errorf("Doc(toy.Load) = %q", d)
	}
	if d, ok := in.Doc("tt.Reshape"); !ok || !strings.Contains(d, "Reshape") {
		t.Errorf("Doc(tt.Reshape) = %q", d)
	}
}

// TestScriptFile runs a file with a package clause and a main.
func TestScriptFile(t *testing.T) {
	in, out := newTest(t)
	p := filepath.Join(t.TempDir(), "s.go")
	os.WriteFile(p, []byte("package main\n\nimport \"fmt\"\n\nfunc main() {\n\tfmt.Println(\"script\", len(toy.Archs()) > 0)\n}\n"), 0o644)
	if _, err := in.EvalFile(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	if out.String() != "script true\n" {
		t.Errorf("printed %q", out.String())
	}
}

// TestSymbolsUpToDate regenerates the symbol tables and compares them with
// the committed ones.
func TestSymbolsUpToDate(t *testing.T) {
	if testing.Short() {
		t.Skip("type-checks toy and its dependencies from source")
	}
	files, err := symgen.Files()
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range files {
		got, err := os.ReadFile(name)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s is stale: run go generate ./interp", name)
		}
	}
	have, _ := filepath.Glob("zsym_*.go")
	for _, h := range have {
		if _, ok := files[h]; !ok {
			t.Errorf("%s is no longer generated: delete it (go generate ./interp)", h)
		}
	}
}
