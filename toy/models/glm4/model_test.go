package glm4_test

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
	"github.com/toyml/toy/toy/models/glm4"
	"github.com/toyml/toy/toy/tensor"
)

// gate returns the gate model name of internal/testmodel with a synthetic
// vocabulary of 300 tokens, quicker to write than GPT-2's.
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

func load(t *testing.T, s testmodel.Spec, edit func(w *gguf.Writer)) (*glm4.Model, error) {
	t.Helper()
	return glm4.Load(testmodel.Edited(t, s, edit))
}

// The gate models load with the shapes and features their files give.
func TestLoad(t *testing.T) {
	for _, c := range []struct {
		name string
		want glm4.Config
	}{
		{"glm4-f32", glm4.Config{Arch: glm4.Arch, VocabSize: 300, ContextLength: 256, Embed: 64, Layers: 3, FFN: 96,
			Heads: 4, KVHeads: 2, HeadDim: 16, RopeDim: 8, RopeBase: 10000, NormEps: 1e-6, QKVBias: true}},
		{"glm4moe-f32", glm4.Config{Arch: glm4.ArchMoE, VocabSize: 300, ContextLength: 256, Embed: 64, Layers: 4, FFN: 128,
			Heads: 4, KVHeads: 2, HeadDim: 32, RopeDim: 16, RopeBase: 1e6, NormEps: 1e-6, QKVBias: true,
			DenseLayers: 1, Experts: 8, ExpertsUsed: 2, ExpertFFN: 32, SharedExperts: 1, ExpertWeightsNorm: true,
			ExpertWeightsScale: 2.5, MTPLayers: 1}},
		{"glm4moe-q8_0", glm4.Config{Arch: glm4.ArchMoE, VocabSize: 300, ContextLength: 256, Embed: 64, Layers: 3, FFN: 128,
			Heads: 4, KVHeads: 2, HeadDim: 32, RopeDim: 16, RopeBase: 1e6, NormEps: 1e-6, QKVBias: true, QKNorm: true,
			DenseLayers: 1, Experts: 8, ExpertsUsed: 2, ExpertFFN: 32, SharedExperts: 2, ExpertWeightsNorm: true,
			ExpertWeightsScale: 1, TiedOutput: true}},
	} {
		m, err := load(t, gate(t, c.name), func(*gguf.Writer) {})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if !reflect.DeepEqual(m.Config, c.want) {
			t.Errorf("%s: config\n %+v, want\n %+v", c.name, m.Config, c.want)
		}
		rope := m.Blocks[0].(*glm4.Block).Attn.RoPE
		if rope.NeoX != m.Config.MoE() || rope.Dim != c.want.RopeDim {
			t.Errorf("%s: RoPE %+v", c.name, rope)
		}
		if m.Config.MoE() && (m.MoE(0) != nil || m.MoE(1) == nil || m.MoE(1).Bias == nil) {
			t.Errorf("%s: layer 0 should be dense, layer 1 experts with a choice bias", c.name)
		}
	}
}

