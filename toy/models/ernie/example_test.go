package ernie_test

import (
	"fmt"

	"github.com/toyml/toy/toy/models/ernie"
)

func ExampleNewRandom() {
	// An ERNIE-4.5-21B-A3B in miniature: a dense layer, then a mixture of
	// 4 experts, 2 a token, chosen with a bias, beside a shared expert.
	cfg := ernie.Config{Arch: ernie.ArchMoE, VocabSize: 32, ContextLength: 16, Embed: 16, Layers: 2, FFN: 32,
		Heads: 2, KVHeads: 1, HeadDim: 8, RopeBase: 500000, NormEps: 1e-5,
		DenseLayers: 1, MoeStep: 1, Experts: 4, ExpertsUsed: 2, ExpertFFN: 8, SharedFFN: 16, ExpertBias: true}
	if err := cfg.Validate(); err != nil {
		panic(err)
	}
	m := ernie.NewRandom(cfg, 1) // the same seed gives the same weights
	// 2·32·16 embedding and output + 16 final norm + 2·(2·16 norms + 2·16·16 + 2·8·16 projections)
	// + 3·32·16 dense SwiGLU + (4·16 router + 4 choice bias + 3·4·8·16 experts + 3·16·16 shared)
	// = 1024 + 16 + 1600 + 1536 + 2372
	fmt.Println("parameters:", m.Card().ParamCount, "tensors:", len(m.Weights()))
	fmt.Println("layer 0 experts:", m.MoE(0) != nil, "layer 1 experts:", m.MoE(1) != nil)

	cache := m.NewCache(16)
	logits := m.Forward([]int32{1, 2, 3}, cache) // prefill: [T=3, V=32]
	fmt.Println(logits.Shape(), "cached:", cache.Len())
	logits = m.Forward([]int32{4}, cache) // one decode step at position 3
	fmt.Println(logits.Shape(), "cached:", cache.Len())
	// Output:
	// parameters: 6548 tensors: 26
	// layer 0 experts: false layer 1 experts: true
	// [3 32] cached: 3
	// [1 32] cached: 4
}
