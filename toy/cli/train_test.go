package cli

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/toyml/toy/internal/testmodel"
	"github.com/toyml/toy/toy/gguf"
	"github.com/toyml/toy/toy/runlog"
	"github.com/toyml/toy/toy/tensor"
)

// TestMain lets the tests run this binary as the toy command.
func TestMain(m *testing.M) {
	if os.Getenv("TOY_TEST_AS_MAIN") == "1" {
		os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// trainFixture writes a small BPE-vocabulary model (the tokenizer source)
// and some training text.
func trainFixture(t *testing.T) (model, data string) {
	t.Helper()
	dir := t.TempDir()
	model = filepath.Join(dir, "gpt2.gguf")
	spec := testmodel.Spec{Name: "gpt2", Arch: "gpt2", DType: tensor.F32, Vocab: "gpt2", Embed: 32, Layers: 1, FFN: 64,
		Heads: 2, KVHeads: 2, Context: 64, Seed: 1}
	if _, err := testmodel.Write(spec, model); err != nil {
		t.Fatal(err)
	}
	data = filepath.Join(dir, "data.txt")
	text := strings.Repeat("func main() { fmt.Println(\"hello, world\") }\n", 200)
	if err := os.WriteFile(data, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return model, data
}

func toyCmd(args ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "TOY_TEST_AS_MAIN=1")
	return cmd
}

// A run killed with SIGKILL and resumed from its checkpoint has the same
// loss curve as the run that was never interrupted.
func TestKillAndResume(t *testing.T) {
	model, data := trainFixture(t)
	dir := t.TempDir()
	args := func(out string) []string {
		return []string{"train", "from-scratch", "--tokenizer", model, "--data", data, "--steps", "12", "--batch", "2",
			"--seq", "16", "--layers", "1", "--embed", "32", "--heads", "2", "--checkpoint-every", "2", "--lr", "3e-3",
			"--threads", "1", "--out", out}
	}
	straight := filepath.Join(dir, "straight")
	if out, err := toyCmd(args(straight)...).CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	want, _ := runlog.Read(straight)

	killed := filepath.Join(dir, "killed")
	cmd := toyCmd(args(killed)...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		r, _ := runlog.Read(killed)
		if len(r.LossCurve) >= 5 {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	partial, _ := runlog.Read(killed)
	if len(partial.LossCurve) >= 12 {
		t.Skip("the run finished before it could be killed")
	}
	if out, err := toyCmd(append(args(killed), "--resume")...).CombinedOutput(); err != nil {
		t.Fatalf("resume: %v: %s", err, out)
	}
	got, _ := runlog.Read(killed)
	if !slices.Equal(got.LossCurve, want.LossCurve) || len(want.LossCurve) != 12 {
		t.Fatalf("killed after %d steps and resumed: %v\nuninterrupted: %v", len(partial.LossCurve), got.LossCurve, want.LossCurve)
	}
	// A resume that changes the configuration is refused.
	out, err := toyCmd(append(args(killed), "--resume", "--lr", "1")...).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "differ from the checkpoint") {
		t.Fatalf("resume with another --lr: %v %s", err, out)
	}
	// The result is a model with the tokenizer, loadable for inference.
	status, _, errs := runToy("infer", filepath.Join(straight, "model.gguf"), "--prompt-ids", "1 2 3", "--n", "4")
	if status != 0 {
		t.Fatalf("infer on the trained model: %s", errs)
	}
}

func TestTrainBadInput(t *testing.T) {
	model, data := trainFixture(t)
	empty := filepath.Join(t.TempDir(), "empty.txt")
	os.WriteFile(empty, nil, 0o644)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"train", "from-scratch", "--tokenizer", model, "--data", data, "--arch", "bert"}, "not a family that builds from scratch (these do: "},
		{[]string{"train", "from-scratch", "--data", data, "--arch", "nope"}, "not a family that builds from scratch"},
		{[]string{"train", "lora", "--data", data}, "needs --model"},
		{[]string{"train", "from-scratch", "--tokenizer", model, "--data", empty, "--out", t.TempDir()}, "need at least"},
		{[]string{"train", "from-scratch", "--tokenizer", model, "--data", "/nonexistent", "--out", t.TempDir()}, "no such file"},
		{[]string{"train", "sideways"}, "unknown recipe"},
		{[]string{"train", "from-scratch", "--tokenizer", model, "--data", data, "--resume"}, "--resume needs --out"},
		{[]string{"train", "lora", "--model", model, "--data", data, "--targets", "q", "--out", t.TempDir()}, `no "q" projections`},
	} {
		status, _, errs := runToy(c.args...)
		if status != 2 || !strings.Contains(errs, c.want) {
			t.Errorf("%v: status %d, %q; want %q", c.args, status, errs, c.want)
		}
	}
}

