package ernie_test

import (
	"errors"
	"math"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/toyml/toy/internal/testmodel"
	"github.com/toyml/toy/toy/card"
	"github.com/toyml/toy/toy/gguf"
	"github.com/toyml/toy/toy/models/ernie"
	"github.com/toyml/toy/toy/nn"
	"github.com/toyml/toy/toy/tensor"
)

// gate returns the gate model name of internal/testmodel with a synthetic
// vocabulary of 300 tokens, quicker to write than Llama 2's.
func gate(t *testing.T, name string) testmodel.Spec {
	t.Helper()
	for _, s := range testmodel.Specs() {
		if s.Name == name {
			s.Vocab, s.VocabSize = "none", 300
			return s
		}
	}
	t.Fatalf("no gate model %s", name)
	return testmodel.Spec{}
}

func load(t *testing.T, s testmodel.Spec, edit func(w *gguf.Writer)) (*ernie.Model, error) {
	t.Helper()
	return ernie.Load(testmodel.Edited(t, s, edit))
}

// The layer pattern: experts in layer l (from 0) when l ≥ L_d and l+1 is a
// multiple of the step s.
func TestDenseLayers(t *testing.T) {
	for _, c := range []struct {
		name       string
		lead, step int
		want       string // D dense, E experts, layers 0 … 5
	}{
		{"ERNIE-4.5-21B-A3B", 1, 1, "DEEEEE"},
		{"ERNIE-4.5-300B-A47B", 3, 1, "DDDEEE"},
		{"every second layer", 1, 2, "DEDEDE"}, // (l+1) mod 2 = 0: l = 1, 3, 5
		{"every third after two", 2, 3, "DDEDDE"},
	} {
		cfg := ernie.Config{Arch: ernie.ArchMoE, Layers: 6, DenseLayers: c.lead, MoeStep: c.step}
		got := ""
		for l := range cfg.Layers {
			got += map[bool]string{true: "D", false: "E"}[cfg.Dense(l)]
		}
		if got != c.want {
			t.Errorf("%s: layers %s, want %s", c.name, got, c.want)
		}
	}
	if dense := (ernie.Config{Arch: ernie.Arch, Layers: 2}); !dense.Dense(1) {
		t.Error("an ernie4_5 layer has experts")
	}
}

// The gate models load with the shapes and features their files give.
func TestLoad(t *testing.T) {
	for _, c := range []struct {
		name string
		want ernie.Config
	}{
		{"ernie4_5-f32", ernie.Config{Arch: ernie.Arch, VocabSize: 300, ContextLength: 256, Embed: 64, Layers: 3, FFN: 128,
			Heads: 4, KVHeads: 2, HeadDim: 32, RopeBase: 500000, NormEps: 1e-6, QKVBias: true, TiedOutput: true}},
		{"ernie4_5-moe-f32", ernie.Config{Arch: ernie.ArchMoE, VocabSize: 300, ContextLength: 256, Embed: 64, Layers: 4, FFN: 128,
			Heads: 4, KVHeads: 2, HeadDim: 16, RopeBase: 500000, NormEps: 1e-6, DenseLayers: 1, MoeStep: 1, Experts: 8,
			ExpertsUsed: 2, ExpertFFN: 32, SharedFFN: 64, ExpertBias: true}},
		{"ernie4_5-moe-q8_0", ernie.Config{Arch: ernie.ArchMoE, VocabSize: 300, ContextLength: 256, Embed: 64, Layers: 2, FFN: 128,
			Heads: 4, KVHeads: 2, HeadDim: 16, RopeBase: 500000, NormEps: 1e-6, DenseLayers: 1, MoeStep: 2, Experts: 8,
			ExpertsUsed: 2, ExpertFFN: 32, ExpertBias: true, TiedOutput: true}},
	} {
		m, err := load(t, gate(t, c.name), func(*gguf.Writer) {})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if !reflect.DeepEqual(m.Config, c.want) {
			t.Errorf("%s: config\n %+v, want\n %+v", c.name, m.Config, c.want)
		}
		if rope := m.Blocks[0].(*nn.Block).Attn.RoPE; rope.NeoX || rope.Dim != c.want.HeadDim {
			t.Errorf("%s: RoPE %+v, want adjacent pairs over the whole head", c.name, rope)
		}
		if !m.Config.MoE() {
			continue
		}
		// ernie4_5-moe-f32 stores the choice bias [1, E], as the
		// converter writes it: it is read as [E].
		moe := m.MoE(1)
		if m.MoE(0) != nil || moe == nil || moe.Bias == nil || !reflect.DeepEqual(moe.Bias.Shape(), []int{8}) {
			t.Errorf("%s: layer 0 should be dense, layer 1 experts with a choice bias [8]", c.name)
		}
		if (moe.SharedDown != nil) != (c.want.SharedFFN > 0) || !moe.SharedUngated || !moe.Normalize || moe.Sigmoid || moe.Scale != 0 {
			t.Errorf("%s: mixture %+v", c.name, moe)
		}
	}
}

