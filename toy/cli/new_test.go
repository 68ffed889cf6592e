package cli

import (
	"bufio"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// labEnv is the environment of the lab's commands: offline, and with go.mod
// as toy new wrote it (-mod=readonly: the lab must build as it is made).
func labEnv() []string {
	return append(os.Environ(), "GOFLAGS=-mod=readonly", "GOPROXY=off", "GOWORK=off", "TOY_SRC=")
}

// sh runs a command line as a user would type it, in dir.
func sh(t *testing.T, dir, line string) string {
	t.Helper()
	cmd := exec.Command("sh", "-c", line)
	cmd.Dir, cmd.Env = dir, labEnv()
	start := time.Now()
	out, err := cmd.CombinedOutput()
	t.Logf("%s (%.1fs)", line, time.Since(start).Seconds())
	if err != nil {
		t.Fatalf("%s in %s: %v\n%s", line, dir, err, out)
	}
	return string(out)
}

// TestNewLab makes a lab from this checkout without being told where it is,
// then runs the commands toy new prints, as printed (fewer steps, and the
// server on a free port and stopped once it answers).
func TestNewLab(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs a lab")
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	t.Setenv("TOY_SRC", "")
	root := toyRoot(".")
	if root == "" {
		t.Fatal("the tests run outside a toy checkout")
	}
	lab := filepath.Join(t.TempDir(), "my-lab")
	status, out, errs := runToy("new", lab)
	if status != 0 || !strings.Contains(out, "built against the toy checkout "+root) {
		t.Fatalf("new: status %d, %s%s", status, out, errs)
	}
	gomod, _ := os.ReadFile(filepath.Join(lab, "go.mod"))
	if !strings.Contains(string(gomod), "module my-lab\n") || !strings.Contains(string(gomod), "replace github.com/toyml/toy => "+root+"\n") {
		t.Errorf("go.mod:\n%s", gomod)
	}
	arch, _ := os.ReadFile(filepath.Join(lab, "archs", "capped.go"))
	if n := strings.Count(string(arch), "\n"); n >= 150 {
		t.Errorf("archs/capped.go has %d lines; the example architecture stays under 150", n)
	}
	gofmt := filepath.Join(runtime.GOROOT(), "bin", "gofmt")
	if out, err := exec.Command(gofmt, "-l", lab).CombinedOutput(); err != nil || len(out) > 0 {
		t.Errorf("gofmt -l: %v %s", err, out)
	}

	_, next, ok := strings.Cut(out, "next:\n")
	if !ok {
		t.Fatalf("no next commands in %q", out)
	}
	lines := strings.Split(strings.TrimSpace(next), "\n")
	if want := "cd " + lab; strings.TrimSpace(lines[0]) != want {
		t.Fatalf("first command %q, want %q", lines[0], want)
	}
	ran := map[string]string{}
	for _, line := range lines[1:] {
		line = strings.TrimSpace(line)
		f := strings.Fields(line)
		word := f[2] // go test ./..., go run ./recipes
		if word == "." {
			word = f[3] // go run . COMMAND
		}
		switch {
		case strings.Contains(line, " serve "):
			serveLab(t, lab, line+" --addr 127.0.0.1:0")
			ran["serve"] = "answered"
			continue
		case strings.HasPrefix(line, "go run ./recipes"):
			line += " -steps 3"
			word = "recipes"
		case strings.Contains(line, "--steps 100"):
			line = strings.Replace(line, "--steps 100", "--steps 3", 1)
		}
		ran[word] = sh(t, lab, line)
	}
	for word, want := range map[string]string{
		"./...":    "ok  \tmy-lab/primitives",
		"recipes":  "wrote runs/recipe/model.gguf",
		"train":    "done: 3 steps",
		"infer":    "generated",
		"eval":     "perplexity",
		"describe": "[capped]",
		"serve":    "answered",
	} {
		if !strings.Contains(ran[word], want) {
			t.Errorf("%s: %q, want %q in it", word, ran[word], want)
		}
	}
	if !strings.Contains(ran["./..."], "ok  \tmy-lab/archs") {
		t.Errorf("go test ./...: %s", ran["./..."])
	}

	// The lab's CLI knows its architecture beside toy's own.
	cmd := exec.Command("go", "run", ".", "train", "from-scratch", "--arch", "nope", "--data", "data/tiny.txt")
	cmd.Dir, cmd.Env = lab, labEnv()
	if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), "these do: capped, ") {
		t.Errorf("--arch nope in the lab: %v %s", err, out)
	}

	if status, _, errs := runToy("new", lab); status != 2 || !strings.Contains(errs, "not empty") {
		t.Errorf("new into a full directory: %d %q", status, errs)
	}
	if status, _, errs := runToy("new", filepath.Join(t.TempDir(), "x"), "--toy", t.TempDir()); status != 2 || !strings.Contains(errs, "not a toy checkout") {
		t.Errorf("new --toy elsewhere: %d %q", status, errs)
	}
}

