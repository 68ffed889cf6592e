// The GLM-4 test models: glm4's sandwich norms and fused SwiGLU, glm4moe's
// sigmoid-routed experts with a choice bias and shared experts.

package testmodel

import (
	"math"

	"github.com/toyml/toy/toy/gguf"
	"github.com/toyml/toy/toy/tensor"
)

// Glm4Spec is what a glm4moe test model adds to Spec (whose FFN is then the
// leading dense layers' width, Layers the block count, prediction layers
// included, Experts and ExpertsUsed the routed experts).
type Glm4Spec struct {
	DenseLayers   int     `json:"dense_layers"`
	ExpertFFN     int     `json:"expert_ffn"`
	SharedExperts int     `json:"shared_experts"`
	WeightsScale  float32 `json:"weights_scale,omitempty"` // 0: the key left out
	WeightsNorm   bool    `json:"weights_norm"`
	BiasScale     float32 `json:"bias_scale"` // exp_probs_b drawn from ±BiasScale
	QKNorm        bool    `json:"qk_norm,omitempty"`
	// MTPLayers: the last MTPLayers blocks are multi-token-prediction
	// layers (nextn_predict_layers), with their nextn.* tensors; neither
	// llama.cpp nor toy runs them for next-token logits.
	MTPLayers int `json:"mtp_layers,omitempty"`
}

// glm4Specs are the GLM-4 gate models, all with query, key and value
// biases and RoPE over half of each head:
//   - glm4-f32, GLM-4-0414's shape: three layers of sandwich norms, heads
//     of D/H = 16 turned in adjacent pairs over 8 features, 2 key/value
//     heads, the SwiGLU's gate and up in one ffn_up of 2F rows;
//   - glm4moe-f32, GLM-4.5's router: heads of 32 (not D/H, as GLM-4.5's
//     128 against 5120/96) turned in NeoX pairs over 16, one dense layer
//     then three of 8 experts, 2 a token, chosen by sigmoid + a bias of up
//     to ±0.3 (enough to change the choice), weights divided by their sum
//     and × 2.5, one shared expert; and a fifth, multi-token-prediction
//     block that must not run;
//   - glm4moe-q8_0, GLM-4.5 355B's per-head query/key norms: one dense
//     layer then two of 8 experts, 2 a token, 2 shared experts (one SwiGLU
//     of 64), weights × 1 as GLM-4.5-Air's, the head tied to the embedding.
func glm4Specs() []Spec {
	return []Spec{
		{Name: "glm4-f32", Arch: "glm4", DType: tensor.F32, Vocab: "gpt2", Embed: 64, Layers: 3, FFN: 96, Heads: 4, KVHeads: 2,
			RopeDim: 8, Context: 256, Seed: 71, PromptIDs: gpt2Prompt},
		{Name: "glm4moe-f32", Arch: "glm4moe", DType: tensor.F32, Vocab: "gpt2", Embed: 64, Layers: 5, FFN: 128, Heads: 4,
			KVHeads: 2, HeadDim: 32, RopeDim: 16, Context: 256, Seed: 72, PromptIDs: gpt2Prompt, Experts: 8, ExpertsUsed: 2,
			Glm4: &Glm4Spec{DenseLayers: 1, ExpertFFN: 32, SharedExperts: 1, WeightsScale: 2.5, WeightsNorm: true, BiasScale: 0.3,
				MTPLayers: 1}},
		{Name: "glm4moe-q8_0", Arch: "glm4moe", DType: tensor.Q8_0, Vocab: "gpt2", Embed: 64, Layers: 3, FFN: 128, Heads: 4,
			KVHeads: 2, HeadDim: 32, RopeDim: 16, Context: 256, Tied: true, Seed: 73, PromptIDs: gpt2Prompt, Experts: 8,
			ExpertsUsed: 2, Glm4: &Glm4Spec{DenseLayers: 1, ExpertFFN: 32, SharedExperts: 2, WeightsScale: 1, WeightsNorm: true,
				BiasScale: 0.3, QKNorm: true}},
	}
}

