package cohere_test

import (
	"fmt"

	"github.com/toyml/toy/toy/models/cohere"
)

func ExampleNewRandom() {
	cfg := cohere.Config{Arch: "cohere2", VocabSize: 32, ContextLength: 16, Embed: 16, Layers: 4, FFN: 32,
		Heads: 2, KVHeads: 1, RopeBase: 50000, NormEps: 1e-5, LogitScale: 0.25, Window: 4, SlidingPattern: 4}
	if err := cfg.Validate(); err != nil {
		panic(err)
	}
	m := cohere.NewRandom(cfg, 1) // the same seed gives the same weights
	for i, b := range m.Blocks {
		a := b.(*cohere.Block).Attn
		fmt.Printf("layer %d: window %d, RoPE %v\n", i, a.Options.Window, a.RoPE != nil)
	}
	cache := m.NewCache(16)
	logits := m.Forward([]int32{1, 2, 3}, cache) // prefill: [T=3, V=32]
	fmt.Println(logits.Shape(), "cached:", cache.Len())
	// Output:
	// layer 0: window 4, RoPE true
	// layer 1: window 4, RoPE true
	// layer 2: window 4, RoPE true
	// layer 3: window 0, RoPE false
	// [3 32] cached: 3
}
