package cli

import (
	"bufio"
	"net/http"
	"os"
	"path/filepath"
	"slices"
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

// toy serve's guard flags: API keys from --api-key, $TOY_API_KEY and a file
// (comments and blank lines left out), the --addr host allowed besides
// --allow-host; a served model then asks for the key, and --ctx above the
// trained context without RoPE scaling is refused naming it.
func TestServeGuardFlags(t *testing.T) {
	file := filepath.Join(t.TempDir(), "keys")
	if err := os.WriteFile(file, []byte("# team keys\nfile-1\n\n  file-2  # Bob\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TOY_API_KEY", "env-key")
	fs, o := serveFlagSet()
	if err := fs.Parse([]string{"--api-key", "a", "--api-key", "b", "--api-key-file", file, "--addr", "0.0.0.0:8080",
		"--allow-host", "team.lan", "--cors", "http://app.example", "--write-timeout", "5s"}); err != nil {
		t.Fatal(err)
	}
	keys, err := serveAPIKeys(o)
	if err != nil || !slices.Equal(keys, []string{"a", "b", "env-key", "file-1", "file-2"}) {
		t.Errorf("keys %q, %v", keys, err)
	}
	if hosts := serveAllowedHosts(o); !slices.Equal(hosts, []string{"team.lan", "0.0.0.0"}) {
		t.Errorf("hosts %q", hosts)
	}
	if !slices.Equal(o.cors, []string{"http://app.example"}) || o.writeTimeout != 5*time.Second {
		t.Errorf("cors %q, write timeout %v", o.cors, o.writeTimeout)
	}
	empty := filepath.Join(t.TempDir(), "empty")
	os.WriteFile(empty, []byte("# none yet\n"), 0o600)
	if _, err := serveAPIKeys(&serveOpts{apiKeyFile: empty}); err == nil {
		t.Error("a key file without keys was accepted")
	}
	t.Setenv("TOY_API_KEY", "")

	model := tinyModel(t)
	if status, _, errs := runToy("serve", model, "--ctx", "100", "--addr", "127.0.0.1:0", "--quiet"); status == 0 ||
		!strings.Contains(errs, "trained context of 64") {
		t.Errorf("--ctx above the trained context: %d %q", status, errs)
	}
	if testing.Short() {
		return
	}
	cmd := toyCmd("serve", model, "--addr", "127.0.0.1:0", "--quiet", "--api-key", "sk-test")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	defer cmd.Process.Signal(syscall.SIGINT)
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		addr, ok := strings.CutPrefix(sc.Text(), "toy serve: listening on ")
		if !ok {
			continue
		}
		addr, _, _ = strings.Cut(addr, " ")
		c := http.Client{Timeout: 10 * time.Second}
		for auth, want := range map[string]int{"": 401, "Bearer sk-test": 200, "Bearer sk-tes": 401} {
			req, _ := http.NewRequest("GET", addr+"/v1/models", nil)
			req.Header.Set("Authorization", auth)
			r, err := c.Do(req)
			if err != nil || r.StatusCode != want {
				t.Errorf("Authorization %q: %v %v, want %d", auth, r, err, want)
			}
			if err == nil {
				r.Body.Close()
			}
		}
		req, _ := http.NewRequest("GET", addr+"/health", nil)
		req.Host = "rebound.example"
		if r, err := c.Do(req); err != nil || r.StatusCode != 403 {
			t.Errorf("Host rebound.example: %v %v", r, err)
		}
		return
	}
	t.Fatal("toy serve stopped before listening")
}
