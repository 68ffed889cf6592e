// The Qwen3.5 test models: gated delta-rule layers and gated attention.

package testmodel

import (
	"math"

	"github.com/toyml/toy/toy/gguf"
	"github.com/toyml/toy/toy/tensor"
)

// Qwen35Spec is the part of a Qwen3.5 model that Spec has no field for:
// the delta rule's heads and convolution, and the layer pattern.
type Qwen35Spec struct {
	KHeads   int `json:"k_heads"`   // query/key heads
	VHeads   int `json:"v_heads"`   // value heads, a multiple of KHeads
	StateDim int `json:"state_dim"` // every head's width
	ConvL    int `json:"conv_l"`    // the convolution's taps
	Interval int `json:"interval"`  // an attention layer every Interval
	// Fused (qwen3next): one ssm_in projection in place of attn_qkv and
	// attn_gate, as Qwen3-Next's older conversions have it.
	Fused bool `json:"fused,omitempty"`
}

// qwen35Specs are the Qwen3.5 gate models: eight layers, every fourth
// attention (as in every Qwen3.5), heads 32 wide rotated over a quarter,
// as Qwen3.5's 256 over 64; the delta rule's convolution of 4 taps.
//   - qwen35-f32: 2 key heads for 4 value heads (Qwen3.5-9B's ratio, which
//     pairs value head h with key head h mod 2), its own output head;
//   - qwen35-q8_0: as many key heads as value heads (Qwen3.5-0.8B), the
//     head tied to the embedding;
//   - qwen35moe-f32, shaped as Qwen3.5-35B-A3B: mixtures of 8 experts, 2 a
//     token, beside a shared expert gated by a sigmoid, in every layer;
//   - qwen35-q4_k_m, the mix most Qwen3.5 files come in (Q6_K head and
//     down projections), at widths of whole 256-weight super-blocks (two
//     single-position rounding flips, measured: tests/reference);
//   - qwen3next-f32 and qwen3next-q8_0, shaped as Qwen3-Next-80B-A3B (2
//     value heads to a key head, which reads them as a group, β and α in
//     one ssm_ba; mixtures of 8 experts, 2 a token, and a shared expert,
//     in every layer): the F32 model in the older conversion's single
//     ssm_in, the Q8_0 one in today's attn_qkv and attn_gate. (Its seed
//     is 67: seed 66 put a Q8_0 activation exactly on a half-step, 26.5
//     of its block's scale, at greedy step 5, where one ulp decides the
//     rounding: 7.7e-2 from llama.cpp there, 1.9e-4 with toy's rounding
//     turned the other way, and the state carried the difference on until
//     the greedy tokens parted at step 20.)
func qwen35Specs() []Spec {
	return []Spec{
		{Name: "qwen35-f32", Arch: "qwen35", DType: tensor.F32, Vocab: "gpt2", Embed: 64, Layers: 8, FFN: 96, Heads: 4,
			KVHeads: 2, HeadDim: 32, RopeDim: 8, Context: 256, Seed: 61, PromptIDs: gpt2Prompt,
			Qwen35: &Qwen35Spec{KHeads: 2, VHeads: 4, StateDim: 16, ConvL: 4, Interval: 4}},
		{Name: "qwen35-q8_0", Arch: "qwen35", DType: tensor.Q8_0, Vocab: "gpt2", Embed: 64, Layers: 8, FFN: 96, Heads: 4,
			KVHeads: 2, HeadDim: 32, RopeDim: 8, Context: 256, Tied: true, Seed: 62, PromptIDs: gpt2Prompt,
			Qwen35: &Qwen35Spec{KHeads: 4, VHeads: 4, StateDim: 16, ConvL: 4, Interval: 4}},
		{Name: "qwen35moe-f32", Arch: "qwen35moe", DType: tensor.F32, Vocab: "gpt2", Embed: 64, Layers: 8, FFN: 32, Heads: 4,
			KVHeads: 2, HeadDim: 32, RopeDim: 8, Context: 256, Tied: true, Seed: 63, PromptIDs: gpt2Prompt, Experts: 8,
			ExpertsUsed: 2, SharedFFN: 48, Qwen35: &Qwen35Spec{KHeads: 2, VHeads: 4, StateDim: 16, ConvL: 4, Interval: 4}},
		{Name: "qwen35-q4_k_m", Arch: "qwen35", DType: tensor.Q4_K, Vocab: "gpt2", Embed: 256, Layers: 4, FFN: 512, Heads: 4,
			KVHeads: 2, HeadDim: 64, RopeDim: 16, Context: 256, Seed: 64, PromptIDs: gpt2Prompt,
			Qwen35: &Qwen35Spec{KHeads: 2, VHeads: 4, StateDim: 64, ConvL: 4, Interval: 4}},
		{Name: "qwen3next-f32", Arch: "qwen3next", DType: tensor.F32, Vocab: "gpt2", Embed: 64, Layers: 8, FFN: 32, Heads: 4,
			KVHeads: 2, HeadDim: 32, RopeDim: 8, Context: 256, Seed: 65, PromptIDs: gpt2Prompt, Experts: 8,
			ExpertsUsed: 2, SharedFFN: 48, Qwen35: &Qwen35Spec{KHeads: 2, VHeads: 4, StateDim: 16, ConvL: 4, Interval: 4, Fused: true}},
		{Name: "qwen3next-q8_0", Arch: "qwen3next", DType: tensor.Q8_0, Vocab: "gpt2", Embed: 64, Layers: 8, FFN: 32, Heads: 4,
			KVHeads: 2, HeadDim: 32, RopeDim: 8, Context: 256, Tied: true, Seed: 67, PromptIDs: gpt2Prompt, Experts: 8,
			ExpertsUsed: 2, SharedFFN: 64, Qwen35: &Qwen35Spec{KHeads: 2, VHeads: 4, StateDim: 16, ConvL: 4, Interval: 4}},
	}
}

