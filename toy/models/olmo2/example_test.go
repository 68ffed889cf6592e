package olmo2_test

import (
	"fmt"

	"github.com/toyml/toy/toy/models/olmo2"
)

func ExampleNewRandom() {
	cfg := olmo2.Config{VocabSize: 32, ContextLength: 16, Embed: 16, Layers: 1, FFN: 32,
		Heads: 2, KVHeads: 1, RopeBase: 500000, NormEps: 1e-6}
	if err := cfg.Validate(); err != nil {
		panic(err)
	}
	m := olmo2.NewRandom(cfg, 1) // the same seed gives the same weights
	// 2·32·16 embedding and output + (2·16·16 + 2·8·16) projections + 16 + 8 q/k norms
	// + 2·16 post norms + 3·32·16 SwiGLU + 16 final norm
	fmt.Println("parameters:", m.Card().ParamCount, "tensors:", len(m.Weights()))

	cache := m.NewCache(16)
	logits := m.Forward([]int32{1, 2, 3}, cache) // prefill: [T=3, V=32]
	fmt.Println(logits.Shape(), "cached:", cache.Len())
	logits = m.Forward([]int32{4}, cache) // one decode step at position 3
	fmt.Println(logits.Shape(), "cached:", cache.Len())
	// Output:
	// parameters: 3400 tensors: 14
	// [3 32] cached: 3
	// [1 32] cached: 4
}
