// The gated delta rule (Qwen3-Next, Qwen3.5 "linear attention"), recurrent
// form, and the two activations around it: Sigmoid and Softplus.

package tensor

import (
	"fmt"
	"math"
)

// Sigmoid returns the logistic function elementwise, any shape (llama.cpp's
// ggml_sigmoid):
//
//	σ(x) = 1/(1 + e^{−x}),   dσ/dx = σ(x)(1 − σ(x))
func Sigmoid(x *Tensor) *Tensor {
	mustF32("Sigmoid", "x", x)
	b := beFor(x)
	out := newOut(b, x.shape...)
	b.Sigmoid(out, x)
	record("Sigmoid", out, func(gr *Tensor) []*Tensor {
		d := like(gr)
		for i, s := range out.f32 {
			d.f32[i] = gr.f32[i] * s * (1 - s)
		}
		return []*Tensor{d}
	}, x)
	return out
}

// Sigmoid is the pure-Go σ.
func (Go) Sigmoid(out, x *Tensor) {
	for i, v := range x.f32 {
		out.f32[i] = sigmoid32(v)
	}
}

// Softplus returns a smooth ReLU elementwise, any shape, as llama.cpp's
// ggml_softplus defines it (the identity past 20, where log(1 + e^x) and x
// agree to float32 precision):
//
//	softplus(x) = x > 20 ? x : log(1 + e^x)
//	d/dx        = x > 20 ? 1 : σ(x)
//
// log(1 + e^x) is evaluated in float64 and rounded once.
func Softplus(x *Tensor) *Tensor {
	mustF32("Softplus", "x", x)
	b := beFor(x)
	out := newOut(b, x.shape...)
	b.Softplus(out, x)
	record("Softplus", out, func(gr *Tensor) []*Tensor {
		d := like(gr)
		for i, v := range x.f32 {
			s := float32(1)
			if v <= 20 {
				s = sigmoid32(v)
			}
			d.f32[i] = gr.f32[i] * s
		}
		return []*Tensor{d}
	}, x)
	return out
}

// Softplus is the pure-Go softplus.
func (Go) Softplus(out, x *Tensor) {
	for i, v := range x.f32 {
		out.f32[i] = softplus32(v)
	}
}

func softplus32(v float32) float32 {
	if v > 20 {
		return v
	}
	return float32(math.Log1p(math.Exp(float64(v))))
}

// GatedDeltaNetBackend is a fused kernel (see fused): GatedDeltaNet(out,
// q, k, v, g, beta, state, eps) as the function of that name defines it,
// on tensors the caller has shaped and checked, writing o into out and,
// when state is not nil, the final state into state in place (state nil: S
// starts at zero). The kernel must give what the function's own loop gives
// (kernels/cpu bit for bit). Without it, and while a gradient is recorded
// (the backward pass recomputes the per-token states with the loop's own
// arithmetic), the op runs in Go on the host.
type GatedDeltaNetBackend interface {
	GatedDeltaNet(out, q, k, v, g, beta, state *Tensor, eps float32)
}

