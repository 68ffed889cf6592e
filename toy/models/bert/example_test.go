package bert_test

import (
	"fmt"
	"math"

	"github.com/toyml/toy/toy/models/bert"
)

func ExampleNewRandom() {
	cfg := bert.Config{Arch: "bert", VocabSize: 32, ContextLength: 16, Embed: 16, Layers: 1, FFN: 32,
		Heads: 2, TokenTypes: 2, NormEps: 1e-12, Pooling: bert.PoolCLS}
	if err := cfg.Validate(); err != nil {
		panic(err)
	}
	m := bert.NewRandom(cfg, 1) // the same seed gives the same weights
	// 32·16 tokens + 2·16 types + 16·16 positions + 2·16 embedding norm
	// + 4·(16·16 + 16) attention + (32·16 + 32) + (16·32 + 16) MLP + 4·16 norms = 832 + 2224
	fmt.Println("parameters:", m.Card().ParamCount, "tensors:", len(m.Weights()))

	ids := []int32{2, 17, 5, 3}        // [CLS] … [SEP], as the tokenizer adds them
	fmt.Println(m.Hidden(ids).Shape()) // one state per token: [T=4, D=16]
	e := m.Vector(ids)                 // mean of the 4 states
	var n float64
	for _, v := range e {
		n += float64(v) * float64(v)
	}
	fmt.Printf("%d values, length %.0f\n", len(e), math.Sqrt(n)) // a LayerNorm'd state (γ = 1, β = 0) has length √D
	// Output:
	// parameters: 3056 tensors: 21
	// [4 16]
	// 16 values, length 4
}
