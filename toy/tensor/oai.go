// gpt-oss's clamped SwiGLU.

package tensor

import (
	"fmt"
	"math"
)

// SwiGLUOAI is gpt-oss's gated activation (OpenAI's clamped SwiGLU, llama.cpp's
// swiglu_oai), elementwise over gate and up of one shape:
//
//	x = min(gate, limit),  y = clamp(up, −limit, limit)
//	out = x·σ(alpha·x)·(y + 1)
//
// (gpt-oss: alpha 1.702, limit 7).
func SwiGLUOAI(gate, up *Tensor, alpha, limit float32) *Tensor {
	mustF32("SwiGLUOAI", "gate", gate)
	mustF32("SwiGLUOAI", "up", up)
	if gate.Len() != up.Len() {
		panic(fmt.Sprintf("SwiGLUOAI: gate %v and up %v differ", gate.shape, up.shape))
	}
	b := beFor(gate, up)
	out := newOut(b, gate.shape...)
	b.SwiGLUOAI(out, gate, up, alpha, limit)
	record("SwiGLUOAI", out, func(gr *Tensor) []*Tensor {
		dg, du := like(gr), like(gr)
		for i, gv := range gate.f32 {
			x, y := min(gv, limit), max(-limit, min(up.f32[i], limit))
			s := sigmoid32(alpha * x)
			if gv < limit {
				dg.f32[i] = gr.f32[i] * (s + alpha*x*s*(1-s)) * (y + 1)
			}
			if u := up.f32[i]; u > -limit && u < limit {
				du.f32[i] = gr.f32[i] * x * s
			}
		}
		return []*Tensor{dg, du}
	}, gate, up)
	return out
}

// SwiGLUOAI is the pure-Go clamped SwiGLU.
func (Go) SwiGLUOAI(out, gate, up *Tensor, alpha, limit float32) {
	for i, g := range gate.f32 {
		out.f32[i] = swigluOAI(g, up.f32[i], alpha, limit)
	}
}

// swigluOAI is one element of SwiGLUOAI, in llama.cpp's order of
// operations: x/(1 + e^{−αx})·(y + 1).
func swigluOAI(g, u, alpha, limit float32) float32 {
	x, y := min(g, limit), max(-limit, min(u, limit))
	return x / (1 + float32(math.Exp(float64(alpha*-x)))) * (y + 1)
}

func sigmoid32(v float32) float32 { return 1 / (1 + float32(math.Exp(float64(-v)))) }