// GatedDeltaNet runs the gated delta rule (Yang, Kautz & Hatamizadeh 2024,
// https://arxiv.org/abs/2412.06464) over T tokens in its recurrent form, as
// llama.cpp's ggml_gated_delta_net computes it after ggml_l2_norm of q and
// k. Each value head h keeps a D×D state S (S[i][j]: key feature i, value
// feature j) and reads query/key head h mod Hk (llama.cpp tiles q and k over
// the value heads). Per token t and value head h:
//
//	q̂ = q_t,h / max(‖q_t,h‖, eps),  k̂ = k_t,h / max(‖k_t,h‖, eps)
//	S ← e^{g_t,h} · S               (decay)
//	u = Sᵀk̂                         (what S recalls for k̂)
//	d = β_t,h · (v_t,h − u)         (the delta)
//	S ← S + k̂ dᵀ                    (write it back)
//	o_t,h = Sᵀq̂ / √D
//
// Shapes, with Hv = g.Cols() and D = v.Cols()/Hv:
//
//	q, k  [T, Hk·D]    v, o  [T, Hv·D]    g, beta  [T, Hv]
//	state [Hv, D·D]    row h is head h's S, value-major: [h, j·D + i] = S[i][j]
//
// g is the log decay (≤ 0 in Qwen3-Next), beta the write strength in (0, 1).
// Hv must be a multiple of Hk. state may be nil (S starts at zero); when it
// is not, S starts at it and state is overwritten in place with S after the
// last token, so an inference cache carries the recurrence from call to
// call. state is not differentiated.
//
// Gradients flow to q, k, v, g and beta by backpropagation through time.
// While recording, the op keeps each head's state only before every
// gdnCheckpoint-th token, ⌈T/gdnCheckpoint⌉·Hv·D·D floats (inference keeps
// none), and the backward pass recomputes the states in between a chunk at a
// time, bit for bit, at the cost of a second forward pass.
func GatedDeltaNet(q, k, v, g, beta, state *Tensor, eps float32) *Tensor {
	mustF32("GatedDeltaNet", "q", q)
	mustF32("GatedDeltaNet", "k", k)
	mustF32("GatedDeltaNet", "v", v)
	mustF32("GatedDeltaNet", "g", g)
	mustF32("GatedDeltaNet", "beta", beta)
	T, Hv := g.Rows(), g.Cols()
	bad := func(why string) {
		panic(fmt.Sprintf("GatedDeltaNet: q %v, k %v, v %v, g %v, beta %v: %s", q.shape, k.shape, v.shape, g.shape, beta.shape, why))
	}
	if Hv == 0 || v.Cols() == 0 || v.Cols()%Hv != 0 {
		bad("v's columns must be Hv = g.Cols() heads of D > 0")
	}
	D := v.Cols() / Hv
	if q.Cols() == 0 || q.Cols()%D != 0 || Hv%(q.Cols()/D) != 0 {
		bad(fmt.Sprintf("q's columns must be Hk heads of D = %d, Hk dividing Hv = %d", D, Hv))
	}
	Hk := q.Cols() / D
	if k.Rows() != T || k.Cols() != q.Cols() || q.Rows() != T || v.Rows() != T || beta.Rows() != T || beta.Cols() != Hv {
		bad(fmt.Sprintf("want q, k [%d, %d], v [%d, %d], beta [%d, %d]", T, Hk*D, T, Hv*D, T, Hv))
	}
	if state != nil {
		mustF32("GatedDeltaNet", "state", state)
		if state.Rows() != Hv || state.Cols() != D*D {
			panic(fmt.Sprintf("GatedDeltaNet: state %v, want [%d, %d] (Hv, D·D)", state.shape, Hv, D*D))
		}
	}

	needGrad := Recording() && (q.requiresGrad || k.requiresGrad || v.requiresGrad || g.requiresGrad || beta.requiresGrad)
	if b, gb, ok := fused[GatedDeltaNetBackend](needGrad, q, k, v, g, beta, state); ok {
		out := newOut(b, v.shape...)
		gb.GatedDeltaNet(out, q, k, v, g, beta, state, eps)
		return out
	}

	r := newGdnRun(q.hostRead().f32, k.hostRead().f32, v.hostRead().f32, g.hostRead().f32, beta.hostRead().f32,
		T, Hk, Hv, D, eps, needGrad)
	if state != nil {
		r.S = state.hostWrite().f32
	} else {
		r.S = make([]float32, Hv*D*D)
	}
	out := New(v.shape...)
	parallelFor(Hv, 1, func(lo, hi int) {
		for h := lo; h < hi; h++ {
			r.forward(h, out.f32)
		}
	})
	record("GatedDeltaNet", out, func(gr *Tensor) []*Tensor {
		dq, dk, dv, dg, dbeta := r.backward(gr.f32, q.f32, k.f32, eps)
		return []*Tensor{
			FromFloat32(dq, q.shape...), FromFloat32(dk, k.shape...), FromFloat32(dv, v.shape...),
			FromFloat32(dg, g.shape...), FromFloat32(dbeta, beta.shape...)}
	}, q, k, v, g, beta)
	return out
}

