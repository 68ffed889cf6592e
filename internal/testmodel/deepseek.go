// The DeepSeek-V2 test models: multi-head latent attention, a leading
// dense layer, then mixtures of experts with shared experts.

package testmodel

import (
	"fmt"
	"math"

	"github.com/toyml/toy/toy/gguf"
	"github.com/toyml/toy/toy/tensor"
)

// DeepSeekSpec is what a deepseek2 test model adds to Spec (whose FFN is
// then the dense layers' width, Heads the attention heads, Experts and
// ExpertsUsed the routed experts).
type DeepSeekSpec struct {
	QLoRARank  int `json:"q_lora_rank"`  // 0: attn_q straight from x (V2-Lite)
	KVLoRARank int `json:"kv_lora_rank"` // the latent's width R
	NopeDim    int `json:"nope_dim"`     // a query/key head's unrotated features
	RopeDim    int `json:"rope_dim"`     // and its rotated ones
	ValueDim   int `json:"value_dim"`
	// SplitKVB writes attn_k_b and attn_v_b with the *_mla metadata, as
	// llama.cpp's converter does now; otherwise the older attn_kv_b.
	SplitKVB      bool    `json:"split_kv_b"`
	DenseLayers   int     `json:"dense_layers"`
	ExpertFFN     int     `json:"expert_ffn"`
	SharedExperts int     `json:"shared_experts"`
	WeightsScale  float32 `json:"weights_scale,omitempty"`
	WeightsNorm   bool    `json:"weights_norm,omitempty"`
	Gating        uint32  `json:"gating"` // 1 softmax, 2 sigmoid
	Bias          bool    `json:"bias,omitempty"`
	Groups        int     `json:"groups,omitempty"`
	GroupsUsed    int     `json:"groups_used,omitempty"`
	YarnLogMul    float32 `json:"yarn_log_mul,omitempty"`
}

