package recipes

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/toyml/toy/internal/testmodel"
	"github.com/toyml/toy/toy/gguf"
	"github.com/toyml/toy/toy/models/olmoe"
	"github.com/toyml/toy/toy/tensor"
)

var tinyOLMoE = olmoe.Config{VocabSize: 40, ContextLength: 32, Embed: 32, Layers: 2, FFN: 32, Experts: 4, ExpertsUsed: 2,
	Heads: 4, KVHeads: 4, HeadDim: 8, RopeDim: 8, RopeBase: 10000, NormEps: 1e-5}

// An OLMoE trained from scratch learns the pattern (the router and the 3-D
// expert stacks get gradients), resumes from a checkpoint bit for bit, and
// saves a model that loads back with the same logits.
func TestOLMoEFromScratch(t *testing.T) {
	r, o := checkFromScratch(t, tinyOLMoE, 0, func(f *gguf.File) (Model, error) { return olmoe.Load(f) })
	fresh := olmoe.NewRandom(tinyOLMoE, o.Seed).Weights()
	for i, w := range r.Model.Weights() {
		if slices.Equal(w.T.Data(), fresh[i].T.Data()) {
			t.Errorf("%s did not change in training", w.Name)
		}
	}
}

// LoRA adapts an OLMoE's attention projections (the experts' stacks are not
// targets); asking for the dense feed-forward projections it lacks is a
// clear error.
func TestOLMoELoRA(t *testing.T) {
	path := filepath.Join(t.TempDir(), "base.gguf")
	spec := testmodel.Spec{Name: "base", Arch: "olmoe", DType: tensor.Q8_0, Vocab: "none", VocabSize: 300, Embed: 64,
		Layers: 2, FFN: 32, Heads: 4, KVHeads: 4, Context: 64, Seed: 9, Experts: 4, ExpertsUsed: 2}
	if _, err := testmodel.Write(spec, path); err != nil {
		t.Fatal(err)
	}
	r, err := NewLoRA(path, NewOptions(12).WithSteps(10).WithTargets("q", "v"))
	if err != nil {
		t.Fatal(err)
	}
	defer r.meta.Close()
	if len(r.Params) != 2*2*2 { // 2 layers × (q, v) × (A, B)
		t.Fatalf("%d adapter tensors", len(r.Params))
	}
	first, err := r.Step(batchAt(t, 0))
	if err != nil {
		t.Fatal(err)
	}
	var last float32
	for step := 1; step < 10; step++ {
		if last, err = r.Step(batchAt(t, step)); err != nil {
			t.Fatal(err)
		}
	}
	if !(last < first) {
		t.Errorf("LoRA loss %.3f → %.3f", first, last)
	}
	if _, err := NewLoRA(path, NewOptions(12).WithTargets("gate")); err == nil || !strings.Contains(err.Error(), `no "gate" projections`) {
		t.Errorf("LoRA on gate: err = %v", err)
	}
}
