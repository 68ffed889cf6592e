package starcoder2_test

import (
	"fmt"

	"github.com/toyml/toy/toy/models/starcoder2"
)

func ExampleNewRandom() {
	cfg := starcoder2.Config{VocabSize: 32, ContextLength: 16, Embed: 16, Layers: 1, FFN: 32,
		Heads: 2, KVHeads: 1, RopeBase: 10000, NormEps: 1e-5, TiedOutput: true}
	if err := cfg.Validate(); err != nil {
		panic(err)
	}
	m := starcoder2.NewRandom(cfg, 1) // the same seed gives the same weights
	// 32·16 embedding + (16·16+16) q + 2·(8·16+8) k, v + (16·16+16) o + (32·16+32) up + (16·32+16) down + 3 LayerNorms of 2·16
	fmt.Println("parameters:", m.Card().ParamCount, "tensors:", len(m.Weights()))

	cache := m.NewCache(16)
	logits := m.Forward([]int32{1, 2, 3}, cache) // prefill: [T=3, V=32]
	fmt.Println(logits.Shape(), "cached:", cache.Len())
	logits = m.Forward([]int32{4}, cache) // one decode step at position 3
	fmt.Println(logits.Shape(), "cached:", cache.Len())
	// Output:
	// parameters: 2496 tensors: 19
	// [3 32] cached: 3
	// [1 32] cached: 4
}
