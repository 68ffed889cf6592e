package serve

import (
	"fmt"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/toyml/toy/toy"
)

// BenchmarkParallel measures the aggregate tokens per second of C clients
// at once, each a 32-token prompt and 64 greedy tokens, in process (no
// sockets), on the model TOY_BENCH_MODEL names (tests/bench's
// SmolLM2-shaped files), with --parallel C. It is the server's share of
// tests/bench/parallel.sh: what a step costs beside its forward pass.
func BenchmarkParallel(b *testing.B) {
	path := os.Getenv("TOY_BENCH_MODEL")
	if path == "" {
		b.Skip("TOY_BENCH_MODEL names no model")
	}
	m, err := toy.Load(path)
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close()
	for _, C := range []int{1, 8} {
		b.Run(fmt.Sprintf("C=%d", C), func(b *testing.B) {
			s, err := New(m, Options{Parallel: C, ContextSize: 128})
			if err != nil {
				b.Fatal(err)
			}
			prompt := make([]string, 32)
			for i := range prompt {
				prompt[i] = fmt.Sprint(100 + i)
			}
			tokens := 0
			for range b.N {
				var wg sync.WaitGroup
				for c := range C {
					wg.Go(func() {
						body := fmt.Sprintf(`{"prompt": [%d, %s], "max_tokens": 64, "temperature": 0, "ignore_eos": true, "stream": true}`, 200+c, strings.Join(prompt, ", "))
						req := httptest.NewRequest("POST", "/v1/completions", strings.NewReader(body))
						req.Header.Set("Content-Type", "application/json")
						rec := httptest.NewRecorder()
						s.ServeHTTP(rec, req)
						if rec.Code != 200 {
							b.Errorf("status %d: %s", rec.Code, rec.Body)
						}
					})
				}
				wg.Wait()
				tokens += 64 * C
			}
			b.ReportMetric(float64(tokens)/b.Elapsed().Seconds(), "tok/s")
		})
	}
}
