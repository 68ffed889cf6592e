package recipes

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/toyml/toy/internal/testmodel"
	"github.com/toyml/toy/toy/gguf"
	"github.com/toyml/toy/toy/models/deepseek2"
	"github.com/toyml/toy/toy/tensor"
)

// tinyDeepSeek has V2's query bottleneck and the split attn_k_b/attn_v_b,
// a dense first layer, and V3's router: sigmoid scores, a choice bias,
// weights divided by their sum and scaled.
var tinyDeepSeek = deepseek2.Config{VocabSize: 40, ContextLength: 32, Embed: 32, Layers: 2, DenseLayers: 1, FFN: 64, Heads: 2,
	QLoraRank: 16, KVLoraRank: 16, KeyDim: 24, ValueDim: 16, RopeDim: 8, SplitKVB: true, Experts: 4, ExpertsUsed: 2, ExpertFFN: 16,
	SharedExperts: 1, ExpertGating: "sigmoid", ExpertBias: true, ExpertWeightsNorm: true, ExpertWeightsScale: 2.5,
	RopeBase: 10000, NormEps: 1e-6}

// A DeepSeek-V2 trained from scratch learns the pattern through the latent
// attention and the experts, resumes bit for bit, and saves a model that
// loads back with the same logits.
func TestDeepSeek2FromScratch(t *testing.T) {
	checkFromScratch(t, tinyDeepSeek, 0, func(f *gguf.File) (Model, error) { return deepseek2.Load(f) })
}

// Warm-starting from a Q8_0 file of V2-Lite's layout trains every weight,
// and the saved model loads again.
func TestDeepSeek2WarmStart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "base.gguf")
	spec := testmodel.Spec{Name: "base", Arch: "deepseek2", DType: tensor.Q8_0, Vocab: "none", VocabSize: 300, Embed: 64, Layers: 2,
		FFN: 64, Heads: 2, KVHeads: 2, Context: 64, Seed: 3, Experts: 4, ExpertsUsed: 2,
		DeepSeek: &testmodel.DeepSeekSpec{KVLoRARank: 32, NopeDim: 32, RopeDim: 16, ValueDim: 32, SplitKVB: true, DenseLayers: 1,
			ExpertFFN: 32, SharedExperts: 1, Gating: 1}}
	if _, err := testmodel.Write(spec, path); err != nil {
		t.Fatal(err)
	}
	r, err := NewWarmStart(path, NewOptions(12).WithSteps(8).WithLR(1e-3))
	if err != nil {
		t.Fatal(err)
	}
	before := map[string][]float32{}
	for _, p := range r.Params {
		before[p.Name] = slices.Clone(p.T.Data())
	}
	first, err := r.Step(batchAt(t, 0))
	if err != nil {
		t.Fatal(err)
	}
	var last float32
	for step := 1; step < 8; step++ {
		if last, err = r.Step(batchAt(t, step)); err != nil {
			t.Fatal(err)
		}
	}
	if !(last < first) {
		t.Errorf("warm-start loss %.3f → %.3f", first, last)
	}
	for _, p := range r.Params {
		if slices.Equal(p.T.Data(), before[p.Name]) {
			t.Errorf("%s did not change in training", p.Name)
		}
	}
	out := filepath.Join(t.TempDir(), "trained.gguf")
	if err := r.SaveModel(out); err != nil {
		t.Fatal(err)
	}
	f, err := gguf.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := deepseek2.Load(f); err != nil {
		t.Fatal(err)
	}
}
