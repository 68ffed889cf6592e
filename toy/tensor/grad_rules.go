// The gradient rule of every primitive: given dL/d(output), the gradients
// with respect to the inputs. Plain loops, the reference for any backend.

package tensor

import "math"

// matmulGrads: y = x·wᵀ, so dx = g·w [M, K] and dw = gᵀ·x [N, K]. Both are
// computed as MatMuls against transposed copies (dx = g·(wᵀ)ᵀ, dw =
// gᵀ·(xᵀ)ᵀ), so they run on the backend's fast dot-product kernels. A
// quantized (frozen) w gets no gradient, but still passes one to x.
func matmulGrads(g, x, w *Tensor) (dx, dw *Tensor) {
	M, K, N := x.Rows(), x.Cols(), w.shape[0]
	if x.requiresGrad {
		wf := w
		if w.dtype != F32 {
			wf = FromFloat32(w.Float32s(), N, K)
		}
		dx = New(M, K)
		gradBackend().MatMul(dx, g, transpose(wf)) // [M, N]·[K, N]ᵀ
	}
	if w.requiresGrad {
		dw = New(N, K)
		gradBackend().MatMul(dw, transpose(g), transpose(x)) // [N, M]·[K, M]ᵀ
	}
	return dx, dw
}

// gradBackend is the backend gradient rules run their matrix products on:
// the active one, unless it keeps tensors on a device — gradients are
// computed on the host (see DeviceBackend).
func gradBackend() Backend {
	if b := be(); !isDeviceBackend(b) {
		return b
	}
	return Go{}
}

// transpose returns the transpose of a matrix [R, C] as a new [C, R], its
// bands of tile rows split across the threads.
func transpose(a *Tensor) *Tensor {
	R, C := a.Rows(), a.Cols()
	out := New(C, R)
	const tile = 32 // blocks keep both sides in cache
	parallelFor((R+tile-1)/tile, max(1, 4096/max(C, 1)), func(lo, hi int) {
		for r0 := lo * tile; r0 < min(hi*tile, R); r0 += tile {
			for c0 := 0; c0 < C; c0 += tile {
				for r := r0; r < min(r0+tile, R); r++ {
					for j, x := range a.f32[r*C+c0 : r*C+min(c0+tile, C)] {
						out.f32[(c0+j)*R+r] = x
					}
				}
			}
		}
	})
	return out
}

// axpy: y += a·x.
func axpy(y []float32, a float32, x []float32) {
	x = x[:len(y)]
	for i := range y {
		y[i] += a * x[i]
	}
}

// sumRows returns Σ over rows of g, shaped like the broadcast row b.
func sumRows(g, b *Tensor) *Tensor {
	out := New(b.shape...)
	c := out.Len()
	for i, v := range g.f32 {
		out.f32[i%c] += v
	}
	return out
}

// broadcastGrad reduces a gradient of a's shape to b's (summing over rows
// when b was broadcast).
func broadcastGrad(g, b *Tensor) *Tensor {
	if b.Len() == g.Len() {
		return g
	}
	return sumRows(g, b)
}

// rmsNormGrads: y = x·r·w with r = 1/√(mean(x²)+ε), per row of D. With
// u = g⊙w: dx = r·u − x·r³·(Σ u⊙x)/D, and dw = Σ_rows g⊙x·r.
func rmsNormGrads(g, x, w *Tensor, eps float32) (dx, dw *Tensor) {
	D := x.Cols()
	dx = New(x.shape...)
	if w != nil && w.requiresGrad {
		dw = New(w.shape...)
	}
	u := make([]float32, D)
	for row := 0; row < x.Rows(); row++ {
		xr, gr, dr := x.f32[row*D:(row+1)*D], g.f32[row*D:(row+1)*D], dx.f32[row*D:(row+1)*D]
		var ss float64
		for _, v := range xr {
			ss += float64(v * v)
		}
		r := 1 / math.Sqrt(ss/float64(D)+float64(eps))
		var dot float64
		for i := range u {
			u[i] = gr[i]
			if w != nil {
				u[i] *= w.f32[i]
			}
			dot += float64(u[i]) * float64(xr[i])
		}
		c := r * r * r * dot / float64(D)
		for i := range dr {
			dr[i] = float32(r*float64(u[i]) - c*float64(xr[i]))
			if dw != nil {
				dw.f32[i] += gr[i] * float32(float64(xr[i])*r)
			}
		}
	}
	return dx, dw
}

