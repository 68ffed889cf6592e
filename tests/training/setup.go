// Package training holds the PyTorch gate for toy's training step: tiny
// models with fresh random weights (toy's own initialisation), one fixed
// batch, and the loss, every parameter gradient and ten AdamW losses that a
// from-scratch PyTorch twin (torch_ref.py) computes for them.
package training

import (
	"fmt"

	"github.com/toyml/toy/toy/engine"
	"github.com/toyml/toy/toy/gguf"
	"github.com/toyml/toy/toy/models/cohere"
	"github.com/toyml/toy/toy/models/deepseek2"
	"github.com/toyml/toy/toy/models/gemma"
	"github.com/toyml/toy/toy/models/gpt2"
	"github.com/toyml/toy/toy/models/llama"
	"github.com/toyml/toy/toy/models/olmo2"
	"github.com/toyml/toy/toy/models/phi3"
	"github.com/toyml/toy/toy/models/qwen35"
	"github.com/toyml/toy/toy/models/starcoder2"
	"github.com/toyml/toy/toy/nn"
	"github.com/toyml/toy/toy/tensor"
)

// Hyperparameters of the gate, shared with torch_ref.py through the golden.
const (
	Steps       = 10
	LR          = 1e-2
	WeightDecay = 0.1
	Clip        = 1.0
	Vocab       = 48
)

// Case is one gated model.
type Case struct {
	Name  string
	Model interface {
		engine.Model
		Weights() []nn.Named
	}
	SetMetadata func(w *gguf.Writer)
}