// Decoding one token at a time through the KV cache gives the logits of one
// prefill over the same tokens (whose experts run grouped, where decoding
// routes them token by token).
func TestDecodeMatchesPrefill(t *testing.T) {
	for _, name := range []string{"glm4-f32", "glm4moe-f32", "glm4moe-q8_0"} {
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
	moe, moeF32, dense := gate(t, "glm4moe-q8_0"), gate(t, "glm4moe-f32"), gate(t, "glm4-f32")
	for _, c := range []struct {
		name string
		spec testmodel.Spec
		edit func(w *gguf.Writer)
		want string
	}{
		{"layers", moe, func(w *gguf.Writer) { w.SetUint32("glm4moe.block_count", 4) }, "blk.3."},
		{"experts", moe, func(w *gguf.Writer) { w.SetUint32("glm4moe.expert_count", 6) }, "ffn_gate_inp.weight has shape [8 64], want [6 64]"},
		{"expert width", moe, func(w *gguf.Writer) { w.SetUint32("glm4moe.expert_feed_forward_length", 64) },
			"ffn_gate_exps.weight has shape [8 32 64], want [8 64 64]"},
		{"shared experts", moe, func(w *gguf.Writer) { w.SetUint32("glm4moe.expert_shared_count", 1) },
			"ffn_gate_shexp.weight has shape [64 64], want [32 64]"},
		{"dense layers", moe, func(w *gguf.Writer) { w.SetUint32("glm4moe.leading_dense_block_count", 2) }, "blk.1.ffn_gate.weight"},
		{"values", moe, func(w *gguf.Writer) { w.SetUint32("glm4moe.attention.value_length", 16) }, "keys 32 and values 16"},
		{"rope width", moe, func(w *gguf.Writer) { w.SetUint32("glm4moe.rope.dimension_count", 40) }, "(RopeDim) 40 is outside [1, HeadDim], HeadDim = 32"},
		{"q/k norms in one layer", moeF32, func(w *gguf.Writer) {
			if err := w.AddFloat32("blk.1.attn_q_norm.weight", tensor.F32, make([]float32, 32), 32); err != nil {
				t.Fatal(err)
			}
		}, "blk.1 and blk.0 differ in having attn_q_norm"},
		{"ffn", dense, func(w *gguf.Writer) { w.SetUint32("glm4.feed_forward_length", 64) }, "ffn_up.weight has shape [192 64], want [128 64]"},
		{"gating", moe, func(w *gguf.Writer) { w.SetUint32("glm4moe.expert_gating_func", 1) }, "unsupported"},
		{"groups", moe, func(w *gguf.Writer) { w.SetUint32("glm4moe.expert_group_count", 2) }, "unsupported"},
		{"rope scaling", dense, func(w *gguf.Writer) {
			w.SetString("glm4.rope.scaling.type", "yarn")
			w.SetFloat32("glm4.rope.scaling.factor", 4)
		}, "unsupported"},
		{"m-rope", dense, func(w *gguf.Writer) { w.SetInt32s("glm4.rope.dimension_sections", []int32{2, 1, 1, 0}) }, "unsupported"},
	} {
		_, err := load(t, c.spec, c.edit)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want it to mention %q", c.name, err, c.want)
		}
		if c.want == "unsupported" && !errors.Is(err, glm4.ErrUnsupported) {
			t.Errorf("%s: %v is not ErrUnsupported", c.name, err)
		}
	}
}

// A random model written with SetMetadata and its weights loads back as
// the same model: the same configuration and logits.
func TestNewRandomRoundTrip(t *testing.T) {
	for _, c := range []glm4.Config{
		{Arch: glm4.Arch, VocabSize: 40, ContextLength: 32, Embed: 32, Layers: 2, FFN: 48, Heads: 4, KVHeads: 2, HeadDim: 8,
			RopeDim: 4, RopeBase: 10000, NormEps: 1e-5, QKVBias: true},
		{Arch: glm4.ArchMoE, VocabSize: 40, ContextLength: 32, Embed: 32, Layers: 3, FFN: 48, Heads: 4, KVHeads: 2, HeadDim: 16,
			RopeDim: 8, RopeBase: 1e6, NormEps: 1e-5, QKVBias: true, QKNorm: true, DenseLayers: 1, Experts: 4, ExpertsUsed: 2,
			ExpertFFN: 16, SharedExperts: 1, ExpertWeightsNorm: true, ExpertWeightsScale: 2.5, TiedOutput: true, MTPLayers: 1},
	} {
		m := glm4.NewRandom(c, 3)
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
		back, err := glm4.Load(f)
		if err != nil {
			t.Fatalf("%s: %v", c.Arch, err)
		}
		if !reflect.DeepEqual(back.Config, c) {
			t.Errorf("%s: loaded %+v, wrote %+v", c.Arch, back.Config, c)
		}
		ids := []int32{1, 7, 30, 2}
		want, got := m.Forward(ids, nil).Float32s(), back.Forward(ids, nil).Float32s()
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: the loaded model's logits differ", c.Arch)
		}
		// The card describes the configuration and reads back as it, and
		// counts the weights the model holds.
		k := m.Card()
		cfg, err := card.Parse(k.Render())
		if err != nil || !reflect.DeepEqual(cfg, c) {
			t.Errorf("%s: card parses to %+v (%v), want %+v", c.Arch, cfg, err, c)
		}
		var n int64
		for _, w := range m.Weights() {
			n += int64(w.T.Len())
		}
		if k.ParamCount != n {
			t.Errorf("%s: the card counts %d parameters, the weights hold %d", c.Arch, k.ParamCount, n)
		}
	}
}
