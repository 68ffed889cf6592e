// Test models of StarCoder2: GPT-2's blocks around Llama's attention.

package testmodel

import (
	"github.com/toyml/toy/toy/tensor"
)

// starcoder2Specs returns a StarCoder2 with grouped-query attention (4
// heads, 2 KV heads), in F32 and Q8_0, with the GPT-2 vocabulary and the
// StarCoder pre-tokenizer (digits one by one).
func starcoder2Specs() []Spec {
	var out []Spec
	for _, dt := range []tensor.DType{tensor.F32, tensor.Q8_0} {
		out = append(out, Spec{Name: "starcoder2-" + map[tensor.DType]string{tensor.F32: "f32", tensor.Q8_0: "q8_0"}[dt],
			Arch: "starcoder2", DType: dt, Vocab: "gpt2", Embed: 64, Layers: 2, FFN: 256, Heads: 4, KVHeads: 2,
			Context: 256, Tied: false, Seed: 23, PromptIDs: gpt2Prompt})
	}
	return out
}

// starcoder2Layer writes layer p: LayerNorms with biases, Q, K, V and the
// output projection with biases, and a GELU MLP (up, down) with biases.
func starcoder2Layer(s Spec, p string, hd int, mat func(name string, out, in int) error,
	vec func(name string, n int, mean, scale float32) error) []error {
	D, F, kv := s.Embed, s.FFN, s.KVHeads*hd
	return []error{
		vec(p+"attn_norm.bias", D, 0, 0.1), vec(p+"ffn_norm.bias", D, 0, 0.1),
		mat(p+"attn_q.weight", D, D), vec(p+"attn_q.bias", D, 0, 0.1),
		mat(p+"attn_k.weight", kv, D), vec(p+"attn_k.bias", kv, 0, 0.1),
		mat(p+"attn_v.weight", kv, D), vec(p+"attn_v.bias", kv, 0, 0.1),
		mat(p+"attn_output.weight", D, D), vec(p+"attn_output.bias", D, 0, 0.1),
		mat(p+"ffn_up.weight", F, D), vec(p+"ffn_up.bias", F, 0, 0.1),
		mat(p+"ffn_down.weight", D, F), vec(p+"ffn_down.bias", D, 0, 0.1),
	}
}
