package optim

import (
	"math"
	"testing"

	"github.com/toyml/toy/toy/tensor"
)

func param(name string, w, g float32, decay bool) Param {
	t := tensor.FromFloat32([]float32{w}, 1).SetRequiresGrad(true)
	// A gradient is set the way Backward sets it: through a recorded op.
	tape := tensor.NewTape()
	tensor.Record(tape)
	loss := tensor.Scale(t, g) // d loss / d w = g
	tensor.Record(nil)
	tape.Backward(loss)
	return Param{Name: name, T: t, Decay: decay}
}

// The first AdamW step moves each weight by lr·sign(g): m̂ = g and v̂ = g²
// after bias correction, so m̂/√v̂ = ±1. Decay adds lr·λ·w.
func TestAdamWFirstStepByHand(t *testing.T) {
	o := NewAdamW()
	ps := []Param{param("a", 1, 0.5, false), param("b", 1, -2, true)}
	o.Update(ps, 0.1)
	if got := ps[0].T.Data()[0]; math.Abs(float64(got)-0.9) > 1e-6 {
		t.Errorf("a = %v, want 1 − 0.1 = 0.9", got)
	}
	if got := ps[1].T.Data()[0]; math.Abs(float64(got)-(1+0.1-0.1*0.1)) > 1e-6 {
		t.Errorf("b = %v, want 1 + 0.1 − 0.1·0.1·1 = 1.09", got)
	}
	if ps[0].T.Grad() != nil {
		t.Error("Update left the gradient")
	}
}

func TestClipGradNorm(t *testing.T) {
	ps := []Param{param("a", 0, 3, false), param("b", 0, 4, false)}
	if n := ClipGradNorm(ps, 1); math.Abs(n-5) > 1e-6 {
		t.Errorf("norm %v, want 5", n)
	}
	if a, b := ps[0].T.Grad().Data()[0], ps[1].T.Grad().Data()[0]; math.Abs(float64(a)-0.6) > 1e-5 || math.Abs(float64(b)-0.8) > 1e-5 {
		t.Errorf("clipped to %v, %v; want 0.6, 0.8", a, b)
	}
}

func TestCosine(t *testing.T) {
	c := Cosine{Max: 1, Min: 0.1, Warmup: 10, Total: 110}
	for _, x := range []struct {
		step int
		want float64
	}{{0, 0.1}, {9, 1}, {10, 1}, {60, 0.55}, {110, 0.1}, {500, 0.1}} {
		if got := c.LR(x.step); math.Abs(got-x.want) > 1e-9 {
			t.Errorf("LR(%d) = %v, want %v", x.step, got, x.want)
		}
	}
}
