package deepseek2_test

import (
	"fmt"

	"github.com/toyml/toy/toy/models/deepseek2"
)

func ExampleNewRandom() {
	// DeepSeek-V2-Lite's layout in miniature: queries straight from x, a
	// latent of 16 per token, heads of 24 (8 rotated) for keys and 16 for
	// values, a dense first layer, then 4 experts (2 a token) beside one
	// shared expert.
	cfg := deepseek2.Config{VocabSize: 32, ContextLength: 16, Embed: 16, Layers: 2, DenseLayers: 1, FFN: 32, Heads: 2,
		KVLoraRank: 16, KeyDim: 24, ValueDim: 16, RopeDim: 8, SplitKVB: true,
		Experts: 4, ExpertsUsed: 2, ExpertFFN: 8, SharedExperts: 1, ExpertGating: "softmax", RopeBase: 10000, NormEps: 1e-6}
	if err := cfg.Validate(); err != nil {
		panic(err)
	}
	m := deepseek2.NewRandom(cfg, 1) // the same seed gives the same weights
	// 2·32·16 embedding and head + 16 final norm; per layer 2·16 norms +
	// 2·24·16 W_q + 24·16 W_kva + 16 + 2·(2·16·16) attn_k_b, attn_v_b +
	// 16·32 W_o = 2736, then 3·32·16 dense, or 4·16 router + 3·4·8·16
	// experts + 3·8·16 shared
	fmt.Println("parameters:", m.Card().ParamCount, "tensors:", len(m.Weights()))

	cache := m.NewCache(16)                      // holds the latent and the rotated key: 16+8 per position and layer
	logits := m.Forward([]int32{1, 2, 3}, cache) // prefill: [T=3, V=32]
	fmt.Println(logits.Shape(), "cached:", cache.Len())
	logits = m.Forward([]int32{4}, cache) // one decode step at position 3
	fmt.Println(logits.Shape(), "cached:", cache.Len())
	// Output:
	// parameters: 10032 tensors: 29
	// [3 32] cached: 3
	// [1 32] cached: 4
}
