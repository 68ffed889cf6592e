// Test models of Command R and Command R7B: parallel blocks on one
// LayerNorm without a bias.

package testmodel

import (
	"github.com/toyml/toy/toy/gguf"
	"github.com/toyml/toy/toy/tensor"
)

// cohereSpecs returns a Command R (logits × 1/16, as Command R's) in F32
// and Q8_0, and a Command R7B: four layers, 0–2 windowed (5 positions) with
// RoPE, 3 global without positions.
func cohereSpecs() []Spec {
	var out []Spec
	for _, dt := range []tensor.DType{tensor.F32, tensor.Q8_0} {
		out = append(out, Spec{Name: "command-r-" + map[tensor.DType]string{tensor.F32: "f32", tensor.Q8_0: "q8_0"}[dt],
			Arch: "command-r", DType: dt, Vocab: "llama2", Embed: 64, Layers: 2, FFN: 128, Heads: 4, KVHeads: 2,
			Context: 256, Tied: true, Seed: 28, PromptIDs: llamaPrompt})
	}
	return append(out, Spec{Name: "cohere2-f32", Arch: "cohere2", DType: tensor.F32, Vocab: "llama2", Embed: 64, Layers: 4,
		FFN: 128, Heads: 4, KVHeads: 2, Context: 256, Tied: true, Seed: 29, PromptIDs: llamaPrompt, Window: 5})
}

// cohereMetadata writes the logit scale, and Command R7B's window.
func cohereMetadata(w *gguf.Writer, s Spec) {
	if s.Arch == "cohere2" {
		w.SetFloat32(s.Arch+".logit_scale", 0.25)
		w.SetUint32(s.Arch+".attention.sliding_window", uint32(s.Window))
		w.SetUint32(s.Arch+".attention.sliding_window_pattern", 4)
		return
	}
	w.SetFloat32(s.Arch+".logit_scale", 0.0625)
}

// cohereLayer writes layer p: the LayerNorm's weight (no bias), the
// attention projections and a SwiGLU, none with biases.
func cohereLayer(s Spec, p string, hd int, mat func(name string, out, in int) error,
	vec func(name string, n int, mean, scale float32) error) []error {
	D, F, kv := s.Embed, s.FFN, s.KVHeads*hd
	return []error{
		vec(p+"attn_norm.weight", D, 1, 0.2),
		mat(p+"attn_q.weight", D, D), mat(p+"attn_k.weight", kv, D), mat(p+"attn_v.weight", kv, D),
		mat(p+"attn_output.weight", D, D),
		mat(p+"ffn_gate.weight", F, D), mat(p+"ffn_up.weight", F, D), mat(p+"ffn_down.weight", D, F),
	}
}
