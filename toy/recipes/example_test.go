package recipes_test

import (
	"fmt"
	"math"

	"github.com/toyml/toy/toy/engine"
	"github.com/toyml/toy/toy/models/llama"
	"github.com/toyml/toy/toy/recipes"
)

// A one-layer Llama learns to continue a repeating sequence.
func ExampleNewFromScratch() {
	cfg := llama.Config{Arch: "llama", VocabSize: 32, ContextLength: 16, Embed: 16, Layers: 1, FFN: 32,
		Heads: 2, KVHeads: 2, HeadDim: 8, RopeDim: 8, RopeBase: 10000, NormEps: 1e-5}
	r, err := recipes.NewFromScratch(cfg, recipes.NewOptions(8).WithBatch(2).WithSteps(40).WithLR(1e-2))
	if err != nil {
		panic(err)
	}
	// Sequences of 0 1 2 … 7 0 1 2 …, starting at different offsets.
	seq := func(start int) []int32 {
		s := make([]int32, 9) // T+1 tokens: inputs and their next-token targets
		for i := range s {
			s[i] = int32((start + i) % 8)
		}
		return s
	}
	var losses []float32
	for step := range 40 {
		batch, err := engine.NewBatch([][]int32{seq(step), seq(step + 3)}, cfg.VocabSize, -1)
		if err != nil {
			panic(err)
		}
		loss, err := r.Step(batch)
		if err != nil {
			panic(err)
		}
		losses = append(losses, loss)
	}
	first, last := losses[0], losses[len(losses)-1]
	fmt.Printf("first loss %.1f, ln 32 = %.1f\n", first, math.Log(32)) // a uniform guess over 32 tokens
	fmt.Println("last loss < first/4:", last < first/4)                // 3.48 → 0.34
	fmt.Println("steps:", r.Steps)
	// Output:
	// first loss 3.5, ln 32 = 3.5
	// last loss < first/4: true
	// steps: 40
}

// Any model value trains: here one built by hand — a program's or
// notebook's own architecture is built and passed the same way.
func ExampleNewFromModel() {
	cfg := llama.Config{Arch: "llama", VocabSize: 32, ContextLength: 16, Embed: 16, Layers: 1, FFN: 32,
		Heads: 2, KVHeads: 2, HeadDim: 8, RopeDim: 8, RopeBase: 10000, NormEps: 1e-5}
	m := llama.NewRandom(cfg, 1)
	r, err := recipes.NewFromModel(m, recipes.NewOptions(8).WithSteps(1))
	if err != nil {
		panic(err)
	}
	batch, _ := engine.NewBatch([][]int32{{0, 1, 2, 3, 4, 5, 6, 7, 0}}, cfg.VocabSize, -1)
	loss, err := r.Step(batch)
	fmt.Println(len(r.Params) == len(m.Weights()), loss > 3, err)
	// Output: true true <nil>
}
