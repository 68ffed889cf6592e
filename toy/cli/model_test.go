package cli

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/toyml/toy/toy/defaultmodel"
)

// builtinHome points HOME and the caches at a fresh directory and works in
// another, so that nothing is found but the built-in model and what the test
// makes.
func builtinHome(t *testing.T) string {
	t.Helper()
	home := t.TempDir()
	for _, k := range []string{"TOY_MODEL_DIR", "HF_HUB_CACHE", "HF_HOME", "OLLAMA_MODELS"} {
		t.Setenv(k, "")
	}
	t.Setenv("HOME", home)
	t.Setenv("XDG_CACHE_HOME", filepath.Join(home, ".cache"))
	work := filepath.Join(home, "work")
	os.MkdirAll(work, 0o755)
	t.Chdir(work)
	return home
}

// The built-in model's name is a MODEL for every command: listed, described,
// run, chatted with, served, and trained from (the recipes take a file: the
// built-in model is written once to the cache).
func TestBuiltinModelEverywhere(t *testing.T) {
	_, data := trainFixture(t)
	builtinHome(t)
	name := defaultmodel.Name

	status, out, errs := runToy("describe", name)
	if status != 0 || !strings.HasPrefix(out, "Algorithm: P ← ") || !strings.Contains(out, "[llama]") {
		t.Errorf("describe %s: %d %q %q", name, status, out, errs)
	}
	status, out, errs = runToy("describe", name, "--json")
	var card struct{ Model, Path, Arch string }
	if json.Unmarshal([]byte(out), &card); status != 0 || card.Model != name || card.Path != name || card.Arch != "llama" {
		t.Errorf("describe %s --json: %d %s %s", name, status, out, errs)
	}
	for _, args := range [][]string{
		{"infer", name, "--prompt", "func main() {", "--n", "4", "--json"},
		{"eval", name, "--prompt", "func main() {", "--json"},
	} {
		status, out, errs := runToy(args...)
		var got struct{ Model string }
		if json.Unmarshal([]byte(out), &got); status != 0 || got.Model != name {
			t.Errorf("%v: %d %s %s", args, status, out, errs)
		}
	}
	if status, out, errs := runToy("tokenize", name, "if err != nil {", "--json"); status != 0 || !strings.Contains(out, `"pieces":["if"," err"," !="," nil"," {"]`) {
		t.Errorf("tokenize %s: %d %s %s", name, status, out, errs)
	}
	func() {
		defer func(r io.Reader) { chatInput = r }(chatInput)
		chatInput = strings.NewReader("func main() {\n")
		if status, out, errs := runToy("chat", name, "--n", "4"); status != 0 || out == "" {
			t.Errorf("chat %s: %d %q %s", name, status, out, errs)
		}
	}()
	if m, e, err := loadServed([]string{name}); err != nil || e != nil || m.Path != name {
		t.Errorf("serve %s loads %v, %v, %v", name, m, e, err)
	} else {
		m.Close()
	}

	// The recipes start from the cached copy of the built-in model; a LoRA
	// run records it as its base, so the run resumes (here: is complete).
	for _, kind := range []string{"warm-start", "lora"} {
		out := filepath.Join("runs", kind)
		args := []string{"train", kind, "--model", name, "--data", data, "--steps", "2", "--batch", "1", "--seq", "16", "--threads", "1", "--out", out}
		status, stdout, errs := runToy(args...)
		if status != 0 || !strings.Contains(stdout, "done: 2 steps") {
			t.Fatalf("train %s --model %s: %d %s %s", kind, name, status, stdout, errs)
		}
		status, stdout, errs = runToy(append(args, "--resume")...)
		if status != 0 || !strings.Contains(stdout, "already complete") {
			t.Errorf("train %s --model %s --resume: %d %s %s", kind, name, status, stdout, errs)
		}
	}
	cached, _ := filepath.Glob(filepath.Join(os.Getenv("XDG_CACHE_HOME"), "toy", name+"-*.gguf"))
	if len(cached) != 1 {
		t.Errorf("cached copies of the built-in model: %v", cached)
	} else if b, _ := os.ReadFile(cached[0]); !slices.Equal(b, defaultmodel.Bytes()) {
		t.Errorf("%s does not hold the built-in model", cached[0])
	}

	// toy list shows the built-in model and the model the warm start wrote.
	status, out, _ = runToy("list")
	if status != 0 || !strings.Contains(out, "\n"+name+"  ") || !strings.Contains(out, "runs/warm-start/model.gguf") {
		t.Errorf("list: %d\n%s", status, out)
	}
	// A file of that name in the way wins, as a path does for any reference.
	os.WriteFile(name, []byte("not a model"), 0o644)
	if status, _, errs := runToy("describe", name); status != 2 || !strings.Contains(errs, "not a GGUF file") {
		t.Errorf("describe ./%s: %d %q", name, status, errs)
	}
}
