// Test models of Command R, Command R+ and Command R7B: parallel blocks on
// one LayerNorm without a bias.

package testmodel

import (
	"github.com/toyml/toy/toy/gguf"
	"github.com/toyml/toy/toy/tensor"
)

// cohereSpecs returns a Command R (logits × 1/16, as Command R's) in F32
// and Q8_0; a Command R+ whose query and key heads are LayerNormed, 64
// layers deep since llama.cpp loads attn_q_norm and attn_k_norm only from
// that depth (and requires them there); and a Command R7B: four layers, 0–2
// windowed (5 positions) with RoPE, 3 global without positions.
//
// Command R+ is F32 only: 64 random layers amplify any one Q8_0 activation
// that rounds to the other side of a half step in toy and llama.cpp (flipping
// one in toy moves later log-probs by ~1e-2), and a Q8_0 copy sees such
// activations within 1.2e-5 of a half step.
func cohereSpecs() []Spec {
	var out []Spec
	for _, dt := range []tensor.DType{tensor.F32, tensor.Q8_0} {
		out = append(out, Spec{Name: "command-r-" + map[tensor.DType]string{tensor.F32: "f32", tensor.Q8_0: "q8_0"}[dt],
			Arch: "command-r", DType: dt, Vocab: "llama2", Embed: 64, Layers: 2, FFN: 128, Heads: 4, KVHeads: 2,
			Context: 256, Tied: true, Seed: 28, PromptIDs: llamaPrompt})
	}
	out = append(out, Spec{Name: "command-r-plus-f32", Arch: "command-r", DType: tensor.F32, Vocab: "llama2", Embed: 64,
		Layers: commandRPlusLayers, FFN: 64, Heads: 4, KVHeads: 2, Context: 256, Tied: true, Seed: 41, PromptIDs: llamaPrompt})
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

// commandRPlusLayers is the depth from which llama.cpp's command-r loads
// the per-head query and key norms.
const commandRPlusLayers = 64

// cohereLayer writes layer p: the LayerNorm's weight (no bias), the
// attention projections and a SwiGLU, none with biases; and in a command-r
// of commandRPlusLayers or more, Command R+'s per-head query and key
// LayerNorm weights [H, Dh] and [KV, Dh], F32 as llama.cpp's quantizer
// leaves norms.
func cohereLayer(s Spec, p string, hd int, mat func(name string, out, in int) error,
	vec func(name string, n int, mean, scale float32) error,
	add func(name string, dt tensor.DType, scale, mean float32, shape ...int) error) []error {
	D, F, kv := s.Embed, s.FFN, s.KVHeads*hd
	errs := []error{
		vec(p+"attn_norm.weight", D, 1, 0.2),
		mat(p+"attn_q.weight", D, D), mat(p+"attn_k.weight", kv, D), mat(p+"attn_v.weight", kv, D),
		mat(p+"attn_output.weight", D, D),
		mat(p+"ffn_gate.weight", F, D), mat(p+"ffn_up.weight", F, D), mat(p+"ffn_down.weight", D, F),
	}
	if s.Arch == "command-r" && s.Layers >= commandRPlusLayers {
		errs = append(errs, add(p+"attn_q_norm.weight", tensor.F32, 0.3, 1, s.Heads, hd),
			add(p+"attn_k_norm.weight", tensor.F32, 0.3, 1, s.KVHeads, hd))
	}
	return errs
}
