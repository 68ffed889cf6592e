package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/toyml/toy/internal/testmodel"
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
