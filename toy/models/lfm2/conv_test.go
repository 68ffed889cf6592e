package lfm2

import (
	"math"
	"testing"

	"github.com/toyml/toy/toy/nn"
	"github.com/toyml/toy/toy/tensor"
)

// The short convolution by hand, one channel (D = 1), identity projections
// but for W_in = [1; 1; 1] (b = c = h = x), taps [1, 2, 4]: u = x², and
// y_t = u_{t−2} + 2·u_{t−1} + 4·u_t; out = x ⊙ y. For x = [1, 2, 3]:
// u = [1, 4, 9], y = [4, 18, 45], out = [4, 36, 135]. Fed one token at a
// time through a cache, the same.
func TestShortConvByHand(t *testing.T) {
	s := &ShortConv{
		Conv: tensor.FromFloat32([]float32{1, 2, 4}, 1, 3),
		In:   &nn.Linear{W: tensor.FromFloat32([]float32{1, 1, 1}, 3, 1)},
		Out:  &nn.Linear{W: tensor.FromFloat32([]float32{1}, 1, 1)},
	}
	want := []float32{4, 36, 135}
	got := s.Forward(tensor.FromFloat32([]float32{1, 2, 3}, 3, 1), nil).Float32s()
	cache := &nn.KVCache{K: tensor.New(4, 1), V: tensor.New(1, 1)}
	for i, x := range []float32{1, 2, 3} {
		if v := s.Forward(tensor.FromFloat32([]float32{x}, 1, 1), cache).Float32s()[0]; v != want[i] {
			t.Errorf("token %d through the cache: %v, want %v", i, v, want[i])
		}
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("whole sequence: %v, want %v", got, want)
		}
	}
}

// Gradients reach the taps, both projections and the input through the
// shifted copies of u: they agree with finite differences.
func TestShortConvGradients(t *testing.T) {
	const D, L, T = 3, 3, 5
	in := nn.NewInit(41)
	s := &ShortConv{Conv: in.Normal(1, D, L), In: in.Linear(3*D, D, 0.5, false), Out: in.Linear(D, D, 0.5, false)}
	x := in.Normal(1, T, D)
	weight := nn.NewInit(42).Normal(1, T, D)
	loss := func() *tensor.Tensor { return tensor.Sum(tensor.Mul(s.Forward(x, nil), weight)) }
	params := []*tensor.Tensor{s.Conv, s.In.W, s.Out.W, x}
	for _, p := range params {
		p.SetRequiresGrad(true)
	}
	tape := tensor.NewTape()
	tensor.Record(tape)
	l := loss()
	tensor.Record(nil)
	tape.Backward(l)
	const h = 1e-3
	for n, p := range params {
		d := p.Data()
		for i := range d {
			old := d[i]
			d[i] = old + h
			up := float64(loss().Data()[0])
			d[i] = old - h
			down := float64(loss().Data()[0])
			d[i] = old
			num, got := (up-down)/(2*h), float64(p.Grad().Data()[i])
			if math.Abs(num-got) > 1e-2*math.Max(1, math.Abs(num)) {
				t.Fatalf("parameter %d [%d]: gradient %.5f, finite difference %.5f", n, i, got, num)
			}
		}
	}
}
