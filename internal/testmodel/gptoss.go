// The gpt-oss test models: biased attention with sinks, alternating
// sliding windows, YaRN, and a mixture of clamped-SwiGLU experts with
// biases.

package testmodel

import (
	"math"

	"github.com/toyml/toy/toy/tensor"
)

// gptossSpecs are the gpt-oss gate models, F32, Q8_0 and MXFP4 (llama.cpp's
// MXFP4_MOE mix: the experts MXFP4, the rest Q8_0, as OpenAI ships them): 3 layers (the
// even ones windowed to 5 positions, so the 16-token prompt outgrows the
// window), heads of width 32 (H·Dh = 128 ≠ D = 64), YaRN ×4 over 64
// positions, 8 experts of width 32, 3 a token.
func gptossSpecs() []Spec {
	var out []Spec
	for _, dt := range []tensor.DType{tensor.F32, tensor.Q8_0, tensor.MXFP4} {
		out = append(out, Spec{Name: "gpt-oss-" + map[tensor.DType]string{tensor.F32: "f32", tensor.Q8_0: "q8_0", tensor.MXFP4: "mxfp4"}[dt], Arch: "gpt-oss",
			DType: dt, Vocab: "gpt2", Embed: 64, Layers: 3, FFN: 32, Heads: 4, KVHeads: 2, HeadDim: 32, Context: 256,
			Seed: 31, PromptIDs: gpt2Prompt, Experts: 8, ExpertsUsed: 3, Window: 5,
			RopeScaling: "yarn", RopeScaleFactor: 4, RopeOrigContext: 64})
	}
	return out
}

// gptossLayer writes layer p's tensors, with add and vec as build defines
// them: the two norms (the second stored as post_attention_norm), q, k, v
// and the output projection with biases, a sink logit per head U(±2), the
// router with a bias, and the experts' stacks with biases [E, F] and
// [E, D]. The gate and up biases are U(±8), so that the clamps at ±7 bite.
func gptossLayer(s Spec, p string, hd int,
	add func(name string, dt tensor.DType, scale, mean float32, shape ...int) error,
	vec func(name string, n int, mean, scale float32) error) []error {
	D, F, E := s.Embed, s.FFN, s.Experts
	q, kv := s.Heads*hd, s.KVHeads*hd
	scale := func(in int) float32 { return 1.5 / float32(math.Sqrt(float64(in))) }
	mat := func(name string, shape ...int) error {
		return add(name, weightType(s.DType, name), scale(shape[len(shape)-1]), 0, shape...)
	}
	return []error{
		vec(p+"attn_norm.weight", D, 1, 0.2), vec(p+"post_attention_norm.weight", D, 1, 0.2),
		mat(p+"attn_q.weight", q, D), vec(p+"attn_q.bias", q, 0, 0.1),
		mat(p+"attn_k.weight", kv, D), vec(p+"attn_k.bias", kv, 0, 0.1),
		mat(p+"attn_v.weight", kv, D), vec(p+"attn_v.bias", kv, 0, 0.1),
		mat(p+"attn_output.weight", D, q), vec(p+"attn_output.bias", D, 0, 0.1),
		vec(p+"attn_sinks.weight", s.Heads, 0, 2),
		add(p+"ffn_gate_inp.weight", tensor.F32, scale(D), 0, E, D), vec(p+"ffn_gate_inp.bias", E, 0, 0.5),
		mat(p+"ffn_gate_exps.weight", E, F, D), add(p+"ffn_gate_exps.bias", tensor.F32, 8, 0, E, F),
		mat(p+"ffn_up_exps.weight", E, F, D), add(p+"ffn_up_exps.bias", tensor.F32, 8, 0, E, F),
		mat(p+"ffn_down_exps.weight", E, D, F), add(p+"ffn_down_exps.bias", tensor.F32, 0.1, 0, E, D),
	}
}
