package tensor

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestGELUErfByHand(t *testing.T) {
	// Φ(0) = ½, Φ(1) = 0.8413447, Φ(−1) = 0.1586553, Φ(2) = 0.9772499:
	// GELU(x) = x·Φ(x) = 0, 0.8413447, −0.1586553, 1.9544997.
	x := FromFloat32([]float32{0, 1, -1, 2}, 1, 4)
	want := []float32{0, 0.8413447, -0.1586553, 1.9544997}
	near(t, "GELUErf", GELUErf(x).Data(), want, 1e-7)
	// The tanh form differs at x = 1 by 1.5e-4 (0.841192 vs 0.841345): the
	// reason the exact op exists.
	if d := geluErf(1) - geluExact(1); d < 1e-4 {
		t.Fatalf("exact and tanh GELU at 1 differ by %v, expected ≥ 1e-4", d)
	}
}

func TestGELUErfGradient(t *testing.T) {
	// d/dx x·Φ(x) = Φ(x) + x·φ(x): at 0, ½; at 1, 0.8413447 + 0.2419707 = 1.0833155.
	g := grads(func(in []*Tensor) *Tensor { return GELUErf(in[0]) }, FromFloat32([]float32{0, 1}, 1, 2))
	near(t, "dGELUErf", g[0], []float32{0.5, 1.0833155}, 1e-6)
	r := rand.New(rand.NewPCG(7, 7))
	gradCheck(t, "GELUErf", func(in []*Tensor) *Tensor { return GELUErf(in[0]) }, randTensor(r, 3, 5))
	// Far out the op is the identity (x ≫ 0) or 0 (x ≪ 0), and so is its slope.
	g = grads(func(in []*Tensor) *Tensor { return GELUErf(in[0]) }, FromFloat32([]float32{-12, 12}, 1, 2))
	if math.Abs(float64(g[0][0])) > 1e-12 || g[0][1] != 1 {
		t.Fatalf("slopes at ∓12: %v, want 0 and 1", g[0])
	}
}
