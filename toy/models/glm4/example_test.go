package glm4_test

import (
	"fmt"

	"github.com/toyml/toy/toy/models/glm4"
)

func ExampleNewRandom() {
	// A GLM-4.5 in miniature: a dense layer, then mixtures of 4 experts, 2
	// a token, beside one shared expert.
	cfg := glm4.Config{Arch: glm4.ArchMoE, VocabSize: 32, ContextLength: 16, Embed: 16, Layers: 2, FFN: 32,
		Heads: 2, KVHeads: 1, HeadDim: 8, RopeDim: 4, RopeBase: 1e6, NormEps: 1e-5, QKVBias: true,
		DenseLayers: 1, Experts: 4, ExpertsUsed: 2, ExpertFFN: 8, SharedExperts: 1, ExpertWeightsNorm: true, ExpertWeightsScale: 2.5}
	if err := cfg.Validate(); err != nil {
		panic(err)
	}
	m := glm4.NewRandom(cfg, 1) // the same seed gives the same weights
	// 2·32·16 embedding and output + 2·(2·16 norms + 16·16 + 2·8·16 + 16·16 projections + 16 + 2·8 biases)
	// + 3·32·16 dense SwiGLU + (4·16 router + 4 choice bias + 3·4·8·16 experts + 3·8·16 shared) + 16 final norm
	// = 1024 + 1664 + 1536 + 1988 + 16
	fmt.Println("parameters:", m.Card().ParamCount, "tensors:", len(m.Weights()))
	fmt.Println("layer 0 experts:", m.MoE(0) != nil, "layer 1 experts:", m.MoE(1) != nil)

	cache := m.NewCache(16)
	logits := m.Forward([]int32{1, 2, 3}, cache) // prefill: [T=3, V=32]
	fmt.Println(logits.Shape(), "cached:", cache.Len())
	logits = m.Forward([]int32{4}, cache) // one decode step at position 3
	fmt.Println(logits.Shape(), "cached:", cache.Len())
	// Output:
	// parameters: 6228 tensors: 32
	// layer 0 experts: false layer 1 experts: true
	// [3 32] cached: 3
	// [1 32] cached: 4
}
