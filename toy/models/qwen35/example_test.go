package qwen35_test

import (
	"fmt"

	"github.com/toyml/toy/toy/models/qwen35"
)

func ExampleNewRandom() {
	cfg := qwen35.Config{Arch: qwen35.Arch, VocabSize: 32, ContextLength: 16, Embed: 16, Layers: 4, FFN: 32, Interval: 4,
		Heads: 2, KVHeads: 1, HeadDim: 8, RopeDim: 4, RopeBase: 1e7, KHeads: 1, VHeads: 2, StateDim: 4, ConvTaps: 4,
		NormEps: 1e-6, TiedOutput: true}
	if err := cfg.Validate(); err != nil {
		panic(err)
	}
	m := qwen35.NewRandom(cfg, 1) // the same seed gives the same weights
	for i, b := range m.Blocks {
		fmt.Printf("layer %d: delta rule %v\n", i, b.(*qwen35.Block).Delta() != nil)
	}
	cache := m.NewCache(16)
	logits := m.Forward([]int32{1, 2, 3}, cache) // prefill: [T=3, V=32]
	m.Forward([]int32{4}, cache)                 // the delta rule goes on from its state
	cache.Truncate(3)                            // and can rewind a few positions
	fmt.Println(logits.Shape(), "cached:", cache.Len())
	// Output:
	// layer 0: delta rule true
	// layer 1: delta rule true
	// layer 2: delta rule true
	// layer 3: delta rule false
	// [3 32] cached: 3
}
