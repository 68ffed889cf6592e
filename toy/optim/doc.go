// Package optim holds AdamW, gradient clipping by global norm, and learning
// rate schedules (Constant; Cosine, with a linear warm-up).
//
// AdamW (Loshchilov & Hutter 2019, https://arxiv.org/abs/1711.05101) keeps
// two moving averages per parameter and decays weights separately from the
// gradient step:
//
//	m ← β1·m + (1−β1)·g          v ← β2·v + (1−β2)·g²
//	m̂ = m/(1−β1ᵗ)                v̂ = v/(1−β2ᵗ)
//	θ ← θ − lr·(m̂/(√v̂ + ε) + λ·θ)     (λ only for parameters with Decay set)
//
// ClipGradNorm scales every gradient by c/(‖g‖+10⁻⁶) when ‖g‖ > c, ‖g‖ the
// L2 norm of all gradients taken as one vector.
//
// # Shapes
//
// The optimizer is elementwise and needs no axes: a Param's tensor, of any
// shape, is read as its N elements in row-major order, and its gradient and
// the moments m and v (AdamW.M, AdamW.V, by parameter name) are N values
// each in the same order. The arithmetic is float64, stored as F32.
package optim
