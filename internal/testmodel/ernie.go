// The ERNIE 4.5 test models: ernie4_5's Llama block with heads wider than
// D/H, ernie4_5-moe's softmax-routed experts with a choice bias and a
// shared expert.

package testmodel

import (
	"math"

	"github.com/toyml/toy/toy/gguf"
	"github.com/toyml/toy/toy/tensor"
)

// ErnieSpec is what an ERNIE 4.5 test model adds to Spec (whose Experts
// and ExpertsUsed are then the mixture's, SharedFFN the shared expert's
// width, FFN the dense layers').
type ErnieSpec struct {
	QKVBias bool `json:"qkv_bias,omitempty"` // biases on the query, key and value projections
	// ernie4_5-moe: experts in layer l when l ≥ DenseLayers and (l+1) is a
	// multiple of MoEStep.
	DenseLayers int `json:"dense_layers,omitempty"`
	MoEStep     int `json:"moe_step,omitempty"`
	ExpertFFN   int `json:"expert_ffn,omitempty"`
	// SharedExperts: the expert_shared_count the converter writes beside
	// the width (llama.cpp reads only the width).
	SharedExperts int `json:"shared_experts,omitempty"`
	// BiasScale: exp_probs_b drawn from ±BiasScale (0: none); BiasRow
	// stores it [1, E], as the converter keeps ERNIE's checkpoints'.
	BiasScale float32 `json:"bias_scale,omitempty"`
	BiasRow   bool    `json:"bias_row,omitempty"`
}

// ernieSpecs are the ERNIE 4.5 gate models, all with the SentencePiece
// vocabulary of the llama2 specs (ERNIE's files carry a "llama"
// tokenizer; the gates feed token ids, so its pieces do not matter) and
// RoPE over whole heads in adjacent pairs:
//   - ernie4_5-f32, ERNIE-4.5-0.3B's shape: heads of 32 against D/H = 16
//     (0.3B's 128 against 1024/16), 2 key/value heads, the head tied to
//     the embedding; and query, key and value biases, which llama.cpp adds
//     when a file has them;
//   - ernie4_5-moe-f32, ERNIE-4.5-21B-A3B's: one dense layer, then three
//     of 8 experts, 2 a token, chosen by softmax + a bias of up to ±0.1
//     (enough to change the choice), stored [1, E] as the converter
//     writes it, beside a shared expert of 64 (two of 32, as one);
//   - ernie4_5-moe-q8_0: a dense layer, then experts at the step of 2
//     (layer 1, (1+1) mod 2 = 0: llama.cpp loads only files whose every
//     layer past the dense ones has experts), the bias [E], no shared
//     expert, the head tied.
func ernieSpecs() []Spec {
	return []Spec{
		{Name: "ernie4_5-f32", Arch: "ernie4_5", DType: tensor.F32, Vocab: "llama2", Embed: 64, Layers: 3, FFN: 128, Heads: 4,
			KVHeads: 2, HeadDim: 32, Context: 256, Tied: true, Seed: 81, PromptIDs: llamaPrompt, Ernie: &ErnieSpec{QKVBias: true}},
		{Name: "ernie4_5-moe-f32", Arch: "ernie4_5-moe", DType: tensor.F32, Vocab: "llama2", Embed: 64, Layers: 4, FFN: 128,
			Heads: 4, KVHeads: 2, Context: 256, Seed: 82, PromptIDs: llamaPrompt, Experts: 8, ExpertsUsed: 2, SharedFFN: 64,
			Ernie: &ErnieSpec{DenseLayers: 1, MoEStep: 1, ExpertFFN: 32, SharedExperts: 2, BiasScale: 0.1, BiasRow: true}},
		{Name: "ernie4_5-moe-q8_0", Arch: "ernie4_5-moe", DType: tensor.Q8_0, Vocab: "llama2", Embed: 64, Layers: 2, FFN: 128,
			Heads: 4, KVHeads: 2, Context: 256, Tied: true, Seed: 83, PromptIDs: llamaPrompt, Experts: 8, ExpertsUsed: 2,
			Ernie: &ErnieSpec{DenseLayers: 1, MoEStep: 2, ExpertFFN: 32, BiasScale: 0.1}},
	}
}