// From scratch, every family with a Sized function is built through the
// registry; without --tokenizer the run uses the default model's, which the
// saved model carries.
func TestTrainFromScratchArchs(t *testing.T) {
	_, data := trainFixture(t)
	for _, arch := range scratchArchs() {
		out := filepath.Join(t.TempDir(), arch)
		status, stdout, errs := runToy("train", "from-scratch", "--arch", arch, "--data", data, "--steps", "2", "--batch", "1",
			"--seq", "16", "--layers", "1", "--embed", "32", "--heads", "2", "--threads", "1", "--out", out)
		if status != 0 || !strings.Contains(stdout, "done: 2 steps") {
			t.Fatalf("--arch %s: status %d, %s %s", arch, status, stdout, errs)
		}
		status, stdout, errs = runToy("describe", filepath.Join(out, "model.gguf"), "--json")
		if status != 0 || !strings.Contains(stdout, `"`+arch+`"`) {
			t.Errorf("describe the %s model: %d %s %s", arch, status, stdout, errs)
		}
		status, stdout, errs = runToy("tokenize", filepath.Join(out, "model.gguf"), "if err != nil {", "--json")
		if status != 0 || !strings.Contains(stdout, `"pieces":["if"," err"," !="," nil"," {"]`) {
			t.Errorf("the %s model's tokenizer is not the default model's: %d %s %s", arch, status, stdout, errs)
		}
	}
	if archs := scratchArchs(); !slices.Contains(archs, "llama") || !slices.Contains(archs, "gpt2") {
		t.Errorf("scratchArchs() = %v", archs)
	}
}

// trainArgs are the flags of a small, quick run into out.
func trainArgs(kind, model, data, out string, more ...string) []string {
	args := []string{"train", kind, "--data", data, "--steps", "2", "--batch", "1", "--seq", "16", "--threads", "1", "--out", out}
	if kind == "from-scratch" {
		args = append(args, "--tokenizer", model, "--layers", "1", "--embed", "32", "--heads", "2")
	} else {
		args = append(args, "--model", model)
	}
	return append(args, more...)
}

// events reads a run's events.jsonl, each line of which must be JSON.
func events(t *testing.T, dir string) []runlog.Event {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var es []runlog.Event
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var e runlog.Event
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("events.jsonl line %q: %v", line, err)
		}
		es = append(es, e)
	}
	return es
}

