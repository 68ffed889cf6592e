package olmoe_test

import (
	"fmt"

	"github.com/toyml/toy/toy/models/olmoe"
)

func ExampleNewRandom() {
	cfg := olmoe.Config{VocabSize: 32, ContextLength: 16, Embed: 16, Layers: 1, FFN: 8, Experts: 4, ExpertsUsed: 2,
		Heads: 2, KVHeads: 2, HeadDim: 8, RopeDim: 8, RopeBase: 10000, NormEps: 1e-5}
	if err := cfg.Validate(); err != nil {
		panic(err)
	}
	m := olmoe.NewRandom(cfg, 1) // the same seed gives the same weights
	// 32·16 embedding + 4·16·16 attention + 2·16 q/k norms + 4·16 router
	// + 4·3·8·16 experts + 2·16 norms + 16 + 32·16 output
	fmt.Println("parameters:", m.Card().ParamCount, "tensors:", len(m.Weights()))

	cache := m.NewCache(16)
	logits := m.Forward([]int32{1, 2, 3}, cache) // prefill: [T=3, V=32]
	fmt.Println(logits.Shape(), "cached:", cache.Len())
	logits = m.Forward([]int32{4}, cache) // one decode step at position 3
	fmt.Println(logits.Shape(), "cached:", cache.Len())
	// Output:
	// parameters: 3728 tensors: 15
	// [3 32] cached: 3
	// [1 32] cached: 4
}
