package nn

import (
	"math"
	"slices"
	"testing"

	"github.com/toyml/toy/toy/tensor"
)

// Llama 4's mixture, checked against its formula element by element: the k
// experts of the largest router logits l, each run on its input weighted
// by σ(l_e), their outputs added as they are, and an ungated shared expert:
//
//	y = Σ_{e ∈ top-k(l)} expert_e(σ(l_e)·x) + shared(x)
//
// Weighing the outputs instead, Σ σ(l_e)·expert_e(x), differs: SiLU is not
// linear (checked too), so the place of the weight matters.
func TestMoEWeightedInputs(t *testing.T) {
	const D, F, E, T = 8, 6, 4, 5
	for _, k := range []int{1, 2} {
		m := randomMoE(D, F, E, k, 31)
		in := NewInit(32)
		m.Sigmoid, m.WeightInputs, m.SharedUngated = true, true, true
		m.SharedGate, m.SharedUp, m.SharedDown = in.Linear(F, D, 0.5, false), in.Linear(F, D, 0.5, false), in.Linear(D, F, 0.5, false)
		x := in.Normal(1, T, D).SetRequiresGrad(false)
		if err := m.Check(D); err != nil {
			t.Fatal(err)
		}
		y := m.Forward(x)
		shared := (&SwiGLU{Gate: m.SharedGate, Up: m.SharedUp, Down: m.SharedDown}).Forward(x)
		logits := m.Router.Forward(x)
		worstAfter := 0.0 // how far weighing the outputs lands from y
		for t0 := range T {
			l := logits.Row(t0)
			order := []int{0, 1, 2, 3}
			slices.SortFunc(order, func(a, b int) int { return -cmpF(l[a], l[b]) })
			want, after := slices.Clone(shared.Row(t0)), slices.Clone(shared.Row(t0))
			for _, e := range order[:k] {
				p := float32(1 / (1 + math.Exp(-float64(l[e]))))
				xe := make([]float32, D)
				for i, v := range x.Row(t0) {
					xe[i] = p * v
				}
				for i, v := range expertOf(m, e, xe) {
					want[i] += v
				}
				for i, v := range expertOf(m, e, x.Row(t0)) {
					after[i] += p * v
				}
			}
			for i := range want {
				if d := math.Abs(float64(y.Row(t0)[i] - want[i])); d > 1e-4 {
					t.Fatalf("k = %d, token %d, feature %d: %g, want %g", k, t0, i, y.Row(t0)[i], want[i])
				}
				worstAfter = max(worstAfter, math.Abs(float64(y.Row(t0)[i]-after[i])))
			}
		}
		if worstAfter < 1e-2 {
			t.Errorf("k = %d: weighing the outputs instead moves y by only %.2e", k, worstAfter)
		}
	}
}

func cmpF(a, b float32) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// Gradients reach the router through the weighted inputs σ(l_e)·x, and the
// input through both the weights and the experts: they agree with finite
// differences.
func TestMoEWeightedInputsGradients(t *testing.T) {
	const D, F, E, k, T = 4, 3, 4, 2, 6
	m := randomMoE(D, F, E, k, 33)
	m.Sigmoid, m.WeightInputs = true, true
	x := NewInit(34).Normal(1, T, D)
	weight := NewInit(35).Normal(1, T, D).SetRequiresGrad(false)
	loss := func() *tensor.Tensor { return tensor.Sum(tensor.Mul(m.Forward(x), weight)) }
	params := []*tensor.Tensor{m.Router.W, m.Gate, x}
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
