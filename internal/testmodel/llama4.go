// The Llama 4 test models: RoPE and NoPE layers interleaved, chunked local
// attention, the NoPE layers' temperature, the L2 norm of queries and keys,
// and mixtures of experts weighted before they run, beside a shared expert.

package testmodel

import (
	"math"

	"github.com/toyml/toy/toy/gguf"
	"github.com/toyml/toy/toy/tensor"
)

// Llama4Spec is the part of a Llama 4 model that Spec has no field for.
type Llama4Spec struct {
	ExpertFFN int `json:"expert_ffn"` // the experts' and the shared expert's width (Spec.FFN is the dense layers')
	MoEPeriod int `json:"moe_period"` // interleave_moe_layer_step: layer l is a mixture when (l+1) mod it = 0
}

// llama4Specs are the Llama 4 gate models, four layers each (layer 3 the
// NoPE layer, 0–2 RoPE and chunked), Llama 3.1's RoPE frequency factors
// over base 500000, one expert a token (as Scout and Maverick route):
//   - llama4-f32, shaped as Scout: a mixture of 4 experts in every layer,
//     the L2 norm of queries and keys on;
//   - llama4-q8_0, shaped as Maverick: dense and mixture layers
//     alternating, 128 experts (so no L2 norm: llama.cpp's rule for the
//     17B-128E), a tied output head.
//
// llama.cpp fixes the chunk (8192 positions) and the temperature's step
// (8192, counted from position 1): over these 48 positions neither acts,
// which LongSpecs' llama4-long-f32 covers.
func llama4Specs() []Spec {
	return []Spec{
		{Name: "llama4-f32", Arch: "llama4", DType: tensor.F32, Vocab: "gpt2", Embed: 64, Layers: 4, FFN: 96, Heads: 4,
			KVHeads: 2, Context: 256, Seed: 41, PromptIDs: gpt2Prompt, RopeFreqs: true, Experts: 4, ExpertsUsed: 1,
			Llama4: &Llama4Spec{ExpertFFN: 32, MoEPeriod: 1}},
		{Name: "llama4-q8_0", Arch: "llama4", DType: tensor.Q8_0, Vocab: "gpt2", Embed: 64, Layers: 4, FFN: 96, Heads: 4,
			KVHeads: 2, Context: 256, Tied: true, Seed: 42, PromptIDs: gpt2Prompt, RopeFreqs: true, Experts: 128, ExpertsUsed: 1,
			Llama4: &Llama4Spec{ExpertFFN: 32, MoEPeriod: 2}},
	}
}

// LongSpecs are the gate models whose features show only past llama.cpp's
// fixed spans, so that their prompts run longer than 8192 tokens; they are
// not among Specs (whose every model the device gates also run). One:
// llama4-long-f32, a small Llama 4 (width 32, 2 heads of 16, a synthetic
// vocabulary of 320, dense and mixture layers alternating, 2 of 4 experts
// a token) over 8208 seeded random tokens: positions 8191 on carry the NoPE
// layer's temperature 1 + 0.1·ln 2, and from 8192 on the chunked layers see
// only the new chunk. Its golden keeps the top 2 of each distribution.
func LongSpecs() []Spec {
	return []Spec{
		{Name: "llama4-long-f32", Arch: "llama4", DType: tensor.F32, Vocab: "none", VocabSize: 320, Embed: 32, Layers: 4,
			FFN: 48, Heads: 2, KVHeads: 1, HeadDim: 16, Context: 16384, Seed: 43, PromptIDs: randomPrompt(8208, 320, 43),
			RopeFreqs: true, Experts: 4, ExpertsUsed: 2, TopK: 2, Llama4: &Llama4Spec{ExpertFFN: 16, MoEPeriod: 2}},
	}
}

// randomPrompt returns n seeded random ids among the ordinary pieces of a
// synthetic vocabulary of size v (past <unk>, <s>, </s> and the bytes).
func randomPrompt(n, v int, seed uint64) []int32 {
	r := seedFor(seed, "prompt")
	ids := make([]int32, n)
	for i := range ids {
		ids[i] = int32(259 + r.next()%uint64(v-259))
	}
	return ids
}

// llama4Metadata writes the experts' counts and width and the mixture
// period; the chunks, the NoPE layers and the temperature have no keys.
func llama4Metadata(w *gguf.Writer, s Spec) {
	a := s.Arch
	w.SetUint32(a+".expert_count", uint32(s.Experts))
	w.SetUint32(a+".expert_used_count", uint32(s.ExpertsUsed))
	w.SetUint32(a+".expert_feed_forward_length", uint32(s.Llama4.ExpertFFN))
	w.SetUint32(a+".interleave_moe_layer_step", uint32(s.Llama4.MoEPeriod))
}

// llama4Layer writes layer l's tensors under p, with add and vec as build
// defines them: the two norms, q, k, v and the output projection without
// biases, and either the dense SwiGLU of width Spec.FFN or the mixture: the
// router ffn_gate_inp [E, D] (F32, as llama.cpp's quantizer leaves it), the
// experts' stacks and the shared expert, all of width ExpertFFN.
func llama4Layer(s Spec, l int, p string, hd int,
	add func(name string, dt tensor.DType, scale, mean float32, shape ...int) error,
	vec func(name string, n int, mean, scale float32) error) []error {
	D, F, FE, E := s.Embed, s.FFN, s.Llama4.ExpertFFN, s.Experts
	q, kv := s.Heads*hd, s.KVHeads*hd
	scale := func(in int) float32 { return 1.5 / float32(math.Sqrt(float64(in))) }
	mat := func(name string, shape ...int) error {
		return add(name, weightType(s.DType, name), scale(shape[len(shape)-1]), 0, shape...)
	}
	errs := []error{
		vec(p+"attn_norm.weight", D, 1, 0.2), vec(p+"ffn_norm.weight", D, 1, 0.2),
		mat(p+"attn_q.weight", q, D), mat(p+"attn_k.weight", kv, D), mat(p+"attn_v.weight", kv, D),
		mat(p+"attn_output.weight", D, q),
	}
	if m := s.Llama4.MoEPeriod; m == 0 || (l+1)%m != 0 {
		return append(errs, mat(p+"ffn_gate.weight", F, D), mat(p+"ffn_up.weight", F, D), mat(p+"ffn_down.weight", D, F))
	}
	return append(errs,
		add(p+"ffn_gate_inp.weight", tensor.F32, scale(D), 0, E, D),
		mat(p+"ffn_gate_exps.weight", E, FE, D), mat(p+"ffn_up_exps.weight", E, FE, D), mat(p+"ffn_down_exps.weight", E, D, FE),
		mat(p+"ffn_gate_shexp.weight", FE, D), mat(p+"ffn_up_shexp.weight", FE, D), mat(p+"ffn_down_shexp.weight", D, FE))
}
