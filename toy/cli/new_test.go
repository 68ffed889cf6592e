package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// goCmd runs the go command in dir, offline, with toy replaced by this checkout.
func goCmd(t *testing.T, dir string, env []string, args ...string) string {
	t.Helper()
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOPROXY=off", "GOSUMDB=off", "GOWORK=off", "CGO_ENABLED=0")
	cmd.Env = append(cmd.Env, env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s in %s: %v\n%s", strings.Join(args, " "), dir, err, out)
	}
	return string(out)
}

func TestNewScaffolds(t *testing.T) {
	if testing.Short() {
		t.Skip("builds two programs")
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	root, _ := filepath.Abs(filepath.Join("..", ".."))
	tmp := t.TempDir()

	exp := filepath.Join(tmp, "my-exp")
	status, out, errs := runToy("new", exp, "--toy", root)
	if status != 0 || !strings.Contains(out, "next: cd "+exp) {
		t.Fatalf("new: %d %s %s", status, errs, out)
	}
	for _, f := range []string{"go.mod", "main.go", "runs/.gitkeep", "data/.gitkeep", "README.md"} {
		if _, err := os.Stat(filepath.Join(exp, f)); err != nil {
			t.Error(err)
		}
	}
	goCmd(t, exp, nil, "go", "mod", "tidy")
	goCmd(t, exp, nil, "go", "build", "-o", "hello", ".")
	// One build, two runs with different hyperparameters from the environment.
	a := goCmd(t, exp, []string{"TOY_RUN=small"}, "./hello")
	b := goCmd(t, exp, []string{"TOY_RUN=deep", "TOY_LAYERS=4"}, "./hello")
	if !strings.Contains(a, "run small, a 2-layer llama") || !strings.Contains(b, "run deep, a 4-layer llama") {
		t.Errorf("hello said %q and %q", a, b)
	}
	if c, err := os.ReadFile(filepath.Join(exp, "runs", "deep", "card.txt")); err != nil || !strings.Contains(string(c), "L        = 4") {
		t.Errorf("run card: %v\n%s", err, c)
	}

	lib := filepath.Join(tmp, "mylib")
	if status, _, errs := runToy("new", lib, "--lib", "--toy", root); status != 0 {
		t.Fatalf("new --lib: %s", errs)
	}
	goCmd(t, lib, nil, "go", "mod", "tidy")
	goCmd(t, lib, []string{"DEVICES=cpu"}, "sh", "./build.sh")
	if out := goCmd(t, lib, []string{"TOY_RUN=first"}, "./bin/hello-cpu"); !strings.Contains(out, "hello from toy on cpu: run first, 2 layers") {
		t.Errorf("lib hello said %q", out)
	}

	if status, _, errs := runToy("new", lib); status != 2 || !strings.Contains(errs, "not empty") {
		t.Errorf("new into a full directory: %d %q", status, errs)
	}
	if status, _, errs := runToy("new", filepath.Join(tmp, "x"), "--toy", tmp); status != 2 || !strings.Contains(errs, "not a toy checkout") {
		t.Errorf("new --toy elsewhere: %d %q", status, errs)
	}
}
