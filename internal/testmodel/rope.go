// Test models with RoPE scaling by metadata: linear and YaRN.

package testmodel

import (
	"github.com/toyml/toy/toy/gguf"
	"github.com/toyml/toy/toy/tensor"
)

// ropeScalingSpecs returns a llama with linear scaling (factor 4) and a
// qwen2 with YaRN as Qwen2.5's long-context files have it (factor 4 over an
// original context of 4096). With head width 16 and base 10⁶ the YaRN ramp
// runs from pair 1 to pair 4 of 8, so the gate sees kept, interpolated and
// blended pairs.
func ropeScalingSpecs() []Spec {
	return []Spec{
		{Name: "llama-linear-f32", Arch: "llama", DType: tensor.F32, Vocab: "llama2", Embed: 64, Layers: 2, FFN: 128,
			Heads: 4, KVHeads: 2, Context: 1024, Tied: false, Seed: 10, PromptIDs: llamaPrompt,
			RopeScaling: "linear", RopeScaleFactor: 4},
		{Name: "qwen2-yarn-f32", Arch: "qwen2", DType: tensor.F32, Vocab: "gpt2", Embed: 64, Layers: 2, FFN: 128,
			Heads: 4, KVHeads: 2, Context: 16384, Tied: true, Seed: 11, PromptIDs: gpt2Prompt,
			RopeScaling: "yarn", RopeScaleFactor: 4, RopeOrigContext: 4096},
	}
}

// ropeScalingMetadata writes the keys llama.cpp reads for RoPE scaling.
func ropeScalingMetadata(w *gguf.Writer, s Spec) {
	a := s.Arch
	w.SetString(a+".rope.scaling.type", s.RopeScaling)
	w.SetFloat32(a+".rope.scaling.factor", s.RopeScaleFactor)
	if s.RopeOrigContext != 0 {
		w.SetUint32(a+".rope.scaling.original_context_length", uint32(s.RopeOrigContext))
	}
}
