package main

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestInterpretedMatchesCompiled builds this program and toysh, runs the
// program compiled and then interpreted (toysh main.go DIR), each on a
// directory of its own, and requires the same bytes on stdout: every loss
// and token, the resume check and the card.
func TestInterpretedMatchesCompiled(t *testing.T) {
	if testing.Short() {
		t.Skip("builds two binaries")
	}
	tmp := t.TempDir()
	byoa, toysh := filepath.Join(tmp, "byoa"), filepath.Join(tmp, "toysh")
	for _, b := range [][2]string{{byoa, "."}, {toysh, "../../cmd/toysh"}} {
		if out, err := exec.Command("go", "build", "-o", b[0], b[1]).CombinedOutput(); err != nil {
			t.Fatalf("go build %s: %v\n%s", b[1], err, out)
		}
	}
	run := func(name string, args ...string) string {
		t.Helper()
		var stdout, stderr bytes.Buffer
		cmd := exec.Command(name, args...)
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		start := time.Now()
		if err := cmd.Run(); err != nil {
			t.Fatalf("%s %s: %v\n%s%s", filepath.Base(name), strings.Join(args, " "), err, stdout.String(), stderr.String())
		}
		t.Logf("%s: %v", filepath.Base(name), time.Since(start).Round(time.Millisecond))
		if stderr.Len() > 0 {
			t.Errorf("%s wrote to stderr:\n%s", filepath.Base(name), stderr.String())
		}
		return stdout.String()
	}
	compiled := run(byoa, filepath.Join(tmp, "compiled"))
	interpreted := run(toysh, "main.go", filepath.Join(tmp, "interpreted"))

	for _, want := range []string{"scratch step 30 loss", "resume bit-identical", "generated [", "lora step 6 loss", "merged generated [", "Algorithm: ", "[layerscale]", "Parameters θ:"} {
		if !strings.Contains(compiled, want) {
			t.Errorf("compiled output lacks %q:\n%s", want, compiled)
		}
	}
	if compiled != interpreted {
		cl, il := strings.Split(compiled, "\n"), strings.Split(interpreted, "\n")
		for i := 0; i < len(cl) || i < len(il); i++ {
			var c, in string
			if i < len(cl) {
				c = cl[i]
			}
			if i < len(il) {
				in = il[i]
			}
			if c != in {
				t.Fatalf("line %d differs:\ncompiled:    %q\ninterpreted: %q", i+1, c, in)
			}
		}
	}
}
