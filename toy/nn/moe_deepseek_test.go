package nn

import (
	"math"
	"slices"
	"testing"

	"github.com/toyml/toy/toy/tensor"
)

// Group-limited routing by hand: 8 experts in 4 groups of 2 with scores
//
//	[0.1 0.5 | 0.3 0.3 | 0.9 0.0 | 0.2 0.2]
//
// score the groups by their best two, 0.6, 0.6, 0.9, 0.4; the best two
// groups are 2 and 0 (0 before 1 on the tie), so k = 3 picks experts 4, 1
// and 0 — where ungrouped routing would pick 4, 1 and 2.
func TestRouteGroupLimited(t *testing.T) {
	p := []float32{0.1, 0.5, 0.3, 0.3, 0.9, 0.0, 0.2, 0.2}
	chosen := func(groups, used int) []int {
		var out []int
		for _, e := range tensor.TopK(tensor.FromFloat32(p, 1, 8), 3, groups, used).Int32s() {
			out = append(out, int(e))
		}
		return out
	}
	if got := chosen(4, 2); !slices.Equal(got, []int{0, 1, 4}) {
		t.Errorf("grouped: experts %v, want [0 1 4]", got)
	}
	if got := chosen(0, 0); !slices.Equal(got, []int{1, 2, 4}) {
		t.Errorf("ungrouped: experts %v, want [1 2 4]", got)
	}
}

// DeepSeek-V3's router: sigmoid scores, a bias that only chooses, the
// chosen scores divided by their sum, times a scale, and an ungated shared
// expert, checked against the formula element by element:
//
//	y = s · Σ_{e ∈ S} σ(l_e)/Σ_{e' ∈ S} σ(l_e') · expert_e(x) + shared(x),
//	S = the k largest σ(l_e) + b_e
func TestMoESigmoidNormalisedScaledShared(t *testing.T) {
	const D, F, E, k, T = 8, 6, 4, 2, 5
	m := randomMoE(D, F, E, k, 11)
	in := NewInit(12)
	m.Sigmoid, m.Normalize, m.Scale, m.SharedUngated = true, true, 2.5, true
	m.Bias = tensor.FromFloat32([]float32{0, 0, 0, 2}, E) // expert 3 is always chosen
	m.SharedGate, m.SharedUp, m.SharedDown = in.Linear(F, D, 0.5, false), in.Linear(F, D, 0.5, false), in.Linear(D, F, 0.5, false)
	x := in.Normal(1, T, D)
	if err := m.Check(D); err != nil {
		t.Fatal(err)
	}
	y := m.Forward(x)
	shared := (&SwiGLU{Gate: m.SharedGate, Up: m.SharedUp, Down: m.SharedDown}).Forward(x)
	logits := m.Router.Forward(x)
	for t0 := range T {
		sig := make([]float64, E)
		for e, l := range logits.Row(t0) {
			sig[e] = 1 / (1 + math.Exp(-float64(l)))
		}
		best := 0 // the bias puts expert 3 first; the other is the best of 0, 1, 2
		for e := 1; e < 3; e++ {
			if sig[e] > sig[best] {
				best = e
			}
		}
		sum := sig[best] + sig[3]
		want := slices.Clone(shared.Row(t0))
		for _, e := range []int{best, 3} {
			for i, v := range expertOf(m, e, x.Row(t0)) {
				want[i] += float32(2.5 * sig[e] / sum * float64(v))
			}
		}
		for i := range want {
			if d := math.Abs(float64(y.Row(t0)[i] - want[i])); d > 1e-4 {
				t.Fatalf("token %d, feature %d: %g, want %g", t0, i, y.Row(t0)[i], want[i])
			}
		}
	}
}

// The Newton-step reciprocal behind the divided weights has the derivative
// of 1/s: router gradients agree with finite differences.
func TestMoESigmoidNormalisedGradients(t *testing.T) {
	const D, F, E, k, T = 4, 3, 4, 2, 6
	m := randomMoE(D, F, E, k, 13)
	m.Sigmoid, m.Normalize, m.Scale = true, true, 1.5
	x := NewInit(14).Normal(1, T, D).SetRequiresGrad(false)
	weight := NewInit(15).Normal(1, T, D).SetRequiresGrad(false)
	loss := func() *tensor.Tensor { return tensor.Sum(tensor.Mul(m.Forward(x), weight)) }
	r := m.Router.W.SetRequiresGrad(true)
	tape := tensor.NewTape()
	tensor.Record(tape)
	l := loss()
	tensor.Record(nil)
	tape.Backward(l)
	const h = 1e-3
	d := r.Data()
	for i := range d {
		old := d[i]
		d[i] = old + h
		up := float64(loss().Data()[0])
		d[i] = old - h
		down := float64(loss().Data()[0])
		d[i] = old
		num, got := (up-down)/(2*h), float64(r.Grad().Data()[i])
		if math.Abs(num-got) > 1e-2*math.Max(1, math.Abs(num)) {
			t.Fatalf("router [%d]: gradient %.5f, finite difference %.5f", i, got, num)
		}
	}
}
