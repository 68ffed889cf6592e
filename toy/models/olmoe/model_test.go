package olmoe_test

import (
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toyml/toy/internal/testmodel"
	"github.com/toyml/toy/toy/gguf"
	"github.com/toyml/toy/toy/models/olmoe"
	"github.com/toyml/toy/toy/nn"
	"github.com/toyml/toy/toy/tensor"
)

func spec(dt tensor.DType) testmodel.Spec {
	return testmodel.Spec{Name: "m", Arch: "olmoe", DType: dt, Vocab: "none", VocabSize: 300, Embed: 64, Layers: 2,
		FFN: 32, Heads: 4, KVHeads: 4, Context: 64, Seed: 5, Experts: 4, ExpertsUsed: 2}
}

func write(t *testing.T, s testmodel.Spec) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "m.gguf")
	if _, err := testmodel.Write(s, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// edited writes a tiny model, applies edit to it, and returns the parsed
// result.
func edited(t *testing.T, edit func(w *gguf.Writer)) *gguf.File {
	return testmodel.Edited(t, spec(tensor.Q8_0), edit)
}

func TestLoad(t *testing.T) {
	m, err := olmoe.Load(edited(t, func(*gguf.Writer) {}))
	if err != nil {
		t.Fatal(err)
	}
	c, moe := m.Config, m.MoE(1)
	if c.Experts != 4 || c.ExpertsUsed != 2 || c.FFN != 32 || c.HeadDim != 16 || moe.Used != 2 ||
		moe.Gate.DType() != tensor.Q8_0 || moe.Router.W.DType() != tensor.F32 || m.Blocks[0].(*nn.Block).Attn.Norms.Q.(*nn.RMSNorm).W.Len() != 64 {
		t.Fatalf("config %+v, MoE used %d, gate %v, router %v", c, moe.Used, moe.Gate.DType(), moe.Router.W.DType())
	}
}

// Metadata that disagrees with the tensors, or describes nothing buildable,
// is an error at load that names the problem.
func TestLyingMetadata(t *testing.T) {
	for _, c := range []struct {
		name string
		edit func(w *gguf.Writer)
		want string
	}{
		{"experts", func(w *gguf.Writer) { w.SetUint32("olmoe.expert_count", 6) }, "ffn_gate_inp.weight has shape [4 64], want [6 64]"},
		{"used", func(w *gguf.Writer) { w.SetUint32("olmoe.expert_used_count", 5) }, "(ExpertsUsed) 5 is outside [1, Experts], Experts = 4"},
		{"experts type", func(w *gguf.Writer) { w.SetString("olmoe.expert_count", "many") }, "olmoe.expert_count is string"},
		{"ffn", func(w *gguf.Writer) { w.SetUint32("olmoe.feed_forward_length", 64) }, "ffn_gate_exps.weight has shape [4 32 64], want [4 64 64]"},
		{"rope scaling", func(w *gguf.Writer) {
			w.SetString("olmoe.rope.scaling.type", "yarn")
			w.SetFloat32("olmoe.rope.scaling.factor", 4)
		}, "unsupported"},
	} {
		_, err := olmoe.Load(edited(t, c.edit))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want it to mention %q", c.name, err, c.want)
		}
	}
}

// Decoding one token at a time through the KV cache gives the logits of one
// prefill over the same tokens: routing is per token, whatever the batch.
func TestDecodeMatchesPrefill(t *testing.T) {
	f, err := gguf.Open(write(t, spec(tensor.F32)))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m, err := olmoe.Load(f)
	if err != nil {
		t.Fatal(err)
	}
	ids := []int32{5, 17, 250, 3, 99, 42, 7, 120}
	all := m.Forward(ids, m.NewCache(len(ids))) // [T, V]
	cache := m.NewCache(len(ids))
	worst := 0.0
	for i, id := range ids {
		step := m.Forward([]int32{id}, cache) // [1, V]
		for v, x := range step.Row(0) {
			worst = max(worst, math.Abs(float64(x-all.Row(i)[v])))
		}
	}
	if worst > 1e-4 {
		t.Fatalf("decode and prefill logits differ by up to %.2e", worst)
	}
}
