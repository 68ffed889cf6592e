// The exact GELU, x·Φ(x) with Φ the standard normal CDF, as BERT and ViT
// (Hugging Face's hidden_act "gelu", PyTorch's F.gelu) use it.

package tensor

import "math"

// GELUErf returns the exact GELU (Hendrycks & Gimpel 2016), elementwise:
//
//	GELU(x) = x·Φ(x) = ½x(1 + erf(x/√2))
//
// GELU is the tanh approximation of it, ½x(1 + tanh(√(2/π)(x + 0.044715x³))),
// which differs by up to ~5e-4 — enough to fail a 1e-4 gate against a
// checkpoint trained with the exact form. Each value is computed in float64
// and rounded once. Its derivative, with φ the standard normal density:
//
//	d/dx x·Φ(x) = Φ(x) + x·φ(x),   φ(x) = exp(−x²/2)/√(2π)
//
// While a tape records a gradient through x, the values are Go's, on the
// host, whatever the backend (what training has always computed: a
// device's erf may round differently in the last place).
func GELUErf(x *Tensor) *Tensor {
	mustF32("GELUErf", "x", x)
	b := beFor(x)
	if Recording() && x.requiresGrad {
		b = Go{}
		x.hostRead()
	}
	out := newOut(b, x.shape...)
	b.GELUErf(out, x)
	record("GELUErf", out, func(g *Tensor) []*Tensor {
		d := like(g)
		for i, v := range x.f32 {
			d.f32[i] = g.f32[i] * geluErfGrad(v)
		}
		return []*Tensor{d}
	}, x)
	return out
}

// GELUErf is the pure-Go exact GELU.
func (Go) GELUErf(out, x *Tensor) { geluErfRows(out.f32, x.f32) }

func geluErfRows(out, x []float32) {
	for i, v := range x {
		out[i] = geluErf(v)
	}
}

// geluErf is ½x(1 + erf(x/√2)) in float64, rounded to float32.
func geluErf(x float32) float32 {
	v := float64(x)
	return float32(0.5 * v * (1 + math.Erf(v/math.Sqrt2)))
}

// geluErfGrad is Φ(x) + x·φ(x).
func geluErfGrad(x float32) float32 {
	v := float64(x)
	cdf := 0.5 * (1 + math.Erf(v/math.Sqrt2))
	pdf := math.Exp(-0.5*v*v) / math.Sqrt(2*math.Pi)
	return float32(cdf + v*pdf)
}