// ernieMetadata writes ernie4_5-moe's keys as llama.cpp's converter does.
func ernieMetadata(w *gguf.Writer, s Spec) {
	a, e := s.Arch, s.Ernie
	if a != "ernie4_5-moe" {
		return
	}
	w.SetUint32(a+".expert_count", uint32(s.Experts))
	w.SetUint32(a+".expert_used_count", uint32(s.ExpertsUsed))
	w.SetUint32(a+".interleave_moe_layer_step", uint32(e.MoEStep))
	w.SetUint32(a+".leading_dense_block_count", uint32(e.DenseLayers))
	w.SetUint32(a+".expert_feed_forward_length", uint32(e.ExpertFFN))
	if e.SharedExperts > 0 {
		w.SetUint32(a+".expert_shared_count", uint32(e.SharedExperts))
		w.SetUint32(a+".expert_shared_feed_forward_length", uint32(s.SharedFFN))
	}
}

// ernieLayer writes layer l's tensors under p, with add and vec as build
// defines them: the attention (biases if the spec has them), the two
// norms, and a dense SwiGLU or the experts: router and choice bias F32,
// stacks in the model's type, the shared expert as one SwiGLU.
func ernieLayer(s Spec, l int, p string, hd int,
	add func(name string, dt tensor.DType, scale, mean float32, shape ...int) error,
	vec func(name string, n int, mean, scale float32) error) []error {
	D, F, q, kv, e := s.Embed, s.FFN, s.Heads*hd, s.KVHeads*hd, s.Ernie
	scale := func(in int) float32 { return 1.5 / float32(math.Sqrt(float64(in))) }
	mat := func(name string, shape ...int) error {
		return add(name, weightType(s.DType, name), scale(shape[len(shape)-1]), 0, shape...)
	}
	errs := []error{vec(p+"attn_norm.weight", D, 1, 0.2), mat(p+"attn_q.weight", q, D), mat(p+"attn_k.weight", kv, D),
		mat(p+"attn_v.weight", kv, D)}
	if e.QKVBias {
		errs = append(errs, vec(p+"attn_q.bias", q, 0, 0.1), vec(p+"attn_k.bias", kv, 0, 0.1), vec(p+"attn_v.bias", kv, 0, 0.1))
	}
	errs = append(errs, mat(p+"attn_output.weight", D, q), vec(p+"ffn_norm.weight", D, 1, 0.2))
	if s.Arch != "ernie4_5-moe" || l < e.DenseLayers || (l+1)%e.MoEStep != 0 {
		return append(errs, mat(p+"ffn_gate.weight", F, D), mat(p+"ffn_up.weight", F, D), mat(p+"ffn_down.weight", D, F))
	}
	E, Fe, Fs := s.Experts, e.ExpertFFN, s.SharedFFN
	errs = append(errs, add(p+"ffn_gate_inp.weight", tensor.F32, scale(D), 0, E, D))
	switch {
	case e.BiasScale > 0 && e.BiasRow:
		errs = append(errs, add(p+"exp_probs_b.bias", tensor.F32, e.BiasScale, 0, 1, E))
	case e.BiasScale > 0:
		errs = append(errs, add(p+"exp_probs_b.bias", tensor.F32, e.BiasScale, 0, E))
	}
	errs = append(errs, mat(p+"ffn_gate_exps.weight", E, Fe, D), mat(p+"ffn_up_exps.weight", E, Fe, D), mat(p+"ffn_down_exps.weight", E, D, Fe))
	if Fs > 0 {
		errs = append(errs, mat(p+"ffn_gate_shexp.weight", Fs, D), mat(p+"ffn_up_shexp.weight", Fs, D), mat(p+"ffn_down_shexp.weight", D, Fs))
	}
	return errs
}
