package phi3_test

import (
	"fmt"

	"github.com/toyml/toy/toy/models/phi3"
)

func ExampleNewRandom() {
	cfg := phi3.Config{VocabSize: 32, ContextLength: 64, Embed: 16, Layers: 1, FFN: 32, Heads: 2, KVHeads: 1, HeadDim: 8,
		RopeDim: 6, RopeBase: 10000, NormEps: 1e-5, RopeFactors: true, RopeOrigContext: 16, RopeAttnFactor: 1.2}
	if err := cfg.Validate(); err != nil {
		panic(err)
	}
	m := phi3.NewRandom(cfg, 1) // the same seed gives the same weights; LongRoPE's factors start at 1
	// 32·16 embedding + (16+2·8)·16 fused QKV + 16·16 output + 2·32·16 fused gate/up
	// + 16·32 down + 2·16 norms + 16 + 32·16 head + 2·3 factors
	fmt.Println("parameters:", m.Card().ParamCount, "tensors:", len(m.Weights()))
	fmt.Println("long factors at 16 positions:", cfg.LongFactors(16), "at 17:", cfg.LongFactors(17))

	cache := m.NewCache(32)                      // a context of 32 > 16: the long factors
	logits := m.Forward([]int32{1, 2, 3}, cache) // prefill: [T=3, V=32]
	fmt.Println(logits.Shape(), "cached:", cache.Len())
	logits = m.Forward([]int32{4}, cache) // one decode step at position 3
	fmt.Println(logits.Shape(), "cached:", cache.Len())
	// Output:
	// parameters: 3382 tensors: 11
	// long factors at 16 positions: false at 17: true
	// [3 32] cached: 3
	// [1 32] cached: 4
}