// --checkpoint-every 0 checkpoints only at the end (it divided by zero, a
// panic, with no run_end); a negative interval is refused.
func TestTrainCheckpointEveryZero(t *testing.T) {
	model, data := trainFixture(t)
	out := filepath.Join(t.TempDir(), "run")
	status, stdout, errs := runToy(trainArgs("from-scratch", model, data, out, "--checkpoint-every", "0")...)
	if status != 0 || !strings.Contains(stdout, "done: 2 steps") {
		t.Fatalf("--checkpoint-every 0: %d %s %s", status, stdout, errs)
	}
	if es := events(t, out); es[len(es)-1].Type != "run_end" || es[len(es)-1].Reason != "done" {
		t.Errorf("events %+v", es)
	}
	if _, err := os.Stat(filepath.Join(out, "checkpoint.gguf")); err != nil {
		t.Errorf("no checkpoint at the end: %v", err)
	}
	status, _, errs = runToy(trainArgs("from-scratch", model, data, filepath.Join(t.TempDir(), "run"), "--checkpoint-every", "-1")...)
	if status != 2 || !strings.Contains(errs, "--checkpoint-every must be ≥ 0") {
		t.Errorf("--checkpoint-every -1: %d %q", status, errs)
	}
}

// --resume of a run whose checkpoint is its last step says the run is
// complete and exits 0 (it failed on a NaN final loss); a run killed after
// its last checkpoint, before writing its model, is finished.
func TestTrainResumeComplete(t *testing.T) {
	model, data := trainFixture(t)
	out := filepath.Join(t.TempDir(), "run")
	args := trainArgs("from-scratch", model, data, out)
	if status, _, errs := runToy(args...); status != 0 {
		t.Fatal(errs)
	}
	status, stdout, errs := runToy(append(args, "--resume")...)
	if status != 0 || !strings.Contains(stdout, "already complete (2 of 2 steps") {
		t.Fatalf("resume a complete run: %d %q %q", status, stdout, errs)
	}
	events(t, out) // every line JSON
	// Killed after the last checkpoint: no model, no run_end.
	os.Remove(filepath.Join(out, "model.gguf"))
	es := events(t, out)
	var kept []string
	for _, e := range es[:len(es)-1] {
		b, _ := json.Marshal(e)
		kept = append(kept, string(b))
	}
	os.WriteFile(filepath.Join(out, "events.jsonl"), []byte(strings.Join(kept, "\n")+"\n"), 0o644)
	status, stdout, errs = runToy(append(args, "--resume")...)
	if status != 0 || !strings.Contains(stdout, "already at its last step") {
		t.Fatalf("resume a run killed at its end: %d %q %q", status, stdout, errs)
	}
	if r, _ := runlog.Read(out); r.Ended != "done" || len(r.LossCurve) != 2 {
		t.Errorf("run %+v", r)
	}
	if status, _, errs := runToy("infer", filepath.Join(out, "model.gguf"), "--prompt-ids", "1 2", "--n", "2"); status != 0 {
		t.Errorf("the model written on resume: %s", errs)
	}
}

// A second toy train into a run directory in use is refused with a clear
// message (status 1: the input is fine, the directory is busy).
func TestTrainBusy(t *testing.T) {
	model, data := trainFixture(t)
	out := filepath.Join(t.TempDir(), "run")
	w, err := runlog.Create(out) // another run holds it
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	status, _, errs := runToy(trainArgs("from-scratch", model, data, out)...)
	if status != 1 || !strings.Contains(errs, "another toy train is writing this run directory") || strings.Count(errs, "\n") != 1 {
		t.Errorf("a busy --out: %d %q", status, errs)
	}
}

// Every way out of a run after its log is created ends the log: a run that
// fails writing its checkpoint records run_end with the error and lets go
// of the directory, so the next run into it (in the same process, where a
// leaked lock would refuse it) goes ahead.
func TestTrainEndsLogOnFailure(t *testing.T) {
	model, data := trainFixture(t)
	out := filepath.Join(t.TempDir(), "run")
	blocker := filepath.Join(out, "checkpoint.gguf", "x") // the checkpoint's path is a directory
	os.MkdirAll(blocker, 0o755)
	args := trainArgs("from-scratch", model, data, out, "--checkpoint-every", "1")
	status, _, errs := runToy(args...)
	if status == 0 || !strings.Contains(errs, "checkpoint") {
		t.Fatalf("a checkpoint that cannot be written: %d %q", status, errs)
	}
	es := events(t, out)
	if last := es[len(es)-1]; last.Type != "run_end" || !strings.HasPrefix(last.Reason, "error: ") {
		t.Errorf("the log ends with %+v", last)
	}
	os.RemoveAll(filepath.Join(out, "checkpoint.gguf"))
	if status, _, errs := runToy(args...); status != 0 {
		t.Errorf("the next run into %s: %d %q", out, status, errs)
	}
}

