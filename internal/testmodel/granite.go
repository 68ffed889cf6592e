// Test models of IBM's Granite (Llama with four multipliers) and SmolLM3
// (Llama with no positions in every fourth layer).

package testmodel

import (
	"github.com/toyml/toy/toy/gguf"
	"github.com/toyml/toy/toy/tensor"
)

// graniteSpecs returns a dense Granite (as granite-3.x-2b/8b, tied head)
// and a Granite-MoE (as granite-3.x-1b-a400m: 4 experts, 2 a token,
// renormalised).
func graniteSpecs() []Spec {
	return []Spec{
		{Name: "granite-f32", Arch: "granite", DType: tensor.F32, Vocab: "llama2", Embed: 64, Layers: 2, FFN: 128,
			Heads: 4, KVHeads: 2, Context: 256, Tied: true, Seed: 21, PromptIDs: llamaPrompt},
		{Name: "granitemoe-f32", Arch: "granitemoe", DType: tensor.F32, Vocab: "llama2", Embed: 64, Layers: 2, FFN: 48,
			Heads: 4, KVHeads: 2, Context: 256, Tied: true, Seed: 22, PromptIDs: llamaPrompt, Experts: 4, ExpertsUsed: 2},
	}
}

// smollm3Specs returns a SmolLM3: four layers, the fourth without RoPE.
func smollm3Specs() []Spec {
	return []Spec{{Name: "smollm3-f32", Arch: "smollm3", DType: tensor.F32, Vocab: "llama2", Embed: 64, Layers: 4, FFN: 128,
		Heads: 4, KVHeads: 2, Context: 256, Tied: true, Seed: 26, PromptIDs: llamaPrompt}}
}

// exaoneSpecs returns an EXAONE 3.5: llama with half-split RoPE pairs.
func exaoneSpecs() []Spec {
	return []Spec{{Name: "exaone-f32", Arch: "exaone", DType: tensor.F32, Vocab: "llama2", Embed: 64, Layers: 2, FFN: 128,
		Heads: 4, KVHeads: 2, Context: 256, Tied: false, Seed: 27, PromptIDs: llamaPrompt}}
}

// mistral3Specs returns two Ministral 3s, each with YaRN by 4, β 16 and 4,
// a log multiplier of 1 (which cancels YaRN's magnitude) and Llama 4's
// query temperature 0.5, whose step is the original context: over 4096
// positions (head width 16, base 10⁶: the ramp spans pairs 1–4, the betas
// matter, the temperature never starts), and over 8 (the temperature starts
// at position 8).
func mistral3Specs() []Spec {
	var out []Spec
	for _, c := range []struct {
		name string
		orig int
		seed uint64
	}{{"mistral3-f32", 4096, 30}, {"mistral3-temp-f32", 8, 31}} {
		out = append(out, Spec{Name: c.name, Arch: "mistral3", DType: tensor.F32, Vocab: "llama2", Embed: 64, Layers: 2,
			FFN: 128, Heads: 4, KVHeads: 2, Context: 16384, Tied: false, Seed: c.seed, PromptIDs: llamaPrompt,
			RopeScaling: "yarn", RopeScaleFactor: 4, RopeOrigContext: c.orig})
	}
	return out
}

// mistral3Metadata writes Ministral 3's YaRN details and temperature.
func mistral3Metadata(w *gguf.Writer, s Spec) {
	w.SetFloat32(s.Arch+".rope.scaling.yarn_beta_fast", 16)
	w.SetFloat32(s.Arch+".rope.scaling.yarn_beta_slow", 4)
	w.SetFloat32(s.Arch+".rope.scaling.yarn_log_multiplier", 1)
	w.SetFloat32(s.Arch+".attention.temperature_scale", 0.5)
}

// graniteMetadata writes Granite's multipliers, each far from the value
// that would hide its absence: embeddings × 12 and logits ÷ 8 (as Granite
// 3.1 2B), residual branches × 0.22, attention scores × 0.125 where
// 1/√16 = 0.25 would be the default.
func graniteMetadata(w *gguf.Writer, s Spec) {
	a := s.Arch
	w.SetFloat32(a+".embedding_scale", 12)
	w.SetFloat32(a+".residual_scale", 0.22)
	w.SetFloat32(a+".attention.scale", 0.125)
	w.SetFloat32(a+".logit_scale", 8)
}
