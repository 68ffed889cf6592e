package shell

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	_ "testing/quick" // registers -quickchecks on flag.CommandLine, as toysh's imports do
)

// newShell is a shell run as cmd on stdin, with its output kept.
func newShell(stdin string, cmd ...string) (*shell, *bytes.Buffer, *bytes.Buffer) {
	var out, errs bytes.Buffer
	return &shell{cmd: cmd, stdin: strings.NewReader(stdin), stdout: &out, stderr: &errs}, &out, &errs
}

func TestCommand(t *testing.T) {
	for _, c := range []struct {
		osArgs, args, want []string
	}{
		{[]string{"/usr/local/bin/toysh", "-e", "1"}, []string{"-e", "1"}, []string{"toysh"}},
		{[]string{"/home/u/go/bin/toy", "toysh", "x.go"}, []string{"x.go"}, []string{"toy", "toysh"}},
		{[]string{"./lab", "toysh"}, nil, []string{"lab", "toysh"}},
		{[]string{"shell.test", "-test.v"}, []string{"-e", "1"}, []string{"toysh"}}, // Main called from elsewhere
	} {
		if got := command(c.osArgs, c.args); !slices.Equal(got, c.want) {
			t.Errorf("command(%q, %q) = %q, want %q", c.osArgs, c.args, got, c.want)
		}
	}
}

// TestHelpShowsToyshFlagsOnly: -help lists -e and the forms of the
// command as it was typed, and none of the flags other packages register on
// flag.CommandLine (testing/quick's -quickchecks, the test binary's -test.*).
func TestHelpShowsToyshFlagsOnly(t *testing.T) {
	if flag.Lookup("quickchecks") == nil {
		t.Fatal("testing/quick registered no -quickchecks: the test proves nothing")
	}
	for _, arg := range []string{"-help", "--help", "-h"} {
		sh, out, errs := newShell("", "toy", "toysh")
		if code := sh.main([]string{arg}); code != 0 {
			t.Errorf("%s: exit status %d", arg, code)
		}
		help := out.String() + errs.String()
		for _, want := range []string{"toy toysh FILE.go [ARGS...]", "toy toysh -e code", "toy toysh kernel CONN.json", "toy toysh install-kernel", "-e code"} {
			if !strings.Contains(help, want) {
				t.Errorf("%s: no %q in\n%s", arg, want, help)
			}
		}
		for _, not := range []string{"quickchecks", "test."} {
			if strings.Contains(help, not) {
				t.Errorf("%s: %q in\n%s", arg, not, help)
			}
		}
	}
	sh, _, errs := newShell("", "toysh")
	if code := sh.main([]string{"-quickchecks", "3"}); code != 2 || !strings.Contains(errs.String(), "flag provided but not defined: -quickchecks") {
		t.Errorf("-quickchecks: exit status %d\n%s", code, errs.String())
	}
}

func TestEvalOnce(t *testing.T) {
	sh, out, _ := newShell("", "toysh")
	if code := sh.main([]string{"-e", "20 + 22"}); code != 0 || out.String() != "42\n" {
		t.Errorf("-e '20 + 22': exit status %d, %q", code, out.String())
	}
	sh, _, errs := newShell("", "toysh")
	if code := sh.main([]string{"-e", "x := 1\nx + nope"}); code != 1 || errs.String() != "2:5: undefined: nope\n" {
		t.Errorf("-e with an error: exit status %d, %q", code, errs.String())
	}
}

// TestScriptErrorsNameTheFile: toysh FILE.go reports a compile error, a
// syntax error and a panic at FILE.go:LINE:COL, as go run does.
func TestScriptErrorsNameTheFile(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct{ src, want string }{
		{"package main\n\nimport \"fmt\"\n\nfunc main() {\n\tx := 1\n\tfmt.Println(x + \"a\")\n}\n",
			"bad.go:7:14: invalid operation: mismatched types int and untyped string\n"},
		{"package main\n\nfunc main() {\n\tx := := 1\n}\n",
			"bad.go:4:7: syntax error: expected operand, found ':='\n"},
		{"package main\n\nfunc get(s []int, i int) int {\n\treturn s[i]\n}\n\nfunc main() { get([]int{1, 2}, 5) }\n",
			"panic: runtime error: index out of range [bad.go:4:9, in main.get(...)]\n"},
		{"package main\n\nvar s = []int{1, 2}\n\nfunc main() {\n\ti := 5\n\tprintln(s[i])\n}\n",
			"panic: runtime error: index out of range [bad.go:7:10, in main.main(...)]\n"},
	} {
		path := filepath.Join(dir, "bad.go")
		if err := os.WriteFile(path, []byte(c.src), 0o644); err != nil {
			t.Fatal(err)
		}
		sh, _, errs := newShell("", "toysh")
		code := sh.main([]string{path})
		if got := strings.ReplaceAll(errs.String(), dir+string(filepath.Separator), ""); code != 1 || got != c.want {
			t.Errorf("%s: exit status %d, %q; want 1, %q", c.src, code, got, c.want)
		}
	}
}

// TestREPLErrorPlaces: errors in the REPL point into the line typed, after
// the rewrites yaegi needs (a call as an argument is parenthesised, a range
// over an integer becomes a three-clause loop); an index out of range says
// which index and which length.
func TestREPLErrorPlaces(t *testing.T) {
	sh, _, errs := newShell(`nope
x := 1; y := x + "a"
func one() int { return 1 }
fmt.Println(one(), nope)
for i := range 3 { fmt.Println(i, nope) }
var s []int
fmt.Println(s[3])
`, "toysh")
	if code := sh.main(nil); code != 0 {
		t.Errorf("exit status %d", code)
	}
	want := `1:1: undefined: nope
1:14: invalid operation: mismatched types int and untyped string
1:20: undefined: nope
1:35: undefined: nope
panic: runtime error: index out of range [3] with length 0 [line 1]
`
	if errs.String() != want {
		t.Errorf("REPL errors:\n%s\nwant:\n%s", errs.String(), want)
	}
}

// TestInstallKernelAsSubcommand: `toy toysh install-kernel` registers a
// kernel that runs `toy toysh kernel CONN`.
func TestInstallKernelAsSubcommand(t *testing.T) {
	data := t.TempDir()
	t.Setenv("JUPYTER_DATA_DIR", data)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, cmd := range [][]string{{"toysh"}, {"toy", "toysh"}} {
		sh, out, errs := newShell("", cmd...)
		if code := sh.main([]string{"install-kernel"}); code != 0 {
			t.Fatalf("%s install-kernel: exit status %d\n%s", cmd, code, errs.String())
		}
		b, err := os.ReadFile(filepath.Join(data, "kernels", "toy", "kernel.json"))
		if err != nil {
			t.Fatal(err)
		}
		var spec struct{ Argv []string }
		if err := json.Unmarshal(b, &spec); err != nil {
			t.Fatal(err)
		}
		want := append(append([]string{exe}, cmd[1:]...), "kernel", "{connection_file}")
		if !slices.Equal(spec.Argv, want) {
			t.Errorf("%s install-kernel: argv %q, want %q", cmd, spec.Argv, want)
		}
		if !strings.Contains(out.String(), strings.Join(want[:len(want)-2], " ")) {
			t.Errorf("%s install-kernel said %q", cmd, out.String())
		}
	}
}
