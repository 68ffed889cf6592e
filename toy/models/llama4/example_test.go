package llama4_test

import (
	"fmt"

	"github.com/toyml/toy/toy/models/llama4"
	"github.com/toyml/toy/toy/nn"
)

func ExampleNewRandom() {
	cfg := llama4.Config{VocabSize: 32, ContextLength: 16, Embed: 16, Layers: 4, FFN: 24, ExpertFFN: 8, Experts: 4,
		ExpertsUsed: 1, MoePeriod: 2, Heads: 2, KVHeads: 1, HeadDim: 8, RopeBase: 500000, NormEps: 1e-5,
		NoRopePeriod: 4, Chunk: 4, ChunkPeriod: 4, TempScale: 0.1, TempFloor: 4, TempOffset: 1, L2Norm: true}
	if err := cfg.Validate(); err != nil {
		panic(err)
	}
	m := llama4.NewRandom(cfg, 1) // the same seed gives the same weights
	// 2·32·16 embedding and output + 16 final norm; per layer 2·16 norms and
	// 768 attention (q and o 16 wide, k and v 8); layers 0 and 2 a SwiGLU of
	// width 24 (1152), layers 1 and 3 the mixture: router 64, 4 experts of
	// width 8 (1536) and the shared one (384)
	fmt.Println("parameters:", m.Card().ParamCount, "tensors:", len(m.Weights()))
	fmt.Println("RoPE in layer 3:", m.Blocks[3].(*nn.Block).Attn.RoPE != nil, "chunk in layer 0:", m.Blocks[0].(*nn.Block).Attn.Options.Chunk)

	cache := m.NewCache(16)
	logits := m.Forward([]int32{1, 2, 3, 4, 5, 6}, cache) // prefill across a chunk: [T=6, V=32]
	fmt.Println(logits.Shape(), "cached:", cache.Len())
	logits = m.Forward([]int32{7}, cache) // one decode step at position 6
	fmt.Println(logits.Shape(), "cached:", cache.Len())
	// Output:
	// parameters: 10512 tensors: 47
	// RoPE in layer 3: false chunk in layer 0: 4
	// [6 32] cached: 6
	// [1 32] cached: 7
}