// Decoding one token at a time through the KV cache gives the logits of one
// prefill over the same tokens (whose experts run grouped, where decoding
// routes them token by token).
func TestDecodeMatchesPrefill(t *testing.T) {
	for _, name := range []string{"ernie4_5-f32", "ernie4_5-moe-f32", "ernie4_5-moe-q8_0"} {
		m, err := load(t, gate(t, name), func(*gguf.Writer) {})
		if err != nil {
			t.Fatal(err)
		}
		ids := []int32{5, 17, 250, 3, 99, 42, 7, 120, 64, 1, 299, 18}
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
			t.Errorf("%s: decode and prefill logits differ by up to %.2e", name, worst)
		}
	}
}

// Metadata that disagrees with the tensors, or asks for what toy lacks, is
// an error at load that names the problem.
func TestLyingMetadata(t *testing.T) {
	moe, q8, dense := gate(t, "ernie4_5-moe-f32"), gate(t, "ernie4_5-moe-q8_0"), gate(t, "ernie4_5-f32")
	addVec := func(name string, n int) func(w *gguf.Writer) {
		return func(w *gguf.Writer) {
			if err := w.AddFloat32(name, tensor.F32, make([]float32, n), n); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, c := range []struct {
		name string
		spec testmodel.Spec
		edit func(w *gguf.Writer)
		want string
	}{
		{"layers", moe, func(w *gguf.Writer) { w.SetUint32("ernie4_5-moe.block_count", 5) }, "blk.4."},
		{"experts", moe, func(w *gguf.Writer) { w.SetUint32("ernie4_5-moe.expert_count", 6) }, "ffn_gate_inp.weight has shape [8 64], want [6 64]"},
		{"expert width", moe, func(w *gguf.Writer) { w.SetUint32("ernie4_5-moe.expert_feed_forward_length", 64) },
			"ffn_gate_exps.weight has shape [8 32 64], want [8 64 64]"},
		{"shared width", moe, func(w *gguf.Writer) { w.SetUint32("ernie4_5-moe.expert_shared_feed_forward_length", 32) },
			"ffn_gate_shexp.weight has shape [64 64], want [32 64]"},
		{"no shared expert", moe, func(w *gguf.Writer) { w.SetUint32("ernie4_5-moe.expert_shared_feed_forward_length", 0) },
			"ffn_gate_shexp.weight has shape [64 64], want [0 64]"},
		{"dense layers", moe, func(w *gguf.Writer) { w.SetUint32("ernie4_5-moe.leading_dense_block_count", 2) }, "blk.1.ffn_gate.weight"},
		{"step", moe, func(w *gguf.Writer) { w.SetUint32("ernie4_5-moe.interleave_moe_layer_step", 2) }, "blk.2.ffn_gate.weight"},
		{"step of 0", q8, func(w *gguf.Writer) { w.SetUint32("ernie4_5-moe.interleave_moe_layer_step", 0) }, "experts every 0 layers"},
		{"bias in one layer", moe, addVec("blk.1.attn_q.bias", 64), "blk.1.attn_q.bias: query, key or value biases, where blk.0 has none"},
		{"values", dense, func(w *gguf.Writer) { w.SetUint32("ernie4_5.attention.value_length", 16) }, "keys 32 and values 16"},
		{"rope width", dense, func(w *gguf.Writer) { w.SetUint32("ernie4_5.rope.dimension_count", 16) }, "RoPE over 16"},
		{"ffn", dense, func(w *gguf.Writer) { w.SetUint32("ernie4_5.feed_forward_length", 64) }, "ffn_gate.weight has shape [128 64], want [64 64]"},
		{"groups", q8, func(w *gguf.Writer) { w.SetUint32("ernie4_5-moe.expert_group_count", 2) }, "unsupported"},
		{"rope scaling", dense, func(w *gguf.Writer) {
			w.SetString("ernie4_5.rope.scaling.type", "yarn")
			w.SetFloat32("ernie4_5.rope.scaling.factor", 4)
		}, "unsupported"},
		{"output bias", dense, addVec("blk.0.attn_output.bias", 64), "unsupported"},
	} {
		_, err := load(t, c.spec, c.edit)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want it to mention %q", c.name, err, c.want)
		}
		if c.want == "unsupported" && !errors.Is(err, ernie.ErrUnsupported) {
			t.Errorf("%s: %v is not ErrUnsupported", c.name, err)
		}
	}
}

// A random model written with SetMetadata and its weights loads back as
// the same model: the same configuration and logits. The mixture's layers
// alternate with dense ones (a step of 2), as Hugging Face's ERNIE places
// them and llama.cpp's graph does (its loader would not load the file).
func TestNewRandomRoundTrip(t *testing.T) {
	for _, c := range []ernie.Config{
		{Arch: ernie.Arch, VocabSize: 40, ContextLength: 32, Embed: 32, Layers: 2, FFN: 48, Heads: 4, KVHeads: 2, HeadDim: 16,
			RopeBase: 500000, NormEps: 1e-5, QKVBias: true, TiedOutput: true},
		{Arch: ernie.ArchMoE, VocabSize: 40, ContextLength: 32, Embed: 32, Layers: 4, FFN: 48, Heads: 4, KVHeads: 2, HeadDim: 8,
			RopeBase: 500000, NormEps: 1e-5, DenseLayers: 1, MoeStep: 2, Experts: 4, ExpertsUsed: 2, ExpertFFN: 16, SharedFFN: 32,
			ExpertBias: true},
	} {
		m := ernie.NewRandom(c, 3)
		w := gguf.NewWriter()
		c.SetMetadata(w)
		for _, p := range m.Weights() {
			if err := w.AddFloat32(p.Name, tensor.F32, p.T.Data(), p.T.Shape()...); err != nil {
				t.Fatal(err)
			}
		}
		path := filepath.Join(t.TempDir(), "m.gguf")
		if err := w.WriteFile(path); err != nil {
			t.Fatal(err)
		}
		f, err := gguf.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		back, err := ernie.Load(f)
		if err != nil {
			t.Fatalf("%s: %v", c.Arch, err)
		}
		if !reflect.DeepEqual(back.Config, c) {
			t.Errorf("%s: loaded %+v, wrote %+v", c.Arch, back.Config, c)
		}
		if c.MoE() && (back.MoE(2) != nil || back.MoE(3) == nil) {
			t.Errorf("%s: layer 2 should be dense, layer 3 experts", c.Arch)
		}
		ids := []int32{1, 7, 30, 2}
		want, got := m.Forward(ids, nil).Float32s(), back.Forward(ids, nil).Float32s()
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: the loaded model's logits differ", c.Arch)
		}
		// The card describes the configuration and reads back as it.
		cfg, err := card.Parse(m.Card().Render())
		if err != nil || !reflect.DeepEqual(cfg, c) {
			t.Errorf("%s: card parses to %+v (%v), want %+v", c.Arch, cfg, err, c)
		}
	}
}