// Cases returns fresh models: llama (GQA, untied), qwen2 (biases, NeoX RoPE,
// tied), gpt2, and gemma2 (sandwich norms, GeGLU, heads wider than D/H, a
// sliding window of 4 on layer 0 of the 12 positions, and soft caps small
// enough for the fresh weights' scores and logits to bend: tanh's derivative
// enters every gradient), and gemma3 (per-head query/key norms, local and
// global layers with different RoPE), and mixtral (a mixture of experts:
// the router's gradient through the renormalised weights), and granite
// (multipliers on the embeddings, residual branches, scores and logits),
// and phi3 (fused projections split in the forward pass, partial RoPE),
// and starcoder2 (LayerNorms and biases with grouped-query RoPE attention),
// and two DeepSeek-V2s (latent attention in both file layouts, shared
// experts, softmax and normalised sigmoid routing), and qwen35 (the gated
// delta rule's recurrence, convolution and decay rates, gated attention),
// and qwen3next (its value heads reading grouped key heads, the fused β/α
// projection, mixtures with a gated shared expert).
func Cases() []Case {
	lc := llama.Config{Arch: "llama", VocabSize: Vocab, ContextLength: 32, Embed: 32, Layers: 2, FFN: 64,
		Heads: 4, KVHeads: 2, HeadDim: 8, RopeDim: 8, RopeBase: 10000, NormEps: 1e-5}
	qc := lc
	qc.Arch, qc.RopeNeoX, qc.TiedOutput, qc.RopeBase = "qwen2", true, true, 1e6
	g2 := gemma.Config{Arch: "gemma2", VocabSize: Vocab, ContextLength: 32, Embed: 32, Layers: 2, FFN: 64, Heads: 4, KVHeads: 2, HeadDim: 16,
		RopeBase: 10000, NormEps: 1e-6, Window: 4, AttnSoftcap: 0.02, FinalSoftcap: 0.1, QueryScale: 0.25, TiedOutput: true}
	// Gemma 3: six layers, 0–4 local (window 4, RoPE base 10000), 5 global
	// (base 10⁶, angles divided by 8); per-head q/k norms.
	g3 := gemma.Config{Arch: "gemma3", VocabSize: Vocab, ContextLength: 32, Embed: 32, Layers: 6, FFN: 64, Heads: 4, KVHeads: 2,
		HeadDim: 16, RopeBase: 1e6, NormEps: 1e-6, Window: 4, RopeScale: 8, QueryScale: 0.25, TiedOutput: true}
	// Mixtral: 4 experts of width 32 in each layer, 2 a token, renormalised.
	mc := lc
	mc.Experts, mc.ExpertsUsed, mc.ExpertFFN = 4, 2, 32
	// Granite: Llama with its four multipliers, each far from 1 (the
	// attention's from 1/√8).
	grc := lc
	grc.Arch, grc.TiedOutput = "granite", true
	grc.EmbeddingScale, grc.ResidualScale, grc.AttentionScale, grc.LogitScale = 12, 0.22, 0.125, 8
	gc := gpt2.Config{VocabSize: Vocab, ContextLength: 32, Embed: 32, Layers: 2, FFN: 128, Heads: 4, NormEps: 1e-5, TiedOutput: true}
	// Phi-3: fused [q; k; v] and [gate; up], 6 of 8 features rotated
	// (Phi-4-mini's partial RoPE), without LongRoPE's factors (constants
	// the gate would list as parameters).
	pc := phi3.Config{VocabSize: Vocab, ContextLength: 32, Embed: 32, Layers: 2, FFN: 64, Heads: 4, KVHeads: 2, HeadDim: 8,
		RopeDim: 6, RopeBase: 10000, NormEps: 1e-5, RopeOrigContext: 32}
	sc := starcoder2.Config{VocabSize: Vocab, ContextLength: 32, Embed: 32, Layers: 2, FFN: 64, Heads: 4, KVHeads: 2,
		RopeBase: 1e5, NormEps: 1e-5}
	// DeepSeek-V2: latent attention (Dk = 12 with 4 rotated, Dv = 8) and
	// a dense first layer, then 4 experts, 2 a token, beside a shared one;
	// V2-Lite's layout (queries from x, attn_k_b/attn_v_b, softmax
	// weights as they are), and V2's (a query bottleneck, attn_kv_b) with
	// V3's router (sigmoid scores divided by their sum, × 2.5).
	dl := deepseek2.Config{VocabSize: Vocab, ContextLength: 32, Embed: 32, Layers: 2, DenseLayers: 1, FFN: 64, Heads: 4,
		KVLoraRank: 16, KeyDim: 12, ValueDim: 8, RopeDim: 4, SplitKVB: true, Experts: 4, ExpertsUsed: 2, ExpertFFN: 16,
		SharedExperts: 1, ExpertGating: "softmax", RopeBase: 10000, NormEps: 1e-5}
	dv := dl
	dv.QLoraRank, dv.SplitKVB, dv.ExpertGating, dv.ExpertWeightsNorm, dv.ExpertWeightsScale = 16, false, "sigmoid", true, 2.5
	// OLMo 2: norms after the sublayers, whole-projection q/k norms.
	oc := olmo2.Config{VocabSize: Vocab, ContextLength: 32, Embed: 32, Layers: 2, FFN: 64, Heads: 4, KVHeads: 2,
		RopeBase: 5e5, NormEps: 1e-6}
	// Command R7B: layers 0–2 of 4 windowed (4 positions of the 12) with
	// RoPE, 3 global without; a parallel block; logits × 0.25.
	cc := cohere.Config{Arch: "cohere2", VocabSize: Vocab, ContextLength: 32, Embed: 32, Layers: 4, FFN: 64, Heads: 4,
		KVHeads: 2, RopeBase: 50000, NormEps: 1e-5, LogitScale: 0.25, Window: 4, SlidingPattern: 4}
	// Qwen3.5: the delta rule in layers 0 and 2 (one key head read by two
	// value heads), gated attention in 1 and 3; its own output head.
	q35 := qwen35.Config{Arch: qwen35.Arch, VocabSize: Vocab, ContextLength: 32, Embed: 32, Layers: 4, FFN: 64, Interval: 2, Heads: 4,
		KVHeads: 2, HeadDim: 8, RopeDim: 4, RopeBase: 1e7, Sections: [4]int{2, 0, 0, 0}, KHeads: 1, VHeads: 2, StateDim: 8,
		ConvTaps: 4, NormEps: 1e-6}
	// Qwen3-Next: as Qwen3.5 but 2 key heads for 4 value heads, which
	// read them in groups, β and α from one projection, and in every layer
	// a mixture of 4 experts, 2 a token, beside a gated shared expert.
	qn := qwen35.Config{Arch: qwen35.ArchNext, VocabSize: Vocab, ContextLength: 32, Embed: 32, Layers: 4, Interval: 2, Heads: 4,
		KVHeads: 2, HeadDim: 8, RopeDim: 4, RopeBase: 1e7, KHeads: 2, VHeads: 4, StateDim: 8, ConvTaps: 4, NormEps: 1e-6,
		Experts: 4, ExpertsUsed: 2, ExpertFFN: 16, SharedFFN: 24}
	return []Case{
		{"llama", llama.NewRandom(lc, 1), lc.SetMetadata},
		{"qwen2", llama.NewRandom(qc, 2), qc.SetMetadata},
		{"gpt2", gpt2.NewRandom(gc, 3), gc.SetMetadata},
		{"gemma2", gemma.NewRandom(g2, 4), g2.SetMetadata},
		{"gemma3", gemma.NewRandom(g3, 5), g3.SetMetadata},
		{"mixtral", llama.NewRandom(mc, 6), mc.SetMetadata},
		{"granite", llama.NewRandom(grc, 7), grc.SetMetadata},
		{"phi3", phi3.NewRandom(pc, 8), pc.SetMetadata},
		{"starcoder2", starcoder2.NewRandom(sc, 9), sc.SetMetadata},
		{"olmo2", olmo2.NewRandom(oc, 12), oc.SetMetadata},
		{"cohere2", cohere.NewRandom(cc, 13), cc.SetMetadata},
		{"deepseek2-lite", deepseek2.NewRandom(dl, 10), dl.SetMetadata},
		{"deepseek2", deepseek2.NewRandom(dv, 11), dv.SetMetadata},
		{"qwen35", qwen35.NewRandom(q35, 14), q35.SetMetadata},
		{"qwen3next", qwen35.NewRandom(qn, 15), qn.SetMetadata},
	}
}

// BatchTokens is the fixed batch: B = 2 sequences of T+1 = 13 tokens, the
// second padded (token 0) at its end.
func BatchTokens() [][]int32 {
	a := make([]int32, 13)
	b := make([]int32, 13)
	for i := range a {
		a[i] = int32((i*7 + 3) % Vocab)
		b[i] = int32((i*i + 5) % Vocab)
	}
	for i := 10; i < 13; i++ {
		b[i] = 0
	}
	return [][]int32{a, b}
}

// Pad is the padding token of BatchTokens (targets equal to it are ignored).
const Pad = 0

// WriteGGUF writes the case's current weights (F32) and configuration.
func WriteGGUF(c Case, path string) error {
	w := gguf.NewWriter()
	c.SetMetadata(w)
	for _, p := range c.Model.Weights() {
		if err := w.AddFloat32(p.Name, tensor.F32, p.T.Data(), p.T.Shape()...); err != nil {
			return fmt.Errorf("%s: %w", c.Name, err)
		}
	}
	return w.WriteFile(path)
}
