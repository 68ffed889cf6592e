// AdamW, gradient clipping and the learning-rate schedules.

package optim

import (
	"fmt"
	"math"

	"github.com/toyml/toy/toy/tensor"
)

// Param is one trainable tensor with its name (for checkpoints) and whether
// weight decay applies to it (matrices yes; norms and biases no, as in GPT-2
// and Llama training).
type Param struct {
	Name  string
	T     *tensor.Tensor
	Decay bool
}

// AdamW is the optimizer. Its exported fields are the hyperparameters; the
// moment estimates are in M and V, by parameter name, so that checkpoints can
// save and restore them.
type AdamW struct {
	Beta1, Beta2 float64 // 0.9, 0.95 by default
	Eps          float64 // 1e-8
	WeightDecay  float64 // λ, 0.1
	Step         int     // updates done so far (t)

	M, V map[string][]float32
}

// NewAdamW returns AdamW with β1 0.9, β2 0.95, ε 1e-8 and weight decay 0.1.
func NewAdamW() *AdamW {
	return &AdamW{Beta1: 0.9, Beta2: 0.95, Eps: 1e-8, WeightDecay: 0.1,
		M: map[string][]float32{}, V: map[string][]float32{}}
}

// Update applies one AdamW step with learning rate lr to every parameter
// that has a gradient, then clears the gradients.
func (o *AdamW) Update(params []Param, lr float64) {
	o.Step++
	bc1 := 1 - math.Pow(o.Beta1, float64(o.Step))
	bc2 := 1 - math.Pow(o.Beta2, float64(o.Step))
	for _, p := range params {
		g := p.T.Grad()
		if g == nil {
			continue
		}
		w, gd := p.T.Data(), g.Data()
		m, v := o.M[p.Name], o.V[p.Name]
		if m == nil {
			m, v = make([]float32, len(w)), make([]float32, len(w))
			o.M[p.Name], o.V[p.Name] = m, v
		}
		decay := 0.0
		if p.Decay {
			decay = o.WeightDecay
		}
		for i := range w {
			gi := float64(gd[i])
			mi := o.Beta1*float64(m[i]) + (1-o.Beta1)*gi
			vi := o.Beta2*float64(v[i]) + (1-o.Beta2)*gi*gi
			m[i], v[i] = float32(mi), float32(vi)
			wi := float64(w[i])
			wi -= lr * (mi/bc1/(math.Sqrt(vi/bc2)+o.Eps) + decay*wi)
			w[i] = float32(wi)
		}
		p.T.ZeroGrad()
	}
}

// ClipGradNorm scales all gradients so that their global L2 norm is at most
// maxNorm, and returns the norm before clipping.
func ClipGradNorm(params []Param, maxNorm float64) float64 {
	var ss float64
	for _, p := range params {
		if g := p.T.Grad(); g != nil {
			for _, v := range g.Data() {
				ss += float64(v) * float64(v)
			}
		}
	}
	norm := math.Sqrt(ss)
	if maxNorm > 0 && norm > maxNorm {
		s := float32(maxNorm / (norm + 1e-6))
		for _, p := range params {
			if g := p.T.Grad(); g != nil {
				d := g.Data()
				for i := range d {
					d[i] *= s
				}
			}
		}
	}
	return norm
}

// Schedule maps a step (from 0) to a learning rate.
type Schedule interface {
	LR(step int) float64
}

// Constant is a fixed learning rate.
type Constant float64

// LR returns the rate.
func (c Constant) LR(int) float64 { return float64(c) }

// Cosine warms up linearly to Max over Warmup steps (step s < Warmup gets
// Max·(s+1)/Warmup, so step 0 already moves), then follows a cosine from Max
// down to Min at step Total (and stays there).
type Cosine struct {
	Max, Min      float64
	Warmup, Total int
}

// LR returns the rate at step.
func (c Cosine) LR(step int) float64 {
	if step < c.Warmup {
		return c.Max * float64(step+1) / float64(c.Warmup)
	}
	if step >= c.Total || c.Total <= c.Warmup {
		return c.Min
	}
	p := float64(step-c.Warmup) / float64(c.Total-c.Warmup)
	return c.Min + 0.5*(c.Max-c.Min)*(1+math.Cos(math.Pi*p))
}

// String describes the schedule.
func (c Cosine) String() string {
	return fmt.Sprintf("cosine(max %g, min %g, warmup %d, total %d)", c.Max, c.Min, c.Warmup, c.Total)
}