// gdnCheckpoint is how many tokens apart the states kept for the backward
// pass are: it keeps ⌈T/gdnCheckpoint⌉ states per head and recomputes up to
// gdnCheckpoint at a time. (32 states of D = 128 are 2 MB per worker.)
const gdnCheckpoint = 32

// gdnRun is one call of GatedDeltaNet on the host: the normalised q̂, k̂
// [T, Hk·D], the raw v, g, beta, the running states S [Hv, D·D], and, when
// recording, hist [⌈T/gdnCheckpoint⌉, Hv, D·D]: each head's state before
// tokens 0, gdnCheckpoint, 2·gdnCheckpoint, ….
type gdnRun struct {
	T, Hk, Hv, D int
	qn, kn       []float32
	v, g, beta   []float32
	decay        []float32 // e^g
	S, hist      []float32
}

// newGdnRun readies a gdnRun, all but S, for host slices shaped as
// GatedDeltaNet checks them, with room for the checkpoints when record is
// set.
func newGdnRun(q, k, v, g, beta []float32, T, Hk, Hv, D int, eps float32, record bool) *gdnRun {
	r := &gdnRun{T: T, Hk: Hk, Hv: Hv, D: D, qn: l2Rows(q, D, eps), kn: l2Rows(k, D, eps),
		v: v, g: g, beta: beta, decay: make([]float32, len(g))}
	for i, gv := range g {
		r.decay[i] = float32(math.Exp(float64(gv)))
	}
	if record {
		r.hist = make([]float32, (T+gdnCheckpoint-1)/gdnCheckpoint*Hv*D*D)
	}
	return r
}

// forward runs value head h over all tokens, writing o into out [T, Hv·D],
// leaving the final state in S and, when recording, keeping the state
// before every gdnCheckpoint-th token in hist.
func (r *gdnRun) forward(h int, out []float32) {
	D := r.D
	S := r.S[h*D*D : (h+1)*D*D]
	for t := range r.T {
		if r.hist != nil && t%gdnCheckpoint == 0 {
			copy(r.hist[(t/gdnCheckpoint*r.Hv+h)*D*D:], S)
		}
		r.step(h, t, S, out[(t*r.Hv+h)*D:][:D])
	}
}

// step runs token t through value head h: S [D·D], the head's state, is
// updated in place and o_t,h written to ot [D]. Column j of S (S[·][j],
// contiguous) depends only on itself, so the token is one pass per column.
// The forward pass and the backward pass's recomputation both run it, so
// that they agree bit for bit.
func (r *gdnRun) step(h, t int, S, ot []float32) {
	D, kh := r.D, h%r.Hk
	scale := 1 / float32(math.Sqrt(float64(D)))
	qn := r.qn[(t*r.Hk+kh)*D:][:D]
	kn := r.kn[(t*r.Hk+kh)*D:][:D]
	vt := r.v[(t*r.Hv+h)*D:][:D]
	decay, beta := r.decay[t*r.Hv+h], r.beta[t*r.Hv+h]
	for j := range D {
		col := S[j*D : j*D+D]
		// u_j = Σ_i S'[i][j] k̂_i with S' = e^g S, in place; then
		// S = S' + k̂ dᵀ and o_j = Σ_i S[i][j] q̂_i. Each sum runs in
		// dotF32's four partial sums, so that the adds do not wait on
		// one another.
		d := beta * (vt[j] - decayDot(col, kn, decay))
		ot[j] = updateDot(col, kn, qn, d) * scale
	}
}

