package recipes

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/toyml/toy/internal/testmodel"
	"github.com/toyml/toy/toy/gguf"
	"github.com/toyml/toy/toy/models/cohere"
	"github.com/toyml/toy/toy/models/ernie"
	"github.com/toyml/toy/toy/models/glm4"
	"github.com/toyml/toy/toy/models/gptoss"
	"github.com/toyml/toy/toy/models/lfm2"
	"github.com/toyml/toy/toy/models/llama4"
	"github.com/toyml/toy/toy/models/olmo2"
	"github.com/toyml/toy/toy/models/phi2"
	"github.com/toyml/toy/toy/models/phi3"
	"github.com/toyml/toy/toy/models/qwen35"
	"github.com/toyml/toy/toy/models/starcoder2"
	"github.com/toyml/toy/toy/tensor"
)

// Every family toy loads trains from scratch: the loss falls, a checkpoint
// resumes bit for bit, and the saved model loads back with the same
// logits.
func TestFamiliesFromScratch(t *testing.T) {
	for _, c := range []struct {
		name string
		cfg  any
		lr   float64 // 0: 3e-3; norms after the sublayers and scaled logits learn slower
		load func(*gguf.File) (Model, error)
	}{
		{"phi2", phi2.Config{VocabSize: 40, ContextLength: 32, Embed: 32, Layers: 2, FFN: 64, Heads: 4, KVHeads: 4, HeadDim: 8,
			RopeDim: 4, RopeBase: 10000, NormEps: 1e-5}, 0, func(f *gguf.File) (Model, error) { return phi2.Load(f) }},
		{"phi3", phi3.Config{VocabSize: 40, ContextLength: 32, Embed: 32, Layers: 2, FFN: 64, Heads: 4, KVHeads: 2, HeadDim: 8,
			RopeDim: 8, RopeBase: 10000, NormEps: 1e-5, RopeOrigContext: 32}, 0, func(f *gguf.File) (Model, error) { return phi3.Load(f) }},
		{"starcoder2", starcoder2.Config{VocabSize: 40, ContextLength: 32, Embed: 32, Layers: 2, FFN: 64, Heads: 4, KVHeads: 2,
			RopeBase: 1e5, NormEps: 1e-5}, 0, func(f *gguf.File) (Model, error) { return starcoder2.Load(f) }},
		{"olmo2", olmo2.Config{VocabSize: 40, ContextLength: 32, Embed: 32, Layers: 2, FFN: 64, Heads: 4, KVHeads: 2,
			RopeBase: 5e5, NormEps: 1e-6}, 1e-2, func(f *gguf.File) (Model, error) { return olmo2.Load(f) }},
		{"cohere2", cohere.Config{Arch: "cohere2", VocabSize: 40, ContextLength: 32, Embed: 32, Layers: 4, FFN: 64, Heads: 4,
			KVHeads: 2, RopeBase: 50000, NormEps: 1e-5, LogitScale: 0.5, Window: 4, SlidingPattern: 4}, 1e-2,
			func(f *gguf.File) (Model, error) { return cohere.Load(f) }},
		{"command-r-plus", cohere.Config{Arch: "command-r", VocabSize: 40, ContextLength: 32, Embed: 32, Layers: 2, FFN: 64,
			Heads: 4, KVHeads: 2, RopeBase: 8e6, NormEps: 1e-5, LogitScale: 0.5, QKNorm: true}, 1e-2,
			func(f *gguf.File) (Model, error) { return cohere.Load(f) }},
		{"gptoss", gptoss.Config{VocabSize: 40, ContextLength: 32, Embed: 32, Layers: 2, FFN: 32, Experts: 4, ExpertsUsed: 2,
			Heads: 4, KVHeads: 2, HeadDim: 8, RopeDim: 8, RopeBase: 150000, NormEps: 1e-5, Window: 4, WindowPeriod: 2,
			RopeScale: 4, RopeOrigContext: 16}, 0, func(f *gguf.File) (Model, error) { return gptoss.Load(f) }},
		// Llama 4 with llama.cpp's spans (a saved file keeps no others):
		// NoPE layer 3, the mixture in layers 1 and 3, weighted inputs.
		{"llama4", llama4.Config{VocabSize: 40, ContextLength: 32, Embed: 32, Layers: 4, FFN: 64, ExpertFFN: 32, Experts: 4,
			ExpertsUsed: 2, MoePeriod: 2, Heads: 4, KVHeads: 2, HeadDim: 8, RopeBase: 500000, NormEps: 1e-5,
			NoRopePeriod: llama4.DefaultNoRopePeriod, Chunk: llama4.DefaultChunk, ChunkPeriod: llama4.DefaultChunkPeriod,
			TempScale: llama4.DefaultTempScale, TempFloor: llama4.DefaultTempFloor, TempOffset: llama4.DefaultTempOffset, L2Norm: true},
			0, func(f *gguf.File) (Model, error) { return llama4.Load(f) }},
		// LFM2: convolutions in layers 0, 1 and 3, attention (one with a
		// window) in 2; the taps train like any weight.
		{"lfm2", lfm2.Config{Arch: "lfm2", VocabSize: 40, ContextLength: 32, Embed: 32, Layers: 4, FFN: 64, Heads: 4,
			KVHeads: []int{0, 0, 2, 0}, ConvTaps: 3, RopeBase: 1e6, NormEps: 1e-5, Window: 6}, 0,
			func(f *gguf.File) (Model, error) { return lfm2.Load(f) }},
		// LFM2-MoE: a dense layer, then mixtures of 4 experts, 2 a token,
		// by sigmoid scores and a (constant) selection bias.
		{"lfm2moe", lfm2.Config{Arch: "lfm2moe", VocabSize: 40, ContextLength: 32, Embed: 32, Layers: 3, FFN: 64, Heads: 4,
			KVHeads: []int{0, 2, 0}, ConvTaps: 3, RopeBase: 1e6, NormEps: 1e-5, Experts: 4, ExpertsUsed: 2, ExpertFFN: 32,
			DenseLead: 1, Sigmoid: true}, 0, func(f *gguf.File) (Model, error) { return lfm2.Load(f) }},
		// Qwen3.5: the delta rule in layers 0 and 2 (one key head for two
		// value heads), gated attention in 1 and 3; the gradients run back
		// through the recurrence, the convolution and the decay rates.
		{"qwen35", qwen35.Config{Arch: qwen35.Arch, VocabSize: 40, ContextLength: 32, Embed: 32, Layers: 4, FFN: 64, Interval: 2, Heads: 4,
			KVHeads: 2, HeadDim: 8, RopeDim: 4, RopeBase: 1e7, Sections: [4]int{2, 0, 0, 0}, KHeads: 1, VHeads: 2, StateDim: 8,
			ConvTaps: 4, NormEps: 1e-6, TiedOutput: true}, 0, func(f *gguf.File) (Model, error) { return qwen35.Load(f) }},
		// Qwen3.5-MoE: mixtures of 4 experts, 2 a token, and a shared
		// expert behind its sigmoid gate, in every layer.
		{"qwen35moe", qwen35.Config{Arch: qwen35.ArchMoE, VocabSize: 40, ContextLength: 32, Embed: 32, Layers: 4, Interval: 2,
			Heads: 4, KVHeads: 2, HeadDim: 8, RopeDim: 4, RopeBase: 1e7, Sections: [4]int{2, 0, 0, 0}, KHeads: 1, VHeads: 2,
			StateDim: 8, ConvTaps: 4, NormEps: 1e-6, TiedOutput: true, Experts: 4, ExpertsUsed: 2, ExpertFFN: 32, SharedFFN: 32}, 0,
			func(f *gguf.File) (Model, error) { return qwen35.Load(f) }},
		// Qwen3-Next: 2 key heads read by 4 value heads in groups, β and α
		// from one projection, mixtures in every layer.
		{"qwen3next", qwen35.Config{Arch: qwen35.ArchNext, VocabSize: 40, ContextLength: 32, Embed: 32, Layers: 4, Interval: 2,
			Heads: 4, KVHeads: 2, HeadDim: 8, RopeDim: 4, RopeBase: 1e7, KHeads: 2, VHeads: 4, StateDim: 8, ConvTaps: 4,
			NormEps: 1e-6, TiedOutput: true, Experts: 4, ExpertsUsed: 2, ExpertFFN: 32, SharedFFN: 32}, 0,
			func(f *gguf.File) (Model, error) { return qwen35.Load(f) }},
		// GLM-4: norms around each sublayer, the fused up projection,
		// biases on q, k and v; GLM-4.5: a dense layer, then mixtures
		// chosen by sigmoid scores and a (constant) bias, with a shared
		// expert.
		{"glm4", glm4.Config{Arch: glm4.Arch, VocabSize: 40, ContextLength: 32, Embed: 32, Layers: 2, FFN: 64, Heads: 4,
			KVHeads: 2, HeadDim: 8, RopeDim: 4, RopeBase: 1e4, NormEps: 1e-5, QKVBias: true}, 1e-2,
			func(f *gguf.File) (Model, error) { return glm4.Load(f) }},
		{"glm4moe", glm4.Config{Arch: glm4.ArchMoE, VocabSize: 40, ContextLength: 32, Embed: 32, Layers: 3, FFN: 64, Heads: 4,
			KVHeads: 2, HeadDim: 8, RopeDim: 4, RopeBase: 1e6, NormEps: 1e-5, QKVBias: true, QKNorm: true, DenseLayers: 1,
			Experts: 4, ExpertsUsed: 2, ExpertFFN: 32, SharedExperts: 1, ExpertWeightsNorm: true, ExpertWeightsScale: 2.5}, 0,
			func(f *gguf.File) (Model, error) { return glm4.Load(f) }},
		// ERNIE 4.5: Llama's block with heads wider than D/H and q, k, v
		// biases; ERNIE 4.5 MoE: mixtures chosen by softmax and a
		// (constant) bias in layers 1 and 3, dense layers 0 and 2, a
		// shared expert, the head tied (slower to learn at 3e-3).
		{"ernie4_5", ernie.Config{Arch: ernie.Arch, VocabSize: 40, ContextLength: 32, Embed: 32, Layers: 2, FFN: 64, Heads: 4,
			KVHeads: 2, HeadDim: 16, RopeBase: 5e5, NormEps: 1e-5, QKVBias: true}, 0,
			func(f *gguf.File) (Model, error) { return ernie.Load(f) }},
		{"ernie4_5-moe", ernie.Config{Arch: ernie.ArchMoE, VocabSize: 40, ContextLength: 32, Embed: 32, Layers: 4, FFN: 64,
			Heads: 4, KVHeads: 2, HeadDim: 8, RopeBase: 5e5, NormEps: 1e-5, DenseLayers: 1, MoeStep: 2, Experts: 4, ExpertsUsed: 2,
			ExpertFFN: 32, SharedFFN: 32, ExpertBias: true, TiedOutput: true}, 1e-2, func(f *gguf.File) (Model, error) { return ernie.Load(f) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			r, _ := checkFromScratch(t, c.cfg, c.lr, c.load)
			// Command R+'s per-head query/key norm scales start at 1 and
			// train: gradients reach them through the per-head LayerNorm.
			headNorms := 0
			for _, p := range r.Params {
				if strings.HasSuffix(p.Name, "q_norm.weight") || strings.HasSuffix(p.Name, "k_norm.weight") {
					headNorms++
					if p.Decay || !slices.ContainsFunc(p.T.Float32s(), func(v float32) bool { return v != 1 }) {
						t.Errorf("%s: decay %v, still all 1 after training", p.Name, p.Decay)
					}
				}
			}
			if c.name == "command-r-plus" && headNorms != 4 {
				t.Errorf("%d query/key norm parameters, want 4", headNorms)
			}
		})
	}
}

