package gemma_test

import (
	"fmt"
	"math"

	"github.com/toyml/toy/toy/models/gemma"
)

func ExampleNewRandom() {
	cfg := gemma.Config{Arch: "gemma2", VocabSize: 32, ContextLength: 16, Embed: 16, Layers: 2, FFN: 32, Heads: 2, KVHeads: 1, HeadDim: 8,
		RopeBase: 10000, NormEps: 1e-6, Window: 4, AttnSoftcap: 50, FinalSoftcap: 30, QueryScale: 1 / float32(math.Sqrt(8)),
		TiedOutput: true}
	if err := cfg.Validate(); err != nil {
		panic(err)
	}
	m := gemma.NewRandom(cfg, 1) // the same seed gives the same weights
	// 32·16 embedding + 2·(16·16 + 2·16·8 + 16·16 attention + 3·32·16 GeGLU + 4·16 norms) + 16
	fmt.Println("parameters:", m.Card().ParamCount, "sliding layers:", cfg.Sliding(0), cfg.Sliding(1))

	cache := m.NewCache(16)
	logits := m.Forward([]int32{1, 2, 3, 4, 5, 6}, cache) // layer 0 sees the last 4 positions only
	fmt.Println(logits.Shape(), "cached:", cache.Len())
	worst := 0.0
	for _, z := range logits.Data() {
		worst = max(worst, math.Abs(float64(z)))
	}
	fmt.Println("logits within the soft cap:", worst < 30)
	// Output:
	// parameters: 5264 sliding layers: true false
	// [6 32] cached: 6
	// logits within the soft cap: true
}
