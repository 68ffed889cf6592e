package gptoss_test

import (
	"fmt"

	"github.com/toyml/toy/toy/models/gptoss"
)

func ExampleNewRandom() {
	cfg := gptoss.Config{VocabSize: 32, ContextLength: 16, Embed: 16, Layers: 2, FFN: 8, Experts: 4, ExpertsUsed: 2,
		Heads: 2, KVHeads: 1, HeadDim: 8, RopeDim: 8, RopeBase: 150000, NormEps: 1e-5, Window: 4, WindowPeriod: 2}
	if err := cfg.Validate(); err != nil {
		panic(err)
	}
	m := gptoss.NewRandom(cfg, 1) // the same seed gives the same weights
	// 2·32·16 embedding and output + 16 final norm, and per layer: 2·16
	// norms, 818 attention (q 16, k and v 8 wide, biases, 2 sinks), 1732
	// experts (router with bias, 4 experts of width 8 with biases)
	fmt.Println("parameters:", m.Card().ParamCount, "tensors:", len(m.Weights()))

	cache := m.NewCache(16)
	logits := m.Forward([]int32{1, 2, 3}, cache) // prefill: [T=3, V=32]
	fmt.Println(logits.Shape(), "cached:", cache.Len())
	logits = m.Forward([]int32{4}, cache) // one decode step at position 3
	fmt.Println(logits.Shape(), "cached:", cache.Len())
	// Output:
	// parameters: 6204 tensors: 41
	// [3 32] cached: 3
	// [1 32] cached: 4
}
