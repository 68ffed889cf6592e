package tensor

import (
	"math/rand/v2"
	"testing"
)

// Row-count independence: a row's result must not depend on its batch.
func TestMatMulRowsIndependentOfBatch(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	x, w := randTensor(r, 7, 36), randTensor(r, 5, 36)
	all := MatMul(x, w)
	for m := 0; m < 7; m++ {
		one := MatMul(x.Slice(m, m+1), w)
		for n := 0; n < 5; n++ {
			if one.Data()[n] != all.Row(m)[n] {
				t.Fatalf("row %d col %d: alone %v, in a batch %v", m, n, one.Data()[n], all.Row(m)[n])
			}
		}
	}
}

func benchMatMul(b *testing.B, M int, dt DType) {
	defer SetThreads(Threads())
	SetThreads(1)
	r := rand.New(rand.NewPCG(1, 1))
	x, w := randTensor(r, M, 576), randTensor(r, 1536, 576)
	wt, _ := FromBytes(dt, EncodeRow(nil, w.Data(), dt), 1536, 576)
	b.SetBytes(int64(len(wt.raw) + 4*len(wt.f32)))
	for i := 0; i < b.N; i++ {
		MatMul(x, wt)
	}
}

func BenchmarkMatVecF32(b *testing.B)   { benchMatMul(b, 1, F32) }
func BenchmarkMatVecQ8(b *testing.B)    { benchMatMul(b, 1, Q8_0) }
func BenchmarkMatVecF16(b *testing.B)   { benchMatMul(b, 1, F16) }
func BenchmarkMatMul64F32(b *testing.B) { benchMatMul(b, 64, F32) }
func BenchmarkMatMul64Q8(b *testing.B)  { benchMatMul(b, 64, Q8_0) }