// qwen35Metadata writes the delta rule's shape, the layer pattern, the
// rotated width and M-RoPE sections (Qwen3.5's [11, 11, 10, 0] scaled to
// the rotated pairs).
func qwen35Metadata(w *gguf.Writer, s Spec) {
	a, q := s.Arch, s.Qwen35
	w.SetUint32(a+".attention.key_length", uint32(s.HeadDim))
	w.SetUint32(a+".attention.value_length", uint32(s.HeadDim))
	w.SetUint32(a+".rope.dimension_count", uint32(s.RopeDim))
	if a != "qwen3next" { // Qwen3-Next's RoPE is plain
		pairs := s.RopeDim / 2
		w.SetInt32s(a+".rope.dimension_sections", []int32{int32(pairs - 2*(pairs/3)), int32(pairs / 3), int32(pairs / 3), 0})
	}
	w.SetUint32(a+".full_attention_interval", uint32(q.Interval))
	w.SetUint32(a+".ssm.conv_kernel", uint32(q.ConvL))
	w.SetUint32(a+".ssm.state_size", uint32(q.StateDim))
	w.SetUint32(a+".ssm.group_count", uint32(q.KHeads))
	w.SetUint32(a+".ssm.time_step_rank", uint32(q.VHeads))
	w.SetUint32(a+".ssm.inner_size", uint32(q.VHeads*q.StateDim))
	if s.Experts > 0 {
		moeMetadata(w, s)
	}
}

// qwen35Layer writes layer l's tensors under p: the two norms, the SwiGLU,
// and either gated attention (its query projection twice as tall: query
// and gate per head) or the delta rule, whose convolution taps, decay
// rates and time-step biases stay F32 as llama.cpp's quantizer leaves them.
func qwen35Layer(s Spec, l int, p string,
	add func(name string, dt tensor.DType, scale, mean float32, shape ...int) error,
	vec func(name string, n int, mean, scale float32) error) []error {
	D, F, q := s.Embed, s.FFN, s.Qwen35
	scale := func(in int) float32 { return 1.5 / float32(math.Sqrt(float64(in))) }
	mat := func(name string, out, in int) error {
		return add(name, weightType(s.DType, name), scale(in), 0, out, in)
	}
	errs := []error{vec(p+"attn_norm.weight", D, 1, 0.2), vec(p+"post_attention_norm.weight", D, 1, 0.2)}
	if s.Experts > 0 {
		errs = append(errs, moeLayer(s, p, add)...)
	} else {
		errs = append(errs, mat(p+"ffn_gate.weight", F, D), mat(p+"ffn_up.weight", F, D), mat(p+"ffn_down.weight", D, F))
	}
	if (l+1)%q.Interval == 0 {
		hd, kv := s.HeadDim, s.KVHeads*s.HeadDim
		return append(errs,
			mat(p+"attn_q.weight", 2*s.Heads*hd, D), mat(p+"attn_k.weight", kv, D), mat(p+"attn_v.weight", kv, D),
			vec(p+"attn_q_norm.weight", hd, 1, 0.3), vec(p+"attn_k_norm.weight", hd, 1, 0.3),
			mat(p+"attn_output.weight", D, s.Heads*hd))
	}
	C, v := (2*q.KHeads+q.VHeads)*q.StateDim, q.VHeads*q.StateDim
	if q.Fused {
		errs = append(errs, mat(p+"ssm_in.weight", C+v, D))
	} else {
		errs = append(errs, mat(p+"attn_qkv.weight", C, D), mat(p+"attn_gate.weight", v, D))
	}
	errs = append(errs,
		add(p+"ssm_conv1d.weight", tensor.F32, 0.6, 0, C, q.ConvL),
		vec(p+"ssm_dt.bias", q.VHeads, 0, 1),
		vec(p+"ssm_a", q.VHeads, -0.3, 0.2)) // −e^{A_log}: slow decays, so that the state remembers
	if s.Arch == "qwen3next" {
		errs = append(errs, mat(p+"ssm_ba.weight", 2*q.VHeads, D))
	} else {
		errs = append(errs, mat(p+"ssm_beta.weight", q.VHeads, D), mat(p+"ssm_alpha.weight", q.VHeads, D))
	}
	return append(errs, vec(p+"ssm_norm.weight", q.StateDim, 1, 0.2), mat(p+"ssm_out.weight", D, v))
}
