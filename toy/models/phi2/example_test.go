package phi2_test

import (
	"fmt"

	"github.com/toyml/toy/toy/models/phi2"
)

func ExampleNewRandom() {
	cfg := phi2.Config{VocabSize: 32, ContextLength: 16, Embed: 16, Layers: 1, FFN: 64, Heads: 2, KVHeads: 2, HeadDim: 8,
		RopeDim: 4, RopeBase: 10000, NormEps: 1e-5}
	if err := cfg.Validate(); err != nil {
		panic(err)
	}
	m := phi2.NewRandom(cfg, 1) // the same seed gives the same weights
	// 32·16 embedding + 2·16 LayerNorm + 17·48 QKV + 17·16 output + 17·64 up + 65·16 down
	// + 2·16 final LayerNorm + 17·32 head
	fmt.Println("parameters:", m.Card().ParamCount, "tensors:", len(m.Weights()))

	cache := m.NewCache(16)
	logits := m.Forward([]int32{1, 2, 3}, cache) // prefill: [T=3, V=32]
	fmt.Println(logits.Shape(), "cached:", cache.Len())
	logits = m.Forward([]int32{4}, cache) // one decode step at position 3
	fmt.Println(logits.Shape(), "cached:", cache.Len())
	// Output:
	// parameters: 4336 tensors: 15
	// [3 32] cached: 3
	// [1 32] cached: 4
}