// deepseekSpecs are the deepseek2 gate models, all three layers deep, a
// dense layer then two of 8 experts, with YaRN (factor 4 over 4096
// positions; the ramp runs from pair 2 to pair 6 of the 8 rotated pairs):
//
//   - deepseek2-lite-f32 and -q8_0, DeepSeek-V2-Lite's shape: queries
//     straight from x, the split attn_k_b/attn_v_b of today's converter,
//     value heads narrower than key heads (32 and 48), softmax routing of
//     2 experts as they are, 2 shared experts, mscale_all_dim 0.707;
//   - deepseek2-f32, DeepSeek-V2's: queries through a bottleneck, the
//     older attn_kv_b, value heads wider than key heads (48 and 32), 3
//     experts from the best 2 of 4 groups, weights × 16, 1 shared expert;
//   - deepseek2-v3-f32, DeepSeek-V3's router on V2's attention: sigmoid
//     scores, a choice bias, 3 experts from 2 of 4 groups, weights
//     divided by their sum and × 2.5, mscale_all_dim 1.
//
// The lite models' seed, 36, is one whose greedy paths choose no expert
// the prompt did not (an expert's weights go up to a device on first use,
// and the CUDA gate counts each decode step's uploads exactly) and whose
// Q8_0 activations all lie clear of rounding boundaries (seed 21, say, has
// one 2.9e-5 of a step from a half-step at prompt position 9, entering
// layer 1's attn_output, and llama.cpp rounds it the other way: 0.2 from
// there on, as the tolerance notes of tests/reference describe for Q4_0).
func deepseekSpecs() []Spec {
	lite := func(name string, dt tensor.DType) Spec {
		return Spec{Name: name, Arch: "deepseek2", DType: dt, Vocab: "llama2", Embed: 64, Layers: 3, FFN: 128,
			Heads: 4, KVHeads: 4, Context: 16384, Seed: 36, PromptIDs: llamaPrompt, Experts: 8, ExpertsUsed: 2,
			RopeScaling: "yarn", RopeScaleFactor: 4, RopeOrigContext: 4096,
			DeepSeek: &DeepSeekSpec{KVLoRARank: 32, NopeDim: 32, RopeDim: 16, ValueDim: 32, SplitKVB: true, DenseLayers: 1,
				ExpertFFN: 32, SharedExperts: 2, WeightsScale: 1, Gating: 1, Groups: 1, GroupsUsed: 1, YarnLogMul: 0.0707}}
	}
	return []Spec{
		lite("deepseek2-lite-f32", tensor.F32),
		lite("deepseek2-lite-q8_0", tensor.Q8_0),
		{Name: "deepseek2-f32", Arch: "deepseek2", DType: tensor.F32, Vocab: "llama2", Embed: 64, Layers: 3, FFN: 128,
			Heads: 4, KVHeads: 4, Context: 16384, Seed: 18, PromptIDs: llamaPrompt, Experts: 8, ExpertsUsed: 3,
			RopeScaling: "yarn", RopeScaleFactor: 4, RopeOrigContext: 4096,
			DeepSeek: &DeepSeekSpec{QLoRARank: 32, KVLoRARank: 32, NopeDim: 16, RopeDim: 16, ValueDim: 48, DenseLayers: 1,
				ExpertFFN: 32, SharedExperts: 1, WeightsScale: 16, Gating: 1, Groups: 4, GroupsUsed: 2, YarnLogMul: 0.0707}},
		{Name: "deepseek2-v3-f32", Arch: "deepseek2", DType: tensor.F32, Vocab: "llama2", Embed: 64, Layers: 3, FFN: 128,
			Heads: 4, KVHeads: 4, Context: 16384, Seed: 19, PromptIDs: llamaPrompt, Experts: 8, ExpertsUsed: 3,
			RopeScaling: "yarn", RopeScaleFactor: 4, RopeOrigContext: 4096,
			DeepSeek: &DeepSeekSpec{QLoRARank: 32, KVLoRARank: 32, NopeDim: 32, RopeDim: 16, ValueDim: 32, SplitKVB: true, DenseLayers: 1,
				ExpertFFN: 32, SharedExperts: 1, WeightsScale: 2.5, WeightsNorm: true, Gating: 2, Bias: true, Groups: 4, GroupsUsed: 2,
				YarnLogMul: 0.1}},
	}
}

// deepseekMetadata writes the keys llama.cpp's deepseek2 loader reads, over
// the generic ones build wrote for a Llama-like model: the attention's
// widths, in the layout of s's kind of file, and the experts'.
func deepseekMetadata(w *gguf.Writer, s Spec) {
	d, a := s.DeepSeek, s.Arch+"."
	w.SetFloat32(a+"rope.freq_base", 10000)
	w.SetUint32(a+"rope.dimension_count", uint32(d.RopeDim))
	w.SetUint32(a+"leading_dense_block_count", uint32(d.DenseLayers))
	w.SetUint32(a+"attention.q_lora_rank", uint32(d.QLoRARank)) // read, and required, unless the depth says V2-Lite
	w.SetUint32(a+"attention.kv_lora_rank", uint32(d.KVLoRARank))
	if d.SplitKVB {
		w.SetUint32(a+"attention.head_count_kv", 1)
		w.SetUint32(a+"attention.key_length", uint32(d.KVLoRARank+d.RopeDim))
		w.SetUint32(a+"attention.value_length", uint32(d.KVLoRARank))
		w.SetUint32(a+"attention.key_length_mla", uint32(d.NopeDim+d.RopeDim))
		w.SetUint32(a+"attention.value_length_mla", uint32(d.ValueDim))
	} else {
		w.SetUint32(a+"attention.key_length", uint32(d.NopeDim+d.RopeDim))
		w.SetUint32(a+"attention.value_length", uint32(d.ValueDim))
	}
	w.SetUint32(a+"expert_count", uint32(s.Experts))
	w.SetUint32(a+"expert_used_count", uint32(s.ExpertsUsed))
	w.SetUint32(a+"expert_feed_forward_length", uint32(d.ExpertFFN))
	w.SetUint32(a+"expert_shared_count", uint32(d.SharedExperts))
	w.SetUint32(a+"expert_gating_func", d.Gating)
	if d.WeightsScale != 0 {
		w.SetFloat32(a+"expert_weights_scale", d.WeightsScale)
	}
	if d.WeightsNorm {
		w.SetBool(a+"expert_weights_norm", true)
	}
	if d.Groups != 0 {
		w.SetUint32(a+"expert_group_count", uint32(d.Groups))
		w.SetUint32(a+"expert_group_used_count", uint32(d.GroupsUsed))
	}
	if d.YarnLogMul != 0 {
		w.SetFloat32(a+"rope.scaling.yarn_log_multiplier", d.YarnLogMul)
	}
}

