package lfm2_test

import (
	"fmt"

	"github.com/toyml/toy/toy/models/lfm2"
)

func ExampleNewRandom() {
	cfg := lfm2.Config{Arch: "lfm2", VocabSize: 32, ContextLength: 16, Embed: 16, Layers: 4, FFN: 32, Heads: 2,
		KVHeads: []int{0, 0, 1, 0}, ConvTaps: 3, RopeBase: 1e6, NormEps: 1e-5}
	if err := cfg.Validate(); err != nil {
		panic(err)
	}
	m := lfm2.NewRandom(cfg, 1) // the same seed gives the same weights
	for i := range m.Blocks {
		fmt.Printf("layer %d: convolution %v\n", i, m.Blocks[i].(*lfm2.Block).Conv() != nil)
	}
	cache := m.NewCache(16)
	logits := m.Forward([]int32{1, 2, 3}, cache) // prefill: [T=3, V=32]
	m.Forward([]int32{4}, cache)                 // the convolutions reach back into the cache
	fmt.Println(logits.Shape(), "cached:", cache.Len())
	// Output:
	// layer 0: convolution true
	// layer 1: convolution true
	// layer 2: convolution false
	// layer 3: convolution true
	// [3 32] cached: 4
}
