// Test models of OLMo 2 and Olmo 3: norms after each sublayer.

package testmodel

import (
	"github.com/toyml/toy/toy/gguf"
	"github.com/toyml/toy/toy/tensor"
)

// olmo2Specs returns an OLMo 2 (grouped-query attention, F32 and Q8_0) and
// an Olmo 3: four layers, 0–2 local (window 5, RoPE unscaled), 3 global
// (YaRN by 4 over 16 positions), so that the 48 positions of a gate run see
// every case.
func olmo2Specs() []Spec {
	var out []Spec
	for _, dt := range []tensor.DType{tensor.F32, tensor.Q8_0} {
		out = append(out, Spec{Name: "olmo2-" + map[tensor.DType]string{tensor.F32: "f32", tensor.Q8_0: "q8_0"}[dt],
			Arch: "olmo2", DType: dt, Vocab: "llama2", Embed: 64, Layers: 2, FFN: 128, Heads: 4, KVHeads: 2,
			Context: 256, Seed: 24, PromptIDs: llamaPrompt})
	}
	return append(out, Spec{Name: "olmo3-f32", Arch: "olmo2", DType: tensor.F32, Vocab: "llama2", Embed: 64, Layers: 4,
		FFN: 128, Heads: 4, KVHeads: 2, Context: 256, Seed: 25, PromptIDs: llamaPrompt, Window: 5,
		RopeScaling: "yarn", RopeScaleFactor: 4, RopeOrigContext: 16})
}

// olmo2Metadata writes Olmo 3's sliding-window keys (OLMo 2 has none).
func olmo2Metadata(w *gguf.Writer, s Spec) {
	if s.Window > 0 {
		w.SetUint32(s.Arch+".attention.sliding_window", uint32(s.Window))
		w.SetUint32(s.Arch+".attention.sliding_window_pattern", 4)
	}
}

// olmo2Layer writes layer p: the projections, q and k norms over the whole
// projection ([D] and [KV·Dh]), a SwiGLU, and the norms after the
// attention and the feed-forward layer (none before them).
func olmo2Layer(s Spec, p string, hd int, mat func(name string, out, in int) error,
	vec func(name string, n int, mean, scale float32) error) []error {
	D, F, kv := s.Embed, s.FFN, s.KVHeads*hd
	return []error{
		mat(p+"attn_q.weight", D, D), mat(p+"attn_k.weight", kv, D), mat(p+"attn_v.weight", kv, D),
		vec(p+"attn_q_norm.weight", D, 1, 0.3), vec(p+"attn_k_norm.weight", kv, 1, 0.3),
		mat(p+"attn_output.weight", D, D), vec(p+"post_attention_norm.weight", D, 1, 0.2),
		mat(p+"ffn_gate.weight", F, D), mat(p+"ffn_up.weight", F, D), mat(p+"ffn_down.weight", D, F),
		vec(p+"post_ffw_norm.weight", D, 1, 0.2),
	}
}