// deepseekLayer writes layer l's tensors under prefix p (the norms are
// build's), with add as build defines it: matrices in the model's type
// (attn_k_b too, its rows being NopeDim wide), the router and the choice
// bias F32, expert stacks as moeLayer draws them.
func deepseekLayer(s Spec, l int, p string, add func(name string, dt tensor.DType, scale, mean float32, shape ...int) error) []error {
	d := s.DeepSeek
	D, H, R, Dr, Dn, Dv := s.Embed, s.Heads, d.KVLoRARank, d.RopeDim, d.NopeDim, d.ValueDim
	Dk := Dn + Dr
	scale := func(in int) float32 { return 1.5 / float32(math.Sqrt(float64(in))) }
	mat := func(name string, shape ...int) error {
		return add(name, weightType(s.DType, name), scale(shape[len(shape)-1]), 0, shape...)
	}
	vec := func(name string, n int) error { return add(name, tensor.F32, 0.2, 1, n) }
	var errs []error
	if d.QLoRARank > 0 {
		errs = append(errs, mat(p+"attn_q_a.weight", d.QLoRARank, D), vec(p+"attn_q_a_norm.weight", d.QLoRARank),
			mat(p+"attn_q_b.weight", H*Dk, d.QLoRARank))
	} else {
		errs = append(errs, mat(p+"attn_q.weight", H*Dk, D))
	}
	errs = append(errs, mat(p+"attn_kv_a_mqa.weight", R+Dr, D), vec(p+"attn_kv_a_norm.weight", R))
	if d.SplitKVB {
		errs = append(errs, mat(p+"attn_k_b.weight", H, R, Dn), mat(p+"attn_v_b.weight", H, Dv, R))
	} else {
		errs = append(errs, mat(p+"attn_kv_b.weight", H*(Dn+Dv), R))
	}
	errs = append(errs, mat(p+"attn_output.weight", D, H*Dv))
	if l < d.DenseLayers {
		return append(errs, mat(p+"ffn_gate.weight", s.FFN, D), mat(p+"ffn_up.weight", s.FFN, D), mat(p+"ffn_down.weight", D, s.FFN))
	}
	E, Fe, Fs := s.Experts, d.ExpertFFN, d.SharedExperts*d.ExpertFFN
	if s.ExpertsUsed < 1 || s.ExpertsUsed > E {
		return append(errs, fmt.Errorf("deepseek2: %d experts used of %d", s.ExpertsUsed, E))
	}
	errs = append(errs, add(p+"ffn_gate_inp.weight", tensor.F32, scale(D), 0, E, D))
	if d.Bias {
		errs = append(errs, add(p+"exp_probs_b.bias", tensor.F32, 0.1, 0, E))
	}
	errs = append(errs, mat(p+"ffn_gate_exps.weight", E, Fe, D), mat(p+"ffn_up_exps.weight", E, Fe, D), mat(p+"ffn_down_exps.weight", E, D, Fe))
	if Fs > 0 {
		errs = append(errs, mat(p+"ffn_gate_shexp.weight", Fs, D), mat(p+"ffn_up_shexp.weight", Fs, D), mat(p+"ffn_down_shexp.weight", D, Fs))
	}
	return errs
}
