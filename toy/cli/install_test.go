package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Without toysh, toy install says how to build it, and what it says works
// from this source checkout: the module is unpublished, so
// "go install …/cmd/toysh@latest" would fail. The hint is run (with -n: it
// resolves the module and the package, and builds nothing).
func TestInstallHintWorksFromCheckout(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go tool")
	}
	empty := t.TempDir()
	t.Setenv("PATH", empty)
	t.Setenv("GOBIN", empty)
	t.Setenv("HOME", t.TempDir())
	msg := registerKernel()
	_, hint, ok := strings.Cut(msg, "`")
	hint, _, ok2 := strings.Cut(hint, "`")
	if !ok || !ok2 || strings.Contains(hint, "@latest") || !strings.HasPrefix(hint, "go install ") {
		t.Fatalf("toy install says: %s", msg)
	}
	args := strings.Fields(hint)[1:] // install -C DIR ./cmd/toysh
	args = append(args[:len(args)-1:len(args)-1], "-n", args[len(args)-1])
	cmd := exec.Command(goTool, args...)
	cmd.Dir = t.TempDir() // not the checkout: the hint must say where it is
	cmd.Env = append(os.Environ(), "PATH="+filepath.Dir(goTool))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", hint, err, out)
	}
	// What the hint installs is found: go install writes to $GOBIN.
	toysh := filepath.Join(empty, toyshName())
	os.WriteFile(toysh, []byte("#!/bin/sh\n"), 0o755)
	if got := findToysh(); got != toysh {
		t.Errorf("toysh in $GOBIN: found %q", got)
	}
}