// A run removes the temporary files a killed run left (gguf.RemoveTemps),
// once it holds the directory.
func TestTrainRemovesTemps(t *testing.T) {
	model, data := trainFixture(t)
	out := filepath.Join(t.TempDir(), "run")
	os.MkdirAll(out, 0o755)
	stale := []string{filepath.Join(out, ".checkpoint.gguf.tmp123"), filepath.Join(out, ".model.gguf.tmp456")}
	for _, p := range stale {
		os.WriteFile(p, []byte("half a file"), 0o644)
	}
	if status, _, errs := runToy(trainArgs("from-scratch", model, data, out)...); status != 0 {
		t.Fatal(errs)
	}
	for _, p := range stale {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s is still there", p)
		}
	}
}

// Values that were silently replaced or ignored are refused: --lr ≤ 0 (it
// became the default), a negative --threads, and a --resume whose --model is
// not the run's.
func TestTrainRefusesBadFlags(t *testing.T) {
	model, data := trainFixture(t)
	other := rewriteModel(t, model, func(key string, v gguf.Value) (gguf.Value, bool) {
		if key == "general.name" {
			v.V = "another model"
		}
		return v, true
	})
	for _, c := range []struct {
		args []string
		want string
	}{
		{trainArgs("from-scratch", model, data, filepath.Join(t.TempDir(), "r"), "--lr", "-1"), "--lr must be a number > 0"},
		{trainArgs("from-scratch", model, data, filepath.Join(t.TempDir(), "r"), "--lr", "0"), "--lr must be a number > 0"},
		{trainArgs("lora", model, data, filepath.Join(t.TempDir(), "r"), "--lr", "NaN"), "--lr must be a number > 0"},
		{trainArgs("from-scratch", model, data, filepath.Join(t.TempDir(), "r"), "--threads", "-2"), "--threads must be ≥ 0"},
		{[]string{"infer", "--threads", "-2"}, "--threads must be ≥ 0"},
		{[]string{"eval", "--prompt", "x", "--threads", "-2"}, "--threads must be ≥ 0"},
		{[]string{"chat", "--threads", "-2"}, "--threads must be ≥ 0"},
		{[]string{"serve", "--threads", "-2"}, "--threads must be ≥ 0"},
		{[]string{"train", "from-scratch", "--model", model, "--data", data}, "not --model"},
	} {
		if status, _, errs := runToy(c.args...); status != 2 || !strings.Contains(errs, c.want) {
			t.Errorf("%v: %d %q; want 2 and %q", c.args, status, errs, c.want)
		}
	}
	for _, kind := range []string{"lora", "warm-start"} {
		out := filepath.Join(t.TempDir(), kind)
		var more []string
		if kind == "lora" {
			more = []string{"--targets", "qkv"} // GPT-2's fused projection
		}
		if status, _, errs := runToy(trainArgs(kind, model, data, out, more...)...); status != 0 {
			t.Fatal(errs)
		}
		status, _, errs := runToy(trainArgs(kind, other, data, out, append(more, "--resume")...)...)
		if status != 2 || !strings.Contains(errs, "is not the model the run in") {
			t.Errorf("%s --resume with another --model: %d %q", kind, status, errs)
		}
		if status, _, errs := runToy(trainArgs(kind, model, data, out, append(more, "--resume")...)...); status != 0 {
			t.Errorf("%s --resume with its own --model: %d %q", kind, status, errs)
		}
	}
}
