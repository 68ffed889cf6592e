package olmoe_test

import (
	"go/parser"
	"go/token"
	"math"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/toyml/toy/internal/testmodel"
	"github.com/toyml/toy/toy/card"
	"github.com/toyml/toy/toy/gguf"
	"github.com/toyml/toy/toy/models/olmoe"
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
		moe.Gate.DType() != tensor.Q8_0 || moe.Router.W.DType() != tensor.F32 || m.Blocks[0].Attn.QNorm.W.Len() != 64 {
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
		{"used", func(w *gguf.Writer) { w.SetUint32("olmoe.expert_used_count", 5) }, "5 experts used of 4"},
		{"experts type", func(w *gguf.Writer) { w.SetString("olmoe.expert_count", "many") }, "olmoe.expert_count is string"},
		{"ffn", func(w *gguf.Writer) { w.SetUint32("olmoe.feed_forward_length", 64) }, "ffn_gate_exps.weight has shape [4 32 64], want [4 64 64]"},
		{"rope scaling", func(w *gguf.Writer) { w.SetString("olmoe.rope.scaling.type", "yarn") }, "unsupported"},
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

// The round trip: describe → parse → the same Config as the loader reads →
// a model built from it renders the same card → Go code that parses.
func TestCardRoundTrip(t *testing.T) {
	path := write(t, spec(tensor.Q8_0))
	c, err := card.Describe(path)
	if err != nil {
		t.Fatal(err)
	}
	text := c.Render()
	cfg, err := card.Parse(text)
	if err != nil {
		t.Fatalf("%v\n%s", err, text)
	}
	f, err := gguf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m, err := olmoe.Load(f)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(cfg, m.Config) {
		t.Fatalf("parsed config %+v, loader's %+v", cfg, m.Config)
	}
	built, loaded := olmoe.New(cfg.(olmoe.Config)).Card(), m.Card()
	built.Name, built.Quant, loaded.Name = c.Name, c.Quant, c.Name
	if got := built.Render(); got != text {
		t.Errorf("card of the built model differs:\n%s\nwant\n%s", got, text)
	}
	if got := loaded.Render(); got != text {
		t.Errorf("card of the loaded model differs:\n%s\nwant\n%s", got, text)
	}
	var n int64
	for _, w := range m.Weights() {
		n += int64(w.T.Len())
	}
	if c.ParamCount != n || !strings.Contains(text, "Q8_0") {
		t.Errorf("card counts %d parameters, the model holds %d; quantization %q", c.ParamCount, n, c.Quant)
	}
	code, err := card.Code(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := parser.ParseFile(token.NewFileSet(), "config.go", code, 0); err != nil || !strings.Contains(code, "olmoe.Config{") {
		t.Fatalf("%v\n%s", err, code)
	}
}
