package cudatest

import (
	"math"
	"path/filepath"
	"testing"

	"github.com/toyml/toy/internal/testmodel"
	"github.com/toyml/toy/toy/gguf"
	"github.com/toyml/toy/toy/models/llama4"
	"github.com/toyml/toy/toy/nn"
	"github.com/toyml/toy/toy/tensor"
)

// TestLlama4Chunks: the device has no kernel for chunked attention, so past
// its first chunk tensor.AttentionWith runs it on the host (q, k and v come
// back, the output goes up at its next use). The llama4-f32 gate model with
// chunks of 3 and the temperature's step at 4 (llama.cpp's 8192 would need
// a prompt the emulator takes minutes over): a prefill of 8 tokens and 4
// decode steps on the device give the CPU's logits.
func TestLlama4Chunks(t *testing.T) {
	b := gpu(t)
	spec := specNamed(t, "llama4-f32")
	path := filepath.Join(t.TempDir(), spec.File())
	if _, err := testmodel.Write(spec, path); err != nil {
		t.Fatal(err)
	}
	f, err := gguf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	c, err := llama4.ConfigFromGGUF(f)
	if err != nil {
		t.Fatal(err)
	}
	c.Chunk, c.TempFloor = 3, 4
	m := llama4.New(c)
	if err := nn.Load(f, "", m); err != nil {
		t.Fatal(err)
	}
	m.SetRopeFreqs(m.RopeFreqs)
	run := func() [][]float32 {
		cache := m.NewCache(12)
		out := [][]float32{m.Forward(spec.PromptIDs[:8], cache).Float32s()}
		for _, id := range spec.PromptIDs[8:12] {
			out = append(out, m.Forward([]int32{id}, cache).Float32s())
		}
		return out
	}
	var cpu, dev [][]float32
	on(tensor.Go{}, func() { cpu = run() })
	on(b, func() { dev = run() })
	worst := 0.0
	for i := range cpu {
		worst = max(worst, maxDiff(dev[i], cpu[i]))
	}
	if tol := logitTolerance(spec.Arch, spec.DType); !(worst <= tol) || math.IsNaN(worst) {
		t.Errorf("chunked attention on %s: logits differ from the CPU's by up to %.2e (> %.0e)", b.Device(), worst, tol)
	}
	t.Logf("llama4-f32 with chunks of 3 on %s: max |Δ logit| vs CPU %.2e", b.Device(), worst)
}

// specNamed returns the gate model of that name.
func specNamed(t *testing.T, name string) testmodel.Spec {
	for _, s := range testmodel.Specs() {
		if s.Name == name {
			return s
		}
	}
	t.Fatalf("no gate model %s", name)
	return testmodel.Spec{}
}