// serveLab starts the lab's server, waits until it answers GET /v1/models,
// and stops it with SIGINT to its process group (go run and the server).
func serveLab(t *testing.T, dir, line string) {
	t.Helper()
	cmd := exec.Command("sh", "-c", "exec "+line)
	cmd.Dir, cmd.Env = dir, labEnv()
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	defer syscall.Kill(-cmd.Process.Pid, syscall.SIGINT)
	var said []string
	for sc := bufio.NewScanner(stderr); sc.Scan(); {
		said = append(said, sc.Text())
		if addr, ok := strings.CutPrefix(sc.Text(), "toy serve: listening on "); ok {
			addr, _, _ = strings.Cut(addr, " ")
			c := http.Client{Timeout: 10 * time.Second}
			if r, err := c.Get(addr + "/v1/models"); err != nil || r.StatusCode != 200 {
				t.Errorf("%s: GET /v1/models: %v %v", line, r, err)
			}
			return
		}
	}
	t.Fatalf("%s stopped:\n%s", line, strings.Join(said, "\n"))
}

func TestFindToy(t *testing.T) {
	root := toyRoot(".")
	if root == "" || toyRoot(filepath.Join(root, "toy", "cli", "lab", "archs")) != root {
		t.Fatalf("toyRoot: %q", root)
	}
	t.Setenv("TOY_SRC", filepath.Join(root, "toy"))
	if _, err := findToy(""); err == nil || !strings.Contains(err.Error(), "not a toy checkout") {
		t.Errorf("TOY_SRC at a subdirectory: %v", err)
	}
	t.Setenv("TOY_SRC", "")
	if src, err := findToy(""); err != nil || src.dir != root || src.version != "" {
		t.Errorf("findToy in a checkout: %+v %v", src, err)
	}
	goVersion, reqs := requirements("module m\n\ngo 1.26.0\n\nrequire a.b/c v1.0.0 // indirect\nrequire (\n\tx.y/z v0.2.0\n\tp.q/r v1.1.0 // indirect\n)\n")
	if goVersion != "1.26.0" || strings.Join(reqs, ";") != "a.b/c v1.0.0;x.y/z v0.2.0;p.q/r v1.1.0" {
		t.Errorf("requirements: %q %q", goVersion, reqs)
	}
	for dir, want := range map[string]string{"runs/My Lab": "my-lab", "/tmp/x.y_z/": "x.y_z", "...": "lab"} {
		if got := moduleName(dir); got != want {
			t.Errorf("moduleName(%q) = %q, want %q", dir, got, want)
		}
	}
	// From a published toy: that version required, no replace, and go mod
	// tidy first to fetch its requirements.
	files, err := labTree("lab", labToy{version: "v0.3.0"})
	if err != nil || files["go.mod"] != "module lab\n\ngo 1.26.0\n\nrequire github.com/toyml/toy v0.3.0\n" || files["go.sum"] != "" {
		t.Errorf("a published toy's lab: %v\n%s", err, files["go.mod"])
	}
	if cmds := labCommands("lab", labToy{version: "v0.3.0"}); cmds[1] != "go mod tidy" {
		t.Errorf("a published toy's commands: %q", cmds)
	}
	if got := shellQuote("/tmp/it's here"); got != `'/tmp/it'\''s here'` {
		t.Errorf("shellQuote: %s", got)
	}
}