// layerNormGrads: x̂ = (x−μ)·r, y = x̂⊙w + b. With u = g⊙w:
// dx = r·(u − mean(u) − x̂·mean(u⊙x̂)), dw = Σ g⊙x̂, db = Σ g.
func layerNormGrads(g, x, w, b *Tensor, eps float32) (dx, dw, db *Tensor) {
	D := x.Cols()
	dx = New(x.shape...)
	if w != nil && w.requiresGrad {
		dw = New(w.shape...)
	}
	if b != nil && b.requiresGrad {
		db = New(b.shape...)
	}
	xh, u := make([]float64, D), make([]float64, D)
	for row := 0; row < x.Rows(); row++ {
		xr, gr, dr := x.f32[row*D:(row+1)*D], g.f32[row*D:(row+1)*D], dx.f32[row*D:(row+1)*D]
		var mean, vr float64
		for _, v := range xr {
			mean += float64(v)
		}
		mean /= float64(D)
		for _, v := range xr {
			vr += (float64(v) - mean) * (float64(v) - mean)
		}
		r := 1 / math.Sqrt(vr/float64(D)+float64(eps))
		var mu, mux float64
		for i := range xh {
			xh[i] = (float64(xr[i]) - mean) * r
			u[i] = float64(gr[i])
			if w != nil {
				u[i] *= float64(w.f32[i])
			}
			mu += u[i]
			mux += u[i] * xh[i]
		}
		mu /= float64(D)
		mux /= float64(D)
		for i := range dr {
			dr[i] = float32(r * (u[i] - mu - xh[i]*mux))
			if dw != nil {
				dw.f32[i] += float32(float64(gr[i]) * xh[i])
			}
			if db != nil {
				db.f32[i] += gr[i]
			}
		}
	}
	return dx, dw, db
}

// softmaxGrad: y = softmax(x) per row, dx = y⊙(g − Σ g⊙y).
func softmaxGrad(g, y *Tensor) *Tensor {
	C := y.Cols()
	dx := New(y.shape...)
	for row := 0; row < y.Rows(); row++ {
		yr, gr, dr := y.f32[row*C:(row+1)*C], g.f32[row*C:(row+1)*C], dx.f32[row*C:(row+1)*C]
		var s float64
		for i := range yr {
			s += float64(gr[i]) * float64(yr[i])
		}
		for i := range dr {
			dr[i] = yr[i] * (gr[i] - float32(s))
		}
	}
	return dx
}

// siluGrad: d/dx x·σ(x) = σ(x)·(1 + x·(1 − σ(x))).
func siluGrad(x float32) float32 {
	s := 1 / (1 + float32(math.Exp(float64(-x))))
	return s * (1 + x*(1-s))
}

// geluGrad is the derivative of tanh-GELU 0.5x(1 + tanh(u)), u = c(x + a x³):
// 0.5(1 + tanh u) + 0.5x(1 − tanh²u)·c(1 + 3a x²).
func geluGrad(x float32) float32 {
	const c, a = 0.79788456080286535587989211986876, 0.044715
	xf := float64(x)
	t := math.Tanh(c * (xf + a*xf*xf*xf))
	return float32(0.5*(1+t) + 0.5*xf*(1-t*t)*c*(1+3*a*xf*xf))
}

// attentionGrads differentiates out = softmax(cap(scale·q·kᵀ) + mask)·v per
// head. With p the attention probabilities of query t and head h:
// dv_s += p_s·g, dp_s = g·v_s, ds = p⊙(dp − Σ p⊙dp); through the cap
// c·tanh(u/c), whose derivative is 1 − tanh² = 1 − (s/c)², du = ds·(1 − (s/c)²);
// dq += scale·Σ du_s k_s, dk_s += scale·du_s·q. An attention sink only
// joins the normalisation of p (it has no value, so no dp); it gets no
// gradient.
func attentionGrads(g, q, k, v *Tensor, nHead, nKV, past int, o AttentionOptions) (dq, dk, dv *Tensor) {
	T, dh := q.Rows(), q.Cols()/nHead
	group := nHead / nKV
	qc, kc := q.Cols(), k.Cols()
	dq, dk, dv = New(q.shape...), New(k.shape...), New(v.shape...)
	// Split by key/value head: each dk, dv row gets its terms in the same
	// order (t, then the heads of its group) on any number of threads.
	parallelFor(nKV, 1, func(lo, hi int) {
		p := make([]float32, past+T)
		dp := make([]float32, past+T)
		capped := make([]float32, past+T) // the scores after the cap, for its derivative
		for kvh := lo; kvh < hi; kvh++ {
			for t := 0; t < T; t++ {
				first, last := o.Keys(t, T, past)
				for h := kvh * group; h < (kvh+1)*group; h++ {
					qr := q.f32[t*qc+h*dh : t*qc+(h+1)*dh]
					gr := g.f32[t*qc+h*dh : t*qc+(h+1)*dh]
					for s := first; s <= last; s++ {
						capped[s] = o.softCap(dotF32(k.f32[s*kc+kvh*dh:s*kc+(kvh+1)*dh], qr) * o.Scale)
					}
					softmaxSink(p[first:last+1], capped[first:last+1], o.sink(h))
					var sum float64
					for s := first; s <= last; s++ {
						vr := v.f32[s*kc+kvh*dh : s*kc+(kvh+1)*dh]
						axpy(dv.f32[s*kc+kvh*dh:s*kc+(kvh+1)*dh], p[s], gr)
						dp[s] = dotF32(gr, vr)
						sum += float64(p[s]) * float64(dp[s])
					}
					dqr := dq.f32[t*qc+h*dh : t*qc+(h+1)*dh]
					for s := first; s <= last; s++ {
						ds := p[s] * (dp[s] - float32(sum)) * o.Scale
						if c := o.SoftCap; c > 0 {
							r := capped[s] / c
							ds *= 1 - r*r
						}
						axpy(dqr, ds, k.f32[s*kc+kvh*dh:s*kc+(kvh+1)*dh])
						axpy(dk.f32[s*kc+kvh*dh:s*kc+(kvh+1)*dh], ds, qr)
					}
				}
			}
		}
	})
	return dq, dk, dv
}
