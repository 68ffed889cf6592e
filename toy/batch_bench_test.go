package toy_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/toyml/toy/toy"
	"github.com/toyml/toy/toy/engine"
)

// BenchmarkDecodeBatch measures decoding B sequences a step at a time in
// one batched pass (engine.NextBatch, what toy serve's slots do) against B
// passes one after another, on the model at $TOY_BENCH_MODEL (say
// tests/bench's SmolLM2-shaped Q8_0 file), after a 64-token prompt each:
//
//	TOY_BENCH_MODEL=/tmp/toy-bench-models/smollm2/smollm2-shape-q8_0.gguf go test -run - -bench DecodeBatch ./toy/
//
// tok/s is the tokens decoded per second over all B sequences.
func BenchmarkDecodeBatch(b *testing.B) {
	path := os.Getenv("TOY_BENCH_MODEL")
	if path == "" {
		b.Skip("set TOY_BENCH_MODEL to a GGUF file")
	}
	m, err := toy.Load(path)
	if err != nil {
		b.Fatal(err)
	}
	V := int32(m.Net.VocabSize())
	for _, B := range []int{1, 2, 3, 4, 8, 16} {
		for _, batched := range []bool{false, true} {
			if B == 1 && batched {
				continue
			}
			name := fmt.Sprintf("B=%d/one-by-one", B)
			if batched {
				name = fmt.Sprintf("B=%d/batched", B)
			}
			b.Run(name, func(b *testing.B) {
				sessions := make([]*engine.Session, B)
				ids := make([][]int32, B)
				for i := range sessions {
					sessions[i] = m.NewSession(64 + b.N + 1)
					prompt := make([]int32, 64)
					for t := range prompt {
						prompt[t] = int32(i*64+t) % V
					}
					if _, err := sessions[i].Next(prompt); err != nil {
						b.Fatal(err)
					}
					ids[i] = []int32{int32(i) % V}
				}
				b.ResetTimer()
				for range b.N {
					if batched {
						if _, err := engine.NextBatch(m.Net, sessions, ids); err != nil {
							b.Fatal(err)
						}
						continue
					}
					for i, s := range sessions {
						if _, err := s.Next(ids[i]); err != nil {
							b.Fatal(err)
						}
					}
				}
				b.ReportMetric(float64(B*b.N)/b.Elapsed().Seconds(), "tok/s")
			})
		}
	}
}
