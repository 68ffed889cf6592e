// Phi test models: Phi-3's fused projections, partial half-split RoPE and
// LongRoPE factors; Phi-2's parallel blocks on one LayerNorm, with biases.

package testmodel

import (
	"math"

	"github.com/toyml/toy/toy/gguf"
	"github.com/toyml/toy/toy/tensor"
)

// phiSpecs returns the Phi gate models. llama.cpp runs the goldens with a
// context of 256 (prompt + 32 tokens = 48, rounded up to a multiple of 256:
// n_ctx_seq in its log); toy's gate runs them with 16 (Forward over the
// prompt) and 48 (Generate, and the session that walks the greedy path).
// The phi3 models with a Llama 2 vocabulary get Phi-3-mini's special tokens
// too (addPhi3Tokens).
//   - phi3-f32: Phi-3.5-mini's shape in small: LongRoPE factors over an
//     original context of 4096, so the short factors run at every test
//     context; the attention factor √(1 + ln 4 / ln 4096) of a 4× stretch;
//     12 of 16 features rotated; grouped-query attention; and a sliding
//     window of 5 in its metadata (Phi-3-mini's is 2047), which llama.cpp
//     ignores for phi3: so must toy.
//   - phi3-long-f32: Phi-4-mini's: an original context of 8, less than any
//     test context, so the long factors run in toy and llama.cpp alike; the
//     attention factor of a 32× stretch, √(1 + ln 32 / ln 8); 12 of 16
//     features rotated; tied output.
//   - phi4-q8_0: Phi-4's (architecture phi3): no factors, base 250000,
//     every feature rotated, a GPT-2-style vocabulary. (In a phi3 file whose
//     general.name holds "phi3", llama.cpp looks up <unk>, <s>, </s> and
//     <|endoftext|>, which this vocabulary lacks: hence the name.)
//   - phi2-f32: Phi-2's parallel block, 8 of 16 features rotated (Phi-2:
//     32 of 80), fused attn_qkv with its bias.
//   - phi2-q8_0: the same with separate attn_q, attn_k, attn_v (as newer
//     conversions store them).
func phiSpecs() []Spec {
	return []Spec{
		{Name: "phi3-f32", Arch: "phi3", DType: tensor.F32, Vocab: "llama2", Embed: 64, Layers: 2, FFN: 96, Heads: 4, KVHeads: 2,
			Context: 16384, Tied: false, Seed: 17, PromptIDs: llamaPrompt, RopeDim: 12, LongRoPE: true, RopeOrigContext: 4096, Window: 5},
		{Name: "phi3-long-f32", Arch: "phi3", DType: tensor.F32, Vocab: "llama2", Embed: 64, Layers: 2, FFN: 96, Heads: 4, KVHeads: 2,
			Context: 256, Tied: true, Seed: 18, PromptIDs: llamaPrompt, RopeDim: 12, LongRoPE: true, RopeOrigContext: 8},
		{Name: "phi4-q8_0", Arch: "phi3", DType: tensor.Q8_0, Vocab: "gpt2", Embed: 64, Layers: 2, FFN: 128, Heads: 4, KVHeads: 2,
			Context: 256, Tied: false, Seed: 19, PromptIDs: gpt2Prompt},
		{Name: "phi2-f32", Arch: "phi2", DType: tensor.F32, Vocab: "gpt2", Embed: 64, Layers: 2, FFN: 256, Heads: 4, KVHeads: 4,
			Context: 256, Tied: false, Seed: 20, PromptIDs: gpt2Prompt, RopeDim: 8},
		{Name: "phi2-q8_0", Arch: "phi2", DType: tensor.Q8_0, Vocab: "gpt2", Embed: 64, Layers: 2, FFN: 256, Heads: 4, KVHeads: 4,
			Context: 256, Tied: false, Seed: 21, PromptIDs: gpt2Prompt, RopeDim: 8, SeparateQKV: true},
	}
}

// addPhi3Tokens appends the special tokens Phi-3-mini adds to Llama 2's
// vocabulary, ids 32000 to 32010, as control tokens (llama.cpp's vocabulary
// loader looks up <|endoftext|> in a model it takes for Phi-3).
func addPhi3Tokens(v *vocab) {
	for _, t := range []string{"<|endoftext|>", "<|assistant|>", "<|placeholder1|>", "<|placeholder2|>", "<|placeholder3|>",
		"<|placeholder4|>", "<|system|>", "<|end|>", "<|placeholder5|>", "<|placeholder6|>", "<|user|>"} {
		v.Tokens = append(v.Tokens, t)
		v.TokenType = append(v.TokenType, 3)
		if v.Scores != nil {
			v.Scores = append(v.Scores, 0)
		}
	}
}

// isPhi reports whether arch is one of the Phi architectures, whose
// metadata and tensors phiMetadata, phiLayer and phiGlobals write.
func isPhi(arch string) bool { return arch == "phi2" || arch == "phi3" }