// LoRA adapts the attention of every family that loads: the adapters find
// their projections (in the families' own block types too), and the loss
// falls.
func TestFamiliesLoRA(t *testing.T) {
	for _, spec := range []testmodel.Spec{
		{Name: "phi3", Arch: "phi3", DType: tensor.Q8_0, Vocab: "none", VocabSize: 300, Embed: 64, Layers: 2, FFN: 64,
			Heads: 4, KVHeads: 2, Context: 64, Seed: 3},
		{Name: "olmo2", Arch: "olmo2", DType: tensor.Q8_0, Vocab: "none", VocabSize: 300, Embed: 64, Layers: 2, FFN: 64,
			Heads: 4, KVHeads: 2, Context: 64, Seed: 3},
		{Name: "cohere2", Arch: "cohere2", DType: tensor.Q8_0, Vocab: "none", VocabSize: 300, Embed: 64, Layers: 4, FFN: 64,
			Heads: 4, KVHeads: 2, Context: 64, Seed: 3, Window: 4, Tied: true},
		// Command R+: 64 layers, from which the test models carry per-head
		// query/key norms.
		{Name: "command-r-plus", Arch: "command-r", DType: tensor.Q8_0, Vocab: "none", VocabSize: 300, Embed: 32, Layers: 64,
			FFN: 32, Heads: 4, KVHeads: 2, Context: 64, Seed: 3, Tied: true},
		{Name: "starcoder2", Arch: "starcoder2", DType: tensor.Q8_0, Vocab: "none", VocabSize: 300, Embed: 64, Layers: 2,
			FFN: 64, Heads: 4, KVHeads: 2, Context: 64, Seed: 3},
		{Name: "gpt-oss", Arch: "gpt-oss", DType: tensor.Q8_0, Vocab: "none", VocabSize: 300, Embed: 64, Layers: 2,
			FFN: 32, Heads: 4, KVHeads: 2, HeadDim: 32, Context: 64, Seed: 3, Experts: 4, ExpertsUsed: 2, Window: 4},
		{Name: "llama4", Arch: "llama4", DType: tensor.Q8_0, Vocab: "none", VocabSize: 300, Embed: 64, Layers: 4,
			FFN: 64, Heads: 4, KVHeads: 2, Context: 64, Seed: 3, Experts: 4, ExpertsUsed: 1,
			Llama4: &testmodel.Llama4Spec{ExpertFFN: 32, MoEPeriod: 2}},
		// LFM2: adapters on the attention layers' q and v (layers 1 and 3).
		{Name: "lfm2", Arch: "lfm2", DType: tensor.Q8_0, Vocab: "none", VocabSize: 300, Embed: 64, Layers: 4,
			FFN: 64, Heads: 4, Context: 64, Seed: 3, Tied: true, Lfm2: &testmodel.Lfm2Spec{KVHeads: []int{0, 2, 0, 2}, ConvL: 3}},
		// Qwen3.5: adapters on the gated attention's q (query and gate)
		// and v, in layers 1 and 3.
		{Name: "qwen35", Arch: "qwen35", DType: tensor.Q8_0, Vocab: "none", VocabSize: 300, Embed: 64, Layers: 4,
			FFN: 64, Heads: 4, KVHeads: 2, HeadDim: 32, RopeDim: 8, Context: 64, Seed: 3, Tied: true,
			Qwen35: &testmodel.Qwen35Spec{KHeads: 2, VHeads: 4, StateDim: 16, ConvL: 4, Interval: 2}},
		// GLM-4.5: adapters on q and v, beside their biases.
		{Name: "glm4moe", Arch: "glm4moe", DType: tensor.Q8_0, Vocab: "none", VocabSize: 300, Embed: 64, Layers: 3,
			FFN: 64, Heads: 4, KVHeads: 2, HeadDim: 32, RopeDim: 16, Context: 64, Seed: 3, Tied: true, Experts: 4, ExpertsUsed: 2,
			Glm4: &testmodel.Glm4Spec{DenseLayers: 1, ExpertFFN: 32, SharedExperts: 1, WeightsScale: 2.5, WeightsNorm: true, BiasScale: 0.3}},
		// ERNIE 4.5 MoE: adapters on q and v of every layer, dense or not.
		{Name: "ernie4_5-moe", Arch: "ernie4_5-moe", DType: tensor.Q8_0, Vocab: "none", VocabSize: 300, Embed: 64, Layers: 3,
			FFN: 64, Heads: 4, KVHeads: 2, Context: 64, Seed: 3, Experts: 4, ExpertsUsed: 2, SharedFFN: 64,
			Ernie: &testmodel.ErnieSpec{DenseLayers: 1, MoEStep: 1, ExpertFFN: 32, SharedExperts: 2, BiasScale: 0.1, BiasRow: true}},
	} {
		t.Run(spec.Name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "base.gguf")
			if _, err := testmodel.Write(spec, path); err != nil {
				t.Fatal(err)
			}
			targets := []string{"q", "v"}
			if spec.Arch == "phi3" {
				targets = []string{"qkv"} // fused
			}
			r, err := NewLoRA(path, NewOptions(12).WithSteps(10).WithTargets(targets...))
			if err != nil {
				t.Fatal(err)
			}
			defer r.meta.Close()
			attention := spec.Layers
			if spec.Lfm2 != nil {
				attention = 2
			}
			if spec.Qwen35 != nil {
				attention = spec.Layers / spec.Qwen35.Interval
			}
			if want := attention * len(targets) * 2; len(r.Params) != want {
				t.Fatalf("%d adapter tensors, want %d", len(r.Params), want)
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
		})
	}
}