// glm4Metadata writes the rotated width and, for glm4moe, the keys
// llama.cpp's converter writes for GLM-4.5 (sigmoid gating always).
func glm4Metadata(w *gguf.Writer, s Spec) {
	a := s.Arch
	w.SetUint32(a+".rope.dimension_count", uint32(s.RopeDim))
	g := s.Glm4
	if g == nil {
		return
	}
	w.SetUint32(a+".expert_count", uint32(s.Experts))
	w.SetUint32(a+".expert_used_count", uint32(s.ExpertsUsed))
	w.SetUint32(a+".expert_feed_forward_length", uint32(g.ExpertFFN))
	w.SetUint32(a+".expert_shared_count", uint32(g.SharedExperts))
	w.SetUint32(a+".leading_dense_block_count", uint32(g.DenseLayers))
	w.SetUint32(a+".expert_gating_func", 2)
	if g.WeightsScale != 0 {
		w.SetFloat32(a+".expert_weights_scale", g.WeightsScale)
	}
	w.SetBool(a+".expert_weights_norm", g.WeightsNorm)
	if g.MTPLayers > 0 {
		w.SetUint32(a+".nextn_predict_layers", uint32(g.MTPLayers))
	}
}

// glm4Layer writes layer l's tensors under p, with add and vec as build
// defines them: the biased attention (and glm4moe's optional per-head q/k
// norms); in glm4 the sandwich norms and one ffn_up [2F, D] holding the
// gate's rows then the up projection's; in glm4moe the FFN's norm (named
// post_attention_norm) and a dense SwiGLU or the experts: router and
// choice bias F32, stacks in the model's type, shared experts as one
// SwiGLU; a prediction layer's nextn.* tensors besides.
func glm4Layer(s Spec, l int, p string, hd int,
	add func(name string, dt tensor.DType, scale, mean float32, shape ...int) error,
	vec func(name string, n int, mean, scale float32) error) []error {
	D, F, q, kv := s.Embed, s.FFN, s.Heads*hd, s.KVHeads*hd
	scale := func(in int) float32 { return 1.5 / float32(math.Sqrt(float64(in))) }
	mat := func(name string, shape ...int) error {
		return add(name, weightType(s.DType, name), scale(shape[len(shape)-1]), 0, shape...)
	}
	errs := []error{
		vec(p+"attn_norm.weight", D, 1, 0.2),
		mat(p+"attn_q.weight", q, D), vec(p+"attn_q.bias", q, 0, 0.1),
		mat(p+"attn_k.weight", kv, D), vec(p+"attn_k.bias", kv, 0, 0.1),
		mat(p+"attn_v.weight", kv, D), vec(p+"attn_v.bias", kv, 0, 0.1),
		mat(p+"attn_output.weight", D, q),
		vec(p+"post_attention_norm.weight", D, 1, 0.2),
	}
	g := s.Glm4
	if g == nil { // glm4
		return append(errs, vec(p+"ffn_norm.weight", D, 1, 0.2), mat(p+"ffn_up.weight", 2*F, D), mat(p+"ffn_down.weight", D, F),
			vec(p+"post_ffw_norm.weight", D, 1, 0.2))
	}
	if g.QKNorm {
		errs = append(errs, vec(p+"attn_q_norm.weight", hd, 1, 0.3), vec(p+"attn_k_norm.weight", hd, 1, 0.3))
	}
	if l < g.DenseLayers {
		return append(errs, mat(p+"ffn_gate.weight", F, D), mat(p+"ffn_up.weight", F, D), mat(p+"ffn_down.weight", D, F))
	}
	E, Fe, Fs := s.Experts, g.ExpertFFN, g.SharedExperts*g.ExpertFFN
	errs = append(errs,
		add(p+"ffn_gate_inp.weight", tensor.F32, scale(D), 0, E, D), add(p+"exp_probs_b.bias", tensor.F32, g.BiasScale, 0, E),
		mat(p+"ffn_gate_exps.weight", E, Fe, D), mat(p+"ffn_up_exps.weight", E, Fe, D), mat(p+"ffn_down_exps.weight", E, D, Fe))
	if Fs > 0 {
		errs = append(errs, mat(p+"ffn_gate_shexp.weight", Fs, D), mat(p+"ffn_up_shexp.weight", Fs, D), mat(p+"ffn_down_shexp.weight", D, Fs))
	}
	if l >= s.Layers-g.MTPLayers {
		errs = append(errs, mat(p+"nextn.eh_proj.weight", D, 2*D), vec(p+"nextn.enorm.weight", D, 1, 0.2),
			vec(p+"nextn.hnorm.weight", D, 1, 0.2), vec(p+"nextn.shared_head_norm.weight", D, 0, 1.5))
	}
	return errs
}
