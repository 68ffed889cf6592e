// --device without a GPU: the command fails with the named NativeCallError
// (exit status 1), and --device cpu works as before.

package cli

import (
	"strings"
	"testing"

	"github.com/toyml/toy/kernels/cuda"
	"github.com/toyml/toy/toy"
)

func TestDeviceCUDAWithoutDriver(t *testing.T) {
	if b, err := cuda.Load(); err == nil {
		t.Skipf("a GPU is present (%s)", b.Info())
	}
	defer toy.UseBackend(toy.BackendName())
	model := tinyModel(t)
	for _, args := range [][]string{
		{"infer", model, "--prompt-ids", "1 2 3", "--n", "2", "--device", "cuda"},
		{"eval", model, "--prompt-ids", "1 2 3", "--device", "cuda"},
		{"train", "from-scratch", "--device", "cuda", "--data", model, "--steps", "1"},
	} {
		status, _, stderr := runToy(args...)
		if status != 1 || !strings.Contains(stderr, "--device cuda: cuda backend: missing") {
			t.Errorf("toy %s: status %d, stderr %q; want status 1 and the NativeCallError", strings.Join(args[:2], " "), status, stderr)
		}
	}
	status, stdout, stderr := runToy("infer", model, "--prompt-ids", "1 2 3", "--n", "2", "--device", "cpu", "--json")
	if status != 0 || !strings.Contains(stdout, "ids") {
		t.Errorf("toy infer --device cpu: status %d, stdout %q, stderr %q", status, stdout, stderr)
	}
	if status, _, stderr := runToy("infer", model, "--device", "tpu"); status != 2 || !strings.Contains(stderr, "want cpu or cuda") {
		t.Errorf("--device tpu: status %d, stderr %q", status, stderr)
	}
}

func TestInstallReportsCUDA(t *testing.T) {
	_, stdout, _ := runToy("install")
	line := ""
	for _, l := range strings.Split(stdout, "\n") {
		if strings.HasPrefix(l, "cuda ") {
			line = l
		}
	}
	if _, err := cuda.Load(); err != nil {
		if !strings.Contains(line, "unavailable: cuda backend: missing") {
			t.Errorf("toy install without a GPU: cuda line %q, want the NativeCallError", line)
		}
	} else if !strings.Contains(stdout, "  gpu ") || !strings.Contains(stdout, "  driver   CUDA") {
		t.Errorf("toy install with a GPU: no gpu/driver lines in\n%s", stdout)
	}
}
