package cli

import (
	"bufio"
	"net/http"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/toyml/toy/toy/gguf"
)

// serveLines starts toy serve on a free port and returns what it says up to
// the line that gives its address, then stops it (SIGINT, as Ctrl-C).
func serveLines(t *testing.T, args ...string) []string {
	t.Helper()
	cmd := toyCmd(append([]string{"serve", "--addr", "127.0.0.1:0", "--quiet"}, args...)...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	defer cmd.Process.Signal(syscall.SIGINT)
	var lines []string
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		lines = append(lines, sc.Text())
		if addr, ok := strings.CutPrefix(sc.Text(), "toy serve: listening on "); ok {
			addr, _, _ = strings.Cut(addr, " ")
			c := http.Client{Timeout: 10 * time.Second}
			if r, err := c.Get(addr + "/v1/models"); err != nil || r.StatusCode != 200 {
				t.Errorf("GET /v1/models: %v %v", r, err)
			}
			return lines
		}
	}
	t.Fatalf("toy serve %v stopped: %s", args, strings.Join(lines, "\n"))
	return nil
}

// toy serve serves a language model, or an encoder (which toy.Load refuses
// as not a language model) by itself; a file of no registered family is
// refused as toy.Load refuses it.
func TestServeEncoderAlone(t *testing.T) {
	if testing.Short() {
		t.Skip("starts servers")
	}
	lm := serveLines(t, tinyModel(t))
	if !strings.Contains(lm[0], "toy serve: ") || !strings.Contains(lm[0], "context") {
		t.Errorf("a language model: %q", lm)
	}
	enc := serveLines(t, embedModel(t))
	if !strings.Contains(enc[0], "embeddings (POST /v1/embeddings") {
		t.Errorf("an encoder: %q", enc)
	}
	if status, _, errs := runToy("serve", "/nonexistent.gguf"); status != 2 || !strings.Contains(errs, "not found") {
		t.Errorf("a missing model: %d %q", status, errs)
	}
	w := gguf.NewWriter()
	w.SetString("general.architecture", "mamba")
	mamba := filepath.Join(t.TempDir(), "mamba.gguf")
	if err := w.WriteFile(mamba); err != nil {
		t.Fatal(err)
	}
	if status, _, errs := runToy("serve", mamba); status != 2 || !strings.Contains(errs, `unknown architecture "mamba"`) {
		t.Errorf("an unknown architecture: %d %q", status, errs)
	}
}