// phiMetadata writes the keys llama.cpp reads for phi2 and phi3 beyond the
// common ones (the RoPE width is s.RopeDim, or the head width); LongRoPE's
// attention factor is the one llama.cpp's converter computes for the
// stretch ℓ_max/ℓ_orig: √(1 + ln s / ln ℓ_orig).
func phiMetadata(w *gguf.Writer, s Spec, hd int) {
	a := s.Arch
	rd := hd
	if s.RopeDim != 0 {
		rd = s.RopeDim
	}
	w.SetUint32(a+".attention.head_count_kv", uint32(s.KVHeads))
	w.SetUint32(a+".rope.dimension_count", uint32(rd))
	if a == "phi2" {
		w.SetFloat32(a+".attention.layer_norm_epsilon", 1e-5)
		return
	}
	w.SetFloat32(a+".attention.layer_norm_rms_epsilon", 1e-5)
	base := float32(10000)
	if !s.LongRoPE {
		base = 250000 // Phi-4's
	}
	w.SetFloat32(a+".rope.freq_base", base)
	w.SetUint32(a+".attention.sliding_window", uint32(s.Window))
	if s.LongRoPE {
		scale := float64(s.Context) / float64(s.RopeOrigContext)
		w.SetUint32(a+".rope.scaling.original_context_length", uint32(s.RopeOrigContext))
		w.SetFloat32(a+".rope.scaling.attn_factor", float32(math.Sqrt(1+math.Log(scale)/math.Log(float64(s.RopeOrigContext)))))
	}
}

// phiRopeFactors returns LongRoPE factors for n pairs: short ones near 1
// (1 + 0.1i) and long ones growing with the wavelength (1 + 3i), as the
// released ones do.
func phiRopeFactors(n int) (short, long []float32) {
	for i := range n {
		short = append(short, 1+0.1*float32(i))
		long = append(long, 1+3*float32(i))
	}
	return short, long
}

// phiGlobals writes the tensors outside the blocks that Phi models add:
// LongRoPE's factors (phi3), the output norm's and head's biases (phi2).
func phiGlobals(w *gguf.Writer, s Spec, hd, vocab int, vec func(name string, n int, mean, scale float32) error) []error {
	if s.Arch == "phi2" {
		return []error{vec("output_norm.bias", s.Embed, 0, 0.1), vec("output.bias", vocab, 0, 0.5)}
	}
	if !s.LongRoPE {
		return nil
	}
	short, long := phiRopeFactors(s.RopeDim / 2)
	return []error{w.AddFloat32("rope_factors_long.weight", tensor.F32, long, len(long)),
		w.AddFloat32("rope_factors_short.weight", tensor.F32, short, len(short))}
}

// phiLayer writes layer p's tensors with mat and vec as build defines them:
// phi3's RMSNorms, fused attn_qkv and ffn_up [2F, D] (gate rows, then up);
// phi2's one LayerNorm, attention (fused or separate) and MLP, all with
// biases.
func phiLayer(s Spec, p string, hd int, mat func(name string, out, in int) error,
	vec func(name string, n int, mean, scale float32) error) []error {
	D, F, q, kv := s.Embed, s.FFN, s.Heads*hd, s.KVHeads*hd
	if s.Arch == "phi3" {
		return []error{
			vec(p+"attn_norm.weight", D, 1, 0.2), mat(p+"attn_qkv.weight", q+2*kv, D), mat(p+"attn_output.weight", D, q),
			vec(p+"ffn_norm.weight", D, 1, 0.2), mat(p+"ffn_up.weight", 2*F, D), mat(p+"ffn_down.weight", D, F),
		}
	}
	errs := []error{vec(p+"attn_norm.weight", D, 1, 0.2), vec(p+"attn_norm.bias", D, 0, 0.1)}
	if s.SeparateQKV {
		errs = append(errs, mat(p+"attn_q.weight", q, D), vec(p+"attn_q.bias", q, 0, 0.1), mat(p+"attn_k.weight", kv, D),
			vec(p+"attn_k.bias", kv, 0, 0.1), mat(p+"attn_v.weight", kv, D), vec(p+"attn_v.bias", kv, 0, 0.1))
	} else {
		errs = append(errs, mat(p+"attn_qkv.weight", q+2*kv, D), vec(p+"attn_qkv.bias", q+2*kv, 0, 0.1))
	}
	return append(errs,
		mat(p+"attn_output.weight", D, q), vec(p+"attn_output.bias", D, 0, 0.1),
		mat(p+"ffn_up.weight", F, D), vec(p+"ffn_up.bias", F, 0, 0.1),
		mat(p+"ffn_down.weight", D, F), vec(p+"ffn_down.bias", D, 0, 0.1))
}