// decayDot scales s by decay in place and returns s·k, summed as dotF32.
func decayDot(s, k []float32, decay float32) float32 {
	k = k[:len(s)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(s); i += 4 {
		a0, a1, a2, a3 := s[i]*decay, s[i+1]*decay, s[i+2]*decay, s[i+3]*decay
		s[i], s[i+1], s[i+2], s[i+3] = a0, a1, a2, a3
		s0 += a0 * k[i]
		s1 += a1 * k[i+1]
		s2 += a2 * k[i+2]
		s3 += a3 * k[i+3]
	}
	for ; i < len(s); i++ {
		s[i] *= decay
		s0 += s[i] * k[i]
	}
	return (s0 + s1) + (s2 + s3)
}

// updateDot adds k·d to s in place and returns s·q, summed as dotF32.
func updateDot(s, k, q []float32, d float32) float32 {
	k, q = k[:len(s)], q[:len(s)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(s); i += 4 {
		a0, a1, a2, a3 := s[i]+k[i]*d, s[i+1]+k[i+1]*d, s[i+2]+k[i+2]*d, s[i+3]+k[i+3]*d
		s[i], s[i+1], s[i+2], s[i+3] = a0, a1, a2, a3
		s0 += a0 * q[i]
		s1 += a1 * q[i+1]
		s2 += a2 * q[i+2]
		s3 += a3 * q[i+3]
	}
	for ; i < len(s); i++ {
		s[i] += k[i] * d
		s0 += s[i] * q[i]
	}
	return (s0 + s1) + (s2 + s3)
}

// backward returns the gradients of q, k, v, g and beta given do, the
// output's gradient [T, Hv·D], by running each head backwards in time. It
// takes the tokens a chunk of gdnCheckpoint at a time, last chunk first:
// from the chunk's checkpoint it recomputes the state before each of its
// tokens with step, then walks them in reverse. dS, the gradient of the
// state after token t, starts at zero (the final state is not
// differentiated) and per column j goes, with S_prev the state before token
// t and S' = e^g S_prev, S = S' + k̂dᵀ:
//
//	dS += q̂ doᵀ/√D,  dq̂ += S do/√D
//	dd = dSᵀk̂,       dk̂ += dS d
//	dβ = dd·(v − u), dv = β dd,  du = −β dd
//	dS' = dS + k̂ duᵀ, dk̂ += S' du
//	dg = e^g Σ dS' ⊙ S_prev,  dS_prev = e^g dS'
//
// then dq̂, dk̂, summed over the value heads of each key head, go back
// through the L2 normalisation.
func (r *gdnRun) backward(do, q, k []float32, eps float32) (dq, dk, dv, dg, dbeta []float32) {
	T, Hk, Hv, D := r.T, r.Hk, r.Hv, r.D
	scale := 1 / float32(math.Sqrt(float64(D)))
	dqn, dkn := make([]float32, T*Hv*D), make([]float32, T*Hv*D) // per value head
	dv, dg, dbeta = make([]float32, T*Hv*D), make([]float32, T*Hv), make([]float32, T*Hv)
	parallelFor(Hv, 1, func(lo, hi int) {
		dS := make([]float32, D*D)
		states := make([]float32, gdnCheckpoint*D*D) // [token in chunk, D·D]
		o := make([]float32, D)                      // replay's outputs, unused
		for h := lo; h < hi; h++ {
			clear(dS)
			kh := h % Hk
			for t := T - 1; t >= 0; t-- {
				t0 := t / gdnCheckpoint * gdnCheckpoint // t's chunk starts at t0
				if t == T-1 || (t+1)%gdnCheckpoint == 0 {
					r.replay(h, t0, t+1, states, o)
				}
				Sp := states[(t-t0)*D*D:][:D*D]
				qn := r.qn[(t*Hk+kh)*D:][:D]
				kn := r.kn[(t*Hk+kh)*D:][:D]
				vt := r.v[(t*Hv+h)*D:][:D]
				dot := do[(t*Hv+h)*D:][:D]
				dqt, dkt, dvt := dqn[(t*Hv+h)*D:][:D], dkn[(t*Hv+h)*D:][:D], dv[(t*Hv+h)*D:][:D]
				decay, beta := float32(math.Exp(float64(r.g[t*Hv+h]))), r.beta[t*Hv+h]
				var dgt, dbt float32
				for j := range D {
					p, dSj := Sp[j*D:j*D+D], dS[j*D:j*D+D]
					var u float32 // recompute the forward pass's u_j and d_j
					for i, pi := range p {
						u += decay * pi * kn[i]
					}
					res := vt[j] - u
					d := beta * res
					c := dot[j] * scale
					var dd float32
					for i, pi := range p {
						s := decay*pi + kn[i]*d // S[i][j]
						dSj[i] += qn[i] * c
						dqt[i] += s * c
						dd += dSj[i] * kn[i]
						dkt[i] += dSj[i] * d
					}
					dbt += dd * res
					dvt[j] = beta * dd
					du := -beta * dd
					var dgj float32
					for i, pi := range p {
						dSj[i] += kn[i] * du // now dS'
						dkt[i] += decay * pi * du
						dgj += dSj[i] * pi
						dSj[i] *= decay // now dS_prev
					}
					dgt += decay * dgj
				}
				dg[t*Hv+h], dbeta[t*Hv+h] = dgt, dbt
			}
		}
	})
	return l2Grad(q, r.qn, dqn, Hk, Hv, D, eps), l2Grad(k, r.kn, dkn, Hk, Hv, D, eps), dv, dg, dbeta
}

// replay writes into states [t1−t0, D·D] head h's state before each of
// tokens t0 … t1−1, t0 a checkpoint: it starts from the state kept in hist
// and runs step as the forward pass did, so the states are the same bits.
// o [D] takes the outputs, which are not needed.
func (r *gdnRun) replay(h, t0, t1 int, states, o []float32) {
	D := r.D
	copy(states, r.hist[(t0/gdnCheckpoint*r.Hv+h)*D*D:][:D*D])
	for t := t0; t+1 < t1; t++ {
		S := states[(t+1-t0)*D*D:][:D*D]
		copy(S, states[(t-t0)*D*D:][:D*D])
		r.step(h, t, S, o)
	}
}

// l2Rows returns x with each run of D values divided by max(‖x‖, eps), as
// ggml_l2_norm does: the sum of squares in float64, the scale in float32.
func l2Rows(x []float32, D int, eps float32) []float32 {
	y := make([]float32, len(x))
	for r := 0; r < len(x); r += D {
		s := 1 / max(l2Norm(x[r:r+D]), eps)
		for i, v := range x[r : r+D] {
			y[r+i] = v * s
		}
	}
	return y
}

func l2Norm(x []float32) float32 {
	var sum float64
	for _, v := range x {
		sum += float64(v * v)
	}
	return float32(math.Sqrt(float64(float32(sum))))
}

// l2Grad sums dŷ [T, Hv·D] over the value heads of each key head and takes
// it back through ŷ = x/max(‖x‖, eps) for x [T, Hk·D]:
//
//	dx = (dŷ − ŷ(ŷ·dŷ)) / ‖x‖   (‖x‖ > eps),   dŷ/eps otherwise.
func l2Grad(x, y, dy []float32, Hk, Hv, D int, eps float32) []float32 {
	dx := make([]float32, len(x))
	T := len(x) / (Hk * D)
	for t := range T {
		for h := range Hv {
			kh := h % Hk
			row := dx[(t*Hk+kh)*D:][:D]
			for i, v := range dy[(t*Hv+h)*D:][:D] {
				row[i] += v
			}
		}
		for kh := range Hk {
			o := (t*Hk + kh) * D
			xr, yr, dr := x[o:o+D], y[o:o+D], dx[o:o+D]
			n := l2Norm(xr)
			if n <= eps {
				for i := range dr {
					dr[i] /= eps
				}
				continue
			}
			var yd float32
			for i := range dr {
				yd += yr[i] * dr[i]
			}
			for i := range dr {
				dr[i] = (dr[i] - yr[i]*yd) / n
			}
		}
	}
	return dx
}
