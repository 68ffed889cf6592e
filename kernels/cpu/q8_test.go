package cpu

import (
	"math/rand/v2"
	"testing"

	"github.com/toyml/toy/toy/tensor"
)

// TestQ8RowsIndependentOfM: a batched decode step (toy serve --parallel)
// multiplies the rows of several slots at once, and a slot's logits must not
// depend on which slots share its step: each row of an M-row Q8_0 product is
// bit-identical to the product of that row alone, on every variant, for each
// kernel path (one row, the few-row tiles, the packed tiles of prefill), for
// N not a multiple of the tile width, on one and on two workers.
func TestQ8RowsIndependentOfM(t *testing.T) {
	defer tensor.SetThreads(tensor.Threads())
	r := rand.New(rand.NewPCG(25, 8))
	for name, b := range backends(t) {
		b = b.Exact()
		for _, s := range [][2]int{{576, 1536}, {96, 203}, {64, 37}, {32, 5}, {160, 16}} {
			K, N := s[0], s[1]
			w := encode(t, randTensor(r, N, K), tensor.Q8_0)
			x := randTensor(r, 20, K)
			for _, threads := range []int{1, 2} {
				tensor.SetThreads(threads)
				one := tensor.New(1, N)
				alone := make([][]float32, 20)
				for m := range alone {
					b.MatMul(one, tensor.FromFloat32(x.Data()[m*K:(m+1)*K], 1, K), w)
					alone[m] = append([]float32(nil), one.Data()...)
				}
				for M := 1; M <= 20; M++ {
					out := tensor.New(M, N)
					b.MatMul(out, tensor.FromFloat32(x.Data()[:M*K], M, K), w)
					for m := range M {
						if i, ok := identical(out.Data()[m*N:(m+1)*N], alone[m]); !ok {
							t.Fatalf("%s [%d %d]·[%d %d]ᵀ on %d threads: row %d element %d = %v, alone %v",
								name, M, K, N, K, threads, m, i, out.Data()[m*N+i], alone[m][i])
						}
					}
				}
			}
		}
		t.Logf("%s: rows bit-identical for M = 1..20", name)
	}
}
