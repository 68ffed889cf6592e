// examples_test.go: builds every program under examples/, runs each on toy's
// default model, and checks its exit status and the lines that show it did
// what it says.

package examples_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// example is how one program is run and what its output must show.
type example struct {
	args  func(dir string) []string // flags; dir is a temporary directory for files it writes
	check func(t *testing.T, out, dir string)
}

var examples = map[string]example{
	"generate": {
		args: func(string) []string { return []string{"-n", "16", "-seed", "3"} },
		check: func(t *testing.T, out, _ string) {
			mustContain(t, out, "func (b *Buffer) Len() int {")
			if n := number(t, out, `(\d+) tokens \(stopped by`); n < 1 {
				t.Errorf("%v tokens generated", n)
			}
		},
	},
	"logprobs": {
		check: func(t *testing.T, out, _ string) {
			lps := numbers(t, out, `logprob +(\S+)`)
			if len(lps) != 12 {
				t.Errorf("%d log-probs, want 12", len(lps))
			}
			for _, lp := range lps {
				if lp > 0 {
					t.Errorf("log-prob %v > 0", lp)
				}
			}
			for _, ppl := range numbers(t, out, `perplexity (\S+)`) {
				if ppl < 1 {
					t.Errorf("perplexity %v < 1", ppl)
				}
			}
		},
	},
	"chat": {
		check: func(t *testing.T, out, _ string) {
			mustContain(t, out, "using ChatML")
			mustContain(t, out, "<|im_start|>user\nNow in Go.<|im_end|>\n<|im_start|>assistant\n")
			if n := strings.Count(out, "--- reply ---"); n != 2 {
				t.Errorf("%d replies, want 2", n)
			}
		},
	},
	"train": {
		args: func(dir string) []string { return []string{"-steps", "30", "-out", filepath.Join(dir, "loss.png")} },
		check: func(t *testing.T, out, dir string) {
			first, last := number(t, out, `first loss (\S+)`), number(t, out, `last loss (\S+)`)
			if first < 7 || last >= first-1 {
				t.Errorf("loss %v → %v: want a start near ln 2048 = 7.6 and a drop of more than 1", first, last)
			}
			png, err := os.ReadFile(filepath.Join(dir, "loss.png"))
			if err != nil || !bytes.HasPrefix(png, []byte("\x89PNG")) {
				t.Errorf("no PNG loss plot: %v", err)
			}
		},
	},
	"lora": {
		check: func(t *testing.T, out, _ string) {
			losses := numbers(t, out, `loss (\S+)`)
			if len(losses) < 2 || losses[len(losses)-1] >= losses[0]/4 {
				t.Errorf("losses %v: want the last below a quarter of the first", losses)
			}
			mustContain(t, out, `after: "// Gopher says hello from a LoRA adapter.`)
		},
	},
	"embeddings": {
		check: func(t *testing.T, out, _ string) {
			sims := numbers(t, out, `(?m)^\d\. (\S+) `)
			if len(sims) != 5 {
				t.Fatalf("%d ranked texts, want 5", len(sims))
			}
			for i := 1; i < len(sims); i++ {
				if sims[i] > sims[i-1] {
					t.Errorf("similarities not best first: %v", sims)
				}
			}
		},
	},
	"serveclient": {
		check: func(t *testing.T, out, _ string) {
			_, reply, _ := strings.Cut(out, "completion tokens):\n")
			reply, _, _ = strings.Cut(reply, "server stopped")
			if strings.TrimSpace(reply) == "" {
				t.Error("empty reply")
			}
			if n := number(t, out, `\+ (\d+) completion tokens`); n < 1 {
				t.Errorf("%v completion tokens", n)
			}
			mustContain(t, out, "server stopped")
		},
	},
}

// Every directory here is an example with a test case, opening with a
// comment and under 100 lines; all are built with one go build, then run in
// parallel from the repository root (train reads toy's source from there).
func TestExamples(t *testing.T) {
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	var pkgs []string
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		src, err := os.ReadFile(filepath.Join(e.Name(), "main.go"))
		if err != nil {
			t.Errorf("%s: %v", e.Name(), err)
			continue
		}
		if n := bytes.Count(src, []byte("\n")); n >= 100 {
			t.Errorf("%s/main.go has %d lines, want under 100", e.Name(), n)
		}
		if !bytes.HasPrefix(src, []byte("// ")) {
			t.Errorf("%s/main.go does not open with a comment saying what it shows", e.Name())
		}
		if _, ok := examples[e.Name()]; !ok {
			t.Errorf("%s: no test case in examples_test.go", e.Name())
		}
		pkgs = append(pkgs, "./"+e.Name())
	}
	for name := range examples {
		if _, err := os.Stat(name); err != nil {
			t.Errorf("test case %s: %v", name, err)
		}
	}

	bin := t.TempDir()
	build := exec.Command("go", append([]string{"build", "-o", bin + string(filepath.Separator)}, pkgs...)...)
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}

	for name, ex := range examples {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			var args []string
			if ex.args != nil {
				args = ex.args(dir)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, filepath.Join(bin, name), args...)
			cmd.Dir = ".."
			start := time.Now()
			out, err := cmd.CombinedOutput()
			t.Logf("%s: %v\n%s", strings.Join(append([]string{name}, args...), " "), time.Since(start).Round(time.Millisecond), out)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			ex.check(t, string(out), dir)
		})
	}
}

func mustContain(t *testing.T, out, want string) {
	t.Helper()
	if !strings.Contains(out, want) {
		t.Errorf("output lacks %q", want)
	}
}

// numbers returns the first group of every match of pattern in out, parsed
// as a float.
func numbers(t *testing.T, out, pattern string) []float64 {
	t.Helper()
	var xs []float64
	for _, m := range regexp.MustCompile(pattern).FindAllStringSubmatch(out, -1) {
		x, err := strconv.ParseFloat(m[1], 64)
		if err != nil {
			t.Fatalf("%q: %v", m[0], err)
		}
		xs = append(xs, x)
	}
	return xs
}

// number is numbers' single value.
func number(t *testing.T, out, pattern string) float64 {
	t.Helper()
	xs := numbers(t, out, pattern)
	if len(xs) != 1 {
		t.Fatalf("%d matches of %q in the output, want 1", len(xs), pattern)
	}
	return xs[0]
}
