// The OLMoE test models: Llama-like attention with whole-projection Q/K
// norms, and a mixture of SwiGLU experts stored as 3-D tensors.

package testmodel

import (
	"fmt"
	"math"

	"github.com/toyml/toy/toy/gguf"
	"github.com/toyml/toy/toy/tensor"
)

// olmoeSpecs are the OLMoE gate models, F32 and Q8_0: 8 experts of width 32,
// 2 run per token. llama.cpp's OLMoE needs H = KV (its attn_k_norm is
// [n_embd]) and an untied output head.
func olmoeSpecs() []Spec {
	var out []Spec
	for _, dt := range []tensor.DType{tensor.F32, tensor.Q8_0} {
		out = append(out, Spec{Name: "olmoe-" + map[tensor.DType]string{tensor.F32: "f32", tensor.Q8_0: "q8_0"}[dt], Arch: "olmoe",
			DType: dt, Vocab: "llama2", Embed: 64, Layers: 2, FFN: 32, Heads: 4, KVHeads: 4, Context: 256, Tied: false,
			Seed: 9, PromptIDs: llamaPrompt, Experts: 8, ExpertsUsed: 2})
	}
	return out
}

// olmoeMetadata writes the expert counts.
func olmoeMetadata(w *gguf.Writer, s Spec) {
	w.SetUint32("olmoe.expert_count", uint32(s.Experts))
	w.SetUint32("olmoe.expert_used_count", uint32(s.ExpertsUsed))
}

// olmoeLayer writes layer p's tensors, with add and vec as build defines
// them: attention as Llama's plus norms over the whole q [H·Dh] and k
// [KV·Dh]; the router ffn_gate_inp [E, D], always F32 (llama.cpp's
// quantizer leaves it so); the experts' stacks [E, F, D], [E, F, D], [E, D, F]
// in the model's type, each expert's matrix drawn like a dense one's.
func olmoeLayer(s Spec, p string, hd int,
	add func(name string, dt tensor.DType, scale, mean float32, shape ...int) error,
	vec func(name string, n int, mean, scale float32) error) []error {
	D, E := s.Embed, s.Experts
	q, kv := s.Heads*hd, s.KVHeads*hd
	scale := func(in int) float32 { return 1.5 / float32(math.Sqrt(float64(in))) }
	mat := func(name string, shape ...int) error {
		return add(name, weightType(s.DType, name), scale(shape[len(shape)-1]), 0, shape...)
	}
	if E < s.ExpertsUsed || s.ExpertsUsed < 1 {
		return []error{fmt.Errorf("olmoe: %d experts used of %d", s.ExpertsUsed, E)}
	}
	return append([]error{
		mat(p+"attn_q.weight", q, D), mat(p+"attn_k.weight", kv, D), mat(p+"attn_v.weight", kv, D),
		vec(p+"attn_q_norm.weight", q, 1, 0.3), vec(p+"attn_k_norm.weight", kv, 1, 0.3),
		mat(p+"attn_output.weight", D, q),
	}, moeLayer(s, p, add)...)
}

// moeLayer writes layer p's mixture of experts: the router ffn_gate_inp
// [E, D], always F32 (llama.cpp's quantizer leaves it so); the experts'
// stacks [E, F, D], [E, F, D], [E, D, F] in the model's type, each expert's
// matrix drawn like a dense one's.
func moeLayer(s Spec, p string, add func(name string, dt tensor.DType, scale, mean float32, shape ...int) error) []error {
	D, F, E := s.Embed, s.FFN, s.Experts
	scale := func(in int) float32 { return 1.5 / float32(math.Sqrt(float64(in))) }
	mat := func(name string, shape ...int) error {
		return add(name, weightType(s.DType, name), scale(shape[len(shape)-1]), 0, shape...)
	}
	errs := []error{
		add(p+"ffn_gate_inp.weight", tensor.F32, scale(D), 0, E, D),
		mat(p+"ffn_gate_exps.weight", E, F, D), mat(p+"ffn_up_exps.weight", E, F, D), mat(p+"ffn_down_exps.weight", E, D, F),
	}
	if S := s.SharedFFN; S > 0 { // Qwen2-MoE's shared expert and its gate
		errs = append(errs, add(p+"ffn_gate_inp_shexp.weight", tensor.F32, scale(D), 0, D),
			mat(p+"ffn_gate_shexp.weight", S, D), mat(p+"ffn_up_shexp.weight", S, D), mat(p+"ffn_down_shexp.weight", D, S))
	}
	return errs
}

// moeSpecs are the other mixtures of experts: Mixtral's ("llama" files
// with expert tensors; 4 experts, 2 a token) and Qwen3-MoE's (8 experts, 3
// a token, each with per-head q/k norms), both renormalising the chosen
// experts' weights, and Qwen2-MoE's (8 experts, 2 a token, not
// renormalised, and a shared expert gated by a sigmoid).
func moeSpecs() []Spec {
	return []Spec{
		{Name: "mixtral-f32", Arch: "llama", DType: tensor.F32, Vocab: "llama2", Embed: 64, Layers: 2, FFN: 48,
			Heads: 4, KVHeads: 2, Context: 256, Tied: false, Seed: 14, PromptIDs: llamaPrompt, Experts: 4, ExpertsUsed: 2},
		{Name: "qwen2moe-f32", Arch: "qwen2moe", DType: tensor.F32, Vocab: "gpt2", Embed: 64, Layers: 2, FFN: 32,
			Heads: 4, KVHeads: 2, Context: 256, Tied: false, Seed: 16, PromptIDs: gpt2Prompt, Experts: 8, ExpertsUsed: 2,
			SharedFFN: 48},
		{Name: "qwen3moe-f32", Arch: "qwen3moe", DType: tensor.F32, Vocab: "gpt2", Embed: 64, Layers: 2, FFN: 32,
			Heads: 4, KVHeads: 2, HeadDim: 32, Context: 256, Tied: false, Seed: 15, PromptIDs: gpt2Prompt, Experts: 8, ExpertsUsed: 3},
	}
}

// moeMetadata writes the expert counts and width as llama.cpp reads them.
func moeMetadata(w *gguf.Writer, s Spec) {
	w.SetUint32(s.Arch+".expert_count", uint32(s.Experts))
	w.SetUint32(s.Arch+".expert_used_count", uint32(s.ExpertsUsed))
	w.SetUint32(s.Arch+".expert_feed_forward_length", uint32(s.FFN))
	if s.SharedFFN > 0 {
		w.SetUint32(s.Arch+".expert_shared_feed_forward_length", uint32(s.SharedFFN))
	}
}
