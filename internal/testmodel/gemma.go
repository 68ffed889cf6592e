// Gemma test models: Gemma's GeGLU and scaled embeddings; Gemma 2's sandwich
// norms, soft caps and alternating sliding windows; Gemma 3's per-head
// query/key norms, five local layers to a global one, and RoPE that differs
// between them.

package testmodel

import (
	"github.com/toyml/toy/toy/gguf"
	"github.com/toyml/toy/toy/tensor"
)

// gemmaSpecs returns the Gemma gate models.
//   - gemma2 in F32 and Q8_0: heads wider than Embed/Heads (as Gemma 2 2B's
//     256 against 2304/8), a sliding window of 5 positions on the even
//     layers — shorter than the 16-token prompt, so that the window masks
//     keys in prefill and in decode — and soft caps small enough that tanh
//     bends the scores and logits (Gemma 2's own are 50 and 30).
//   - gemma-f32: one key/value head (Gemma 2B's multi-query attention).
//   - gemma3-f32: seven layers, 0–4 and 6 local (window 5, RoPE base 10000)
//     and 5 global (base 10⁶, angles divided by 8, as Gemma 3 4B's).
func gemmaSpecs() []Spec {
	var out []Spec
	for _, dt := range []tensor.DType{tensor.F32, tensor.Q8_0} {
		out = append(out, Spec{Name: "gemma2-" + map[tensor.DType]string{tensor.F32: "f32", tensor.Q8_0: "q8_0"}[dt],
			Arch: "gemma2", DType: dt, Vocab: "llama2", Embed: 64, Layers: 3, FFN: 128, Heads: 4, KVHeads: 2, HeadDim: 32,
			Context: 256, Tied: true, Seed: 9, PromptIDs: llamaPrompt, Window: 5, AttnSoftCap: 3, FinalSoftCap: 10})
	}
	return append(out,
		Spec{Name: "gemma-f32", Arch: "gemma", DType: tensor.F32, Vocab: "llama2", Embed: 64, Layers: 2, FFN: 128,
			Heads: 4, KVHeads: 1, Context: 256, Tied: true, Seed: 12, PromptIDs: llamaPrompt},
		Spec{Name: "gemma3-f32", Arch: "gemma3", DType: tensor.F32, Vocab: "llama2", Embed: 64, Layers: 7, FFN: 128,
			Heads: 4, KVHeads: 2, HeadDim: 32, Context: 1024, Tied: true, Seed: 13, PromptIDs: llamaPrompt, Window: 5,
			RopeScaling: "linear", RopeScaleFactor: 8})
}

// gemmaMetadata writes the keys llama.cpp reads for Gemma 2 and 3 beyond
// the Llama ones; zeros in s leave a key out (readers then take Gemma 2's
// values: 4096, 50, 30).
func gemmaMetadata(w *gguf.Writer, s Spec) {
	a := s.Arch
	if s.Window != 0 {
		w.SetUint32(a+".attention.sliding_window", uint32(s.Window))
	}
	if s.AttnSoftCap != 0 {
		w.SetFloat32(a+".attn_logit_softcapping", s.AttnSoftCap)
	}
	if s.FinalSoftCap != 0 {
		w.SetFloat32(a+".final_logit_softcapping", s.FinalSoftCap)
	}
}
