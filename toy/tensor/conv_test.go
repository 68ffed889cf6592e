package tensor

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// convComposed is CausalConv built from the package's other ops, tap by
// tap, as nn composed it before the op existed: the same products added in
// the same order, so the results must be the same bits.
func convComposed(past, x, taps *Tensor) *Tensor {
	T, C, L := x.Rows(), x.Cols(), taps.Cols()
	if past == nil {
		past = New(1, (L-1)*C)
	}
	flat := ConcatColumns(past, Reshape(x, 1, T*C))
	var y *Tensor
	for j := range L {
		tap := Reshape(Columns(flat, j*C, (j+T)*C), T, C)
		if p := Mul(tap, Reshape(Columns(taps, j, j+1), 1, C)); y == nil {
			y = p
		} else {
			y = Add(y, p)
		}
	}
	return y
}

// CausalConv by hand on one channel, then against the composition (bit for
// bit, with and without a past, one position and many), and its gradients
// against finite differences.
func TestCausalConv(t *testing.T) {
	// taps (1, 2, 3), past (10, 20), x (1, 2, 3):
	// y_0 = 1·10 + 2·20 + 3·1 = 53, y_1 = 20 + 2 + 6 = 28, y_2 = 1 + 4 + 9 = 14.
	y := CausalConv(FromFloat32([]float32{10, 20}, 1, 2), FromFloat32([]float32{1, 2, 3}, 3, 1), FromFloat32([]float32{1, 2, 3}, 1, 3))
	near(t, "by hand", y.Data(), []float32{53, 28, 14}, 0)
	y = CausalConv(nil, FromFloat32([]float32{1, 2, 3}, 3, 1), FromFloat32([]float32{1, 2, 3}, 1, 3))
	near(t, "by hand, no past", y.Data(), []float32{3, 8, 14}, 0)

	r := rand.New(rand.NewPCG(4, 4))
	for _, c := range []struct{ T, C, L int }{{1, 96, 4}, {7, 33, 4}, {2, 16, 3}, {70, 8, 4}, {5, 4, 2}} {
		x, taps, past := randTensor(r, c.T, c.C), randTensor(r, c.C, c.L), randTensor(r, 1, (c.L-1)*c.C)
		for _, p := range []*Tensor{nil, past} {
			got, want := CausalConv(p, x, taps).Data(), convComposed(p, x, taps).Data()
			if !slices.Equal(got, want) {
				t.Errorf("%+v, past %v: differs from the composed ops", c, p != nil)
			}
		}
	}
	gradCheck(t, "CausalConv", func(in []*Tensor) *Tensor { return CausalConv(in[0], in[1], in[2]) },
		randTensor(r, 1, 3*5), randTensor(r, 6, 5), randTensor(r, 5, 4))
	gradCheck(t, "CausalConv without a past", func(in []*Tensor) *Tensor { return CausalConv(nil, in[0], in[1]) },
		randTensor(r, 6, 5), randTensor(r, 5, 4))
}
