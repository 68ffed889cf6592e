package gpt2_test

import (
	"fmt"

	"github.com/toyml/toy/toy/models/gpt2"
)

func ExampleNewRandom() {
	cfg := gpt2.Config{VocabSize: 32, ContextLength: 16, Embed: 16, Layers: 1, FFN: 64, Heads: 2,
		NormEps: 1e-5, TiedOutput: true}
	if err := cfg.Validate(); err != nil {
		panic(err)
	}
	m := gpt2.NewRandom(cfg, 1)               // the same seed gives the same weights
	fmt.Println("tensors:", len(m.Weights())) // the tied output head is token_embd.weight, listed once

	cache := m.NewCache(16)                      // at most ContextLength positions
	logits := m.Forward([]int32{1, 2, 3}, cache) // prefill: [T=3, V=32]
	fmt.Println(logits.Shape(), "cached:", cache.Len())
	logits = m.Forward([]int32{4}, cache) // one decode step at position 3
	fmt.Println(logits.Shape(), "cached:", cache.Len())
	// Output:
	// tensors: 16
	// [3 32] cached: 3
	// [1 32] cached: 4
}
