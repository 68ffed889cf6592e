package gptoss_test

import (
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toyml/toy/internal/testmodel"
	"github.com/toyml/toy/toy/card"
	"github.com/toyml/toy/toy/gguf"
	"github.com/toyml/toy/toy/models/gptoss"
	"github.com/toyml/toy/toy/tensor"
)

func spec(dt tensor.DType) testmodel.Spec {
	return testmodel.Spec{Name: "m", Arch: "gpt-oss", DType: dt, Vocab: "none", VocabSize: 300, Embed: 64, Layers: 3,
		FFN: 32, Heads: 4, KVHeads: 2, HeadDim: 32, Context: 64, Seed: 5, Experts: 4, ExpertsUsed: 2, Window: 3,
		RopeScaling: "yarn", RopeScaleFactor: 4, RopeOrigContext: 16}
}

// write writes the test model s and returns its path.
func write(t *testing.T, s testmodel.Spec) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "m.gguf")
	if _, err := testmodel.Write(s, path); err != nil {
		t.Fatal(err)
	}
	return path
}

func load(t *testing.T, s testmodel.Spec) *gptoss.Model {
	t.Helper()
	f, err := gguf.Open(write(t, s))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	m, err := gptoss.Load(f)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestLoad(t *testing.T) {
	m := load(t, spec(tensor.Q8_0))
	c, b := m.Config, m.Blocks[1].(*gptoss.Block)
	if c.Experts != 4 || c.ExpertsUsed != 2 || c.FFN != 32 || c.HeadDim != 32 || c.Window != 3 || c.WindowPeriod != 2 ||
		c.RopeScale != 4 || c.RopeOrigContext != 16 || b.MoE.Gate.DType() != tensor.Q8_0 || b.MoE.GateBias == nil ||
		b.Attn.Options.Sinks.Len() != 4 || b.Attn.Q.B == nil || b.MoE.Router.B == nil {
		t.Fatalf("config %+v, block 1 %+v", c, b)
	}
	for l, want := range []int{3, 0, 3} { // the even layers are windowed
		if got := m.Blocks[l].(*gptoss.Block).Attn.Options.Window; got != want {
			t.Errorf("layer %d: window %d, want %d", l, got, want)
		}
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
		{"experts", func(w *gguf.Writer) { w.SetUint32("gpt-oss.expert_count", 6) }, "ffn_gate_inp.weight has shape [4 64], want [6 64]"},
		{"used", func(w *gguf.Writer) { w.SetUint32("gpt-oss.expert_used_count", 5) }, "(ExpertsUsed) 5 is outside [1, Experts], Experts = 4"},
		{"heads", func(w *gguf.Writer) { w.SetUint32("gpt-oss.attention.head_count", 8) }, "attn_q.weight has shape [128 64], want [256 64]"},
		{"rope scaling", func(w *gguf.Writer) { w.SetString("gpt-oss.rope.scaling.type", "longrope") }, "unsupported"},
		{"window", func(w *gguf.Writer) { w.SetString("gpt-oss.attention.sliding_window", "wide") }, "sliding_window"},
	} {
		_, err := gptoss.Load(testmodel.Edited(t, spec(tensor.F32), c.edit))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want it to mention %q", c.name, err, c.want)
		}
	}
}

// Decoding one token at a time through the KV cache gives the logits of one
// prefill over the same tokens: the windows and sinks hold either way.
func TestDecodeMatchesPrefill(t *testing.T) {
	m := load(t, spec(tensor.F32))
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

// The card round trip: describe → parse → the same Config, and the loaded
// model's card is the file's. A card counts the weights a model holds.
func TestCardRoundTrip(t *testing.T) {
	for _, dt := range []tensor.DType{tensor.F32, tensor.MXFP4} {
		path := write(t, spec(dt))
		file, err := card.Describe(path)
		if err != nil {
			t.Fatal(err)
		}
		got, err := card.Parse(file.Render())
		if err != nil {
			t.Fatal(err)
		}
		m := load(t, spec(dt))
		if got.(gptoss.Config) != m.Config {
			t.Fatalf("parsed %+v, loaded %+v", got, m.Config)
		}
		k := m.Card()
		k.Name = file.Name
		if dt == tensor.MXFP4 { // the file says MXFP4_MOE (general.file_type); the weights are mostly Q8_0 by count
			k.Quant = file.Quant
		}
		if k.Render() != file.Render() {
			t.Errorf("%v: the loaded model's card\n%s\ndiffers from the file's\n%s", dt, k.Render(), file.Render())
		}
		if k := gptoss.New(m.Config).Card(); len(k.Params) != 0 || k.ParamCount != 0 {
			t.Errorf("a model without weights lists %d parameters, %d in all", len(k.Params), k.ParamCount)
		}
		for _, m := range []*gptoss.Model{m, gptoss.NewRandom(m.Config, 1)} {
			var n int64
			for _, w := range m.Weights() {
				n += int64(w.T.Len())
			}
			if got := m.Card().ParamCount; got != n {
				t.Errorf("%v: the card counts %d parameters, the weights hold %d", dt, got, n)
			}
		}
	}
}
