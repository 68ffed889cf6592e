package tensor

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

func TestSigmoidSoftplusByHand(t *testing.T) {
	// σ(0) = ½, σ(ln 3) = 3/4, σ(−ln 3) = 1/4.
	ln3 := float32(math.Log(3))
	x := FromFloat32([]float32{0, ln3, -ln3}, 1, 3)
	near(t, "Sigmoid", Sigmoid(x).Data(), []float32{0.5, 0.75, 0.25}, 1e-7)
	// softplus(0) = ln 2, softplus(ln 3) = ln 4, softplus(−30) = log(1 + e^−30) ≈ e^−30;
	// past 20 it is x itself (log(1 + e^25) − 25 ≈ 1.4e-11 is below float32's reach anyway).
	x = FromFloat32([]float32{0, ln3, -30, 20, 25}, 1, 5)
	near(t, "Softplus", Softplus(x).Data(), []float32{0.6931472, 1.3862944, 9.357623e-14, 20, 25}, 1e-7)

	// σ'(x) = σ(1 − σ): σ'(0) = 1/4, σ'(ln 3) = 3/16.
	g := grads(func(in []*Tensor) *Tensor { return Sigmoid(in[0]) }, FromFloat32([]float32{0, ln3}, 1, 2))
	near(t, "dSigmoid", g[0], []float32{0.25, 0.1875}, 1e-7)
	// softplus' = σ, and 1 past 20: at 0, ½; at ln 3, ¾; at 25, 1.
	g = grads(func(in []*Tensor) *Tensor { return Softplus(in[0]) }, FromFloat32([]float32{0, ln3, 25}, 1, 3))
	near(t, "dSoftplus", g[0], []float32{0.5, 0.75, 1}, 1e-7)
}

func TestSigmoidSoftplusGradients(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 5))
	gradCheck(t, "Sigmoid", func(in []*Tensor) *Tensor { return Sigmoid(in[0]) }, randTensor(r, 3, 4))
	x := randTensor(r, 3, 4)
	x.f32[1], x.f32[6] = 25, -7 // one value on the identity branch
	gradCheck(t, "Softplus", func(in []*Tensor) *Tensor { return Softplus(in[0]) }, x)
}

// gdnReference is the gated delta rule written straight from the formulas, in
// float64 with S[h][i][j] as nested slices: value head h reads q, k head
// h mod Hk. It returns o [T, Hv·D] and the final states in GatedDeltaNet's
// layout, [h, j·D + i] = S[i][j]. s0 (that layout) may be nil.
func gdnReference(q, k, v, g, beta, s0 []float32, T, Hk, Hv, D int, eps float64) (o, sOut []float64) {
	l2 := func(x []float32) []float64 {
		var n float64
		for _, e := range x {
			n += float64(e) * float64(e)
		}
		n = math.Max(math.Sqrt(n), eps)
		y := make([]float64, len(x))
		for i, e := range x {
			y[i] = float64(e) / n
		}
		return y
	}
	S := make([][][]float64, Hv)
	for h := range S {
		S[h] = make([][]float64, D)
		for i := range D {
			S[h][i] = make([]float64, D)
			for j := range D {
				if s0 != nil {
					S[h][i][j] = float64(s0[h*D*D+j*D+i])
				}
			}
		}
	}
	o = make([]float64, T*Hv*D)
	for t := range T {
		for h := range Hv {
			kh := h % Hk
			qn := l2(q[t*Hk*D+kh*D:][:D])
			kn := l2(k[t*Hk*D+kh*D:][:D])
			b, decay := float64(beta[t*Hv+h]), math.Exp(float64(g[t*Hv+h]))
			s := S[h]
			for i := range D {
				for j := range D {
					s[i][j] *= decay
				}
			}
			for j := range D {
				var u float64
				for i := range D {
					u += s[i][j] * kn[i]
				}
				d := b * (float64(v[t*Hv*D+h*D+j]) - u)
				for i := range D {
					s[i][j] += kn[i] * d
				}
			}
			for j := range D {
				var sum float64
				for i := range D {
					sum += s[i][j] * qn[i]
				}
				o[t*Hv*D+h*D+j] = sum / math.Sqrt(float64(D))
			}
		}
	}
	sOut = make([]float64, Hv*D*D)
	for h := range Hv {
		for i := range D {
			for j := range D {
				sOut[h*D*D+j*D+i] = S[h][i][j]
			}
		}
	}
	return o, sOut
}

// gdnInputs draws q, k, v [T, H·D] from N(0, 1), g from (−0.5, 0) and beta
// from (0, 1).
func gdnInputs(r *rand.Rand, T, Hk, Hv, D int) (q, k, v, g, beta *Tensor) {
	uniform := func(lo, hi float64, shape ...int) *Tensor {
		x := New(shape...)
		for i := range x.f32 {
			x.f32[i] = float32(lo + (hi-lo)*r.Float64())
		}
		return x
	}
	return randTensor(r, T, Hk*D), randTensor(r, T, Hk*D), randTensor(r, T, Hv*D), uniform(-0.5, 0, T, Hv), uniform(0.05, 0.95, T, Hv)
}

func f64s(x []float64) []float32 {
	y := make([]float32, len(x))
	for i, v := range x {
		y[i] = float32(v)
	}
	return y
}

func TestGatedDeltaNetByHand(t *testing.T) {
	// One token, D = 2, S starting at 0: S' = 0, u = 0, d = βv, S = k̂(βv)ᵀ, so
	// o = Sᵀq̂/√2 = βv(k̂·q̂)/√2. q = [3, 4] → q̂ = [0.6, 0.8]; k = [2, 0] → k̂ = [1, 0];
	// k̂·q̂ = 0.6; β = ½, v = [1, 2]: o = [0.3, 0.6]/√2 = [0.2121320, 0.4242641].
	// The state after is S = k̂(βv)ᵀ: S[0][·] = [0.5, 1], S[1][·] = 0, stored
	// value-major as [S00, S10, S01, S11] = [0.5, 0, 1, 0].
	state := New(1, 4)
	o := GatedDeltaNet(FromFloat32([]float32{3, 4}, 1, 2), FromFloat32([]float32{2, 0}, 1, 2),
		FromFloat32([]float32{1, 2}, 1, 2), FromFloat32([]float32{-0.7}, 1, 1), FromFloat32([]float32{0.5}, 1, 1), state, 1e-6)
	near(t, "o", o.Data(), []float32{0.2121320, 0.4242641}, 1e-6)
	near(t, "state", state.Data(), []float32{0.5, 0, 1, 0}, 1e-7)
}

func TestGatedDeltaNetMatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 13))
	for _, c := range []struct {
		name            string
		T, Hk, Hv, D    int
		withState, zero bool
	}{
		{"D=2 Hk=1 Hv=2 T=3", 3, 1, 2, 2, false, false},
		// Hk = 2, Hv = 4: heads 0, 1, 2, 3 read key heads 0, 1, 0, 1 (not 0, 0, 1, 1).
		{"D=3 Hk=2 Hv=4 T=5, initial state", 5, 2, 4, 3, true, false},
		// A zero query and key: ‖x‖ < eps, so x̂ = x/eps = 0.
		{"D=4 Hk=1 Hv=3 T=2, a zero q and k", 2, 1, 3, 4, true, true},
	} {
		q, k, v, g, beta := gdnInputs(r, c.T, c.Hk, c.Hv, c.D)
		if c.zero {
			clear(q.f32[:c.D])
			clear(k.f32[c.D:])
		}
		var state *Tensor
		var s0 []float32
		if c.withState {
			state = randTensor(r, c.Hv, c.D*c.D)
			s0 = append([]float32(nil), state.f32...)
		}
		o := GatedDeltaNet(q, k, v, g, beta, state, 1e-6)
		wantO, wantS := gdnReference(q.f32, k.f32, v.f32, g.f32, beta.f32, s0, c.T, c.Hk, c.Hv, c.D, 1e-6)
		near(t, c.name+": o", o.Data(), f64s(wantO), 1e-5)
		if state != nil {
			near(t, c.name+": state", state.Data(), f64s(wantS), 1e-5)
		}
	}
}

// Running 3 tokens and then 4 with the state carried is running all 7 at
// once: the same arithmetic in the same order, so bit for bit.
func TestGatedDeltaNetSplitSequence(t *testing.T) {
	const T, Hk, Hv, D, T1 = 7, 2, 4, 4, 3
	r := rand.New(rand.NewPCG(5, 8))
	q, k, v, g, beta := gdnInputs(r, T, Hk, Hv, D)
	whole := New(Hv, D*D)
	want := GatedDeltaNet(q, k, v, g, beta, whole, 1e-6).Data()
	if got := GatedDeltaNet(q, k, v, g, beta, nil, 1e-6).Data(); !equal32(got, want) {
		t.Fatal("a nil state and a zero state give different outputs")
	}

	rows := func(x *Tensor, lo, hi int) *Tensor {
		c := x.Cols()
		return FromFloat32(x.f32[lo*c:hi*c], hi-lo, c)
	}
	split := New(Hv, D*D)
	var got []float32
	for _, span := range [][2]int{{0, T1}, {T1, T}} {
		lo, hi := span[0], span[1]
		o := GatedDeltaNet(rows(q, lo, hi), rows(k, lo, hi), rows(v, lo, hi), rows(g, lo, hi), rows(beta, lo, hi), split, 1e-6)
		got = append(got, o.Data()...)
	}
	if !equal32(got, want) {
		near(t, "o, 3 then 4 tokens", got, want, 1e-6)
		t.Fatal("o, 3 then 4 tokens, differs from 7 at once")
	}
	if !equal32(split.Data(), whole.Data()) {
		t.Fatal("state after 3 then 4 tokens differs from after 7 at once")
	}
}

func equal32(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestGatedDeltaNetGradients(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 34))
	// Both value heads read key head 0, so dq and dk sum over them.
	q, k, v, g, beta := gdnInputs(r, 4, 1, 2, 3)
	gradCheck(t, "GatedDeltaNet", func(in []*Tensor) *Tensor {
		return GatedDeltaNet(in[0], in[1], in[2], in[3], in[4], nil, 1e-6)
	}, q, k, v, g, beta)

	// From a given state (a fresh copy each call: the op overwrites it), with
	// heads 0, 2 on key head 0 and 1, 3 on key head 1.
	q, k, v, g, beta = gdnInputs(r, 3, 2, 4, 2)
	s0 := randTensor(r, 4, 4)
	gradCheck(t, "GatedDeltaNet from a state", func(in []*Tensor) *Tensor {
		state := FromFloat32(append([]float32(nil), s0.f32...), s0.shape...)
		return GatedDeltaNet(in[0], in[1], in[2], in[3], in[4], state, 1e-6)
	}, q, k, v, g, beta)
}

// The backward pass keeps every gdnCheckpoint-th state and recomputes the
// others a chunk at a time with the forward pass's own arithmetic, so its
// gradients are those of keeping every state, bit for bit. T covers one
// token, a chunk less one, exactly one, one and a token, and three and a
// remainder; D = 6 leaves decayDot and updateDot a tail past their fours.
func TestGatedDeltaNetCheckpointedGradients(t *testing.T) {
	const eps = 1e-6
	C := gdnCheckpoint
	r := rand.New(rand.NewPCG(7, 9))
	for _, c := range []struct {
		T, Hk, Hv, D int
		withState    bool
	}{
		{1, 1, 2, 6, false},
		{1, 2, 4, 16, true},
		{C - 1, 2, 4, 16, true},
		{C, 1, 2, 6, true},
		{C, 2, 4, 16, false},
		{C + 1, 2, 4, 16, false},
		{C + 1, 1, 2, 6, true},
		{3*C + 5, 1, 2, 6, true},
		{3*C + 5, 2, 4, 16, false},
	} {
		name := fmt.Sprintf("T=%d Hk=%d Hv=%d D=%d state=%v", c.T, c.Hk, c.Hv, c.D, c.withState)
		q, k, v, g, beta := gdnInputs(r, c.T, c.Hk, c.Hv, c.D)
		var s0 []float32
		if c.withState {
			s0 = randTensor(r, c.Hv, c.D*c.D).f32
		}
		do := randTensor(r, c.T, c.Hv*c.D)

		// The op under a tape, its output weighted by do, so that the
		// gradient reaching it is do itself: ∂Σ(o ⊙ do)/∂o = 1·do.
		in := []*Tensor{q, k, v, g, beta}
		for _, x := range in {
			x.SetRequiresGrad(true).ZeroGrad()
		}
		var state *Tensor
		if s0 != nil {
			state = FromFloat32(append([]float32(nil), s0...), c.Hv, c.D*c.D)
		}
		tape := NewTape()
		Record(tape)
		o := GatedDeltaNet(q, k, v, g, beta, state, eps)
		loss := Sum(Mul(o, do))
		Record(nil)
		tape.Backward(loss)

		run := newGdnRun(q.f32, k.f32, v.f32, g.f32, beta.f32, c.T, c.Hk, c.Hv, c.D, eps, false)
		wantO, hist := gdnFullHistory(run, s0)
		if !equal32(o.Data(), wantO) {
			t.Fatalf("%s: o differs from the forward loop's", name)
		}
		want := gdnBackwardFullHistory(run, hist, do.f32, q.f32, k.f32, eps)
		for i, x := range in {
			what := fmt.Sprintf("%s: d%s", name, []string{"q", "k", "v", "g", "beta"}[i])
			if got := x.Grad().Data(); !equal32(got, want[i]) {
				near(t, what, got, want[i], 0) // names the first difference
				t.Fatalf("%s differs from keeping every state", what)
			}
		}
	}
}

// While recording, the forward pass keeps each head's state before tokens
// 0, C, 2C, … only (C = gdnCheckpoint): ⌈T/C⌉·Hv·D·D floats, where it kept
// T·Hv·D·D. For Qwen3.5's Hv = 16 heads of D = 128 over 512 tokens that is
// 16·16·128·128 = 4,194,304 floats (17 MB) a layer, down from 134,217,728
// (537 MB).
func TestGatedDeltaNetCheckpoints(t *testing.T) {
	const Hk, Hv, D = 1, 2, 6
	C := gdnCheckpoint
	r := rand.New(rand.NewPCG(4, 6))
	for _, c := range []struct{ T, kept int }{{1, 1}, {C - 1, 1}, {C, 1}, {C + 1, 2}, {3*C + 5, 4}, {16 * C, 16}} {
		q, k, v, g, beta := gdnInputs(r, c.T, Hk, Hv, D)
		run := newGdnRun(q.f32, k.f32, v.f32, g.f32, beta.f32, c.T, Hk, Hv, D, 1e-6, true)
		if len(run.hist) != c.kept*Hv*D*D {
			t.Fatalf("T=%d: hist holds %d floats, want %d·Hv·D·D = %d", c.T, len(run.hist), c.kept, c.kept*Hv*D*D)
		}
		run.S = make([]float32, Hv*D*D)
		for h := range Hv {
			run.forward(h, make([]float32, c.T*Hv*D))
		}
		_, all := gdnFullHistory(run, nil)
		for i := range c.kept {
			if !equal32(run.hist[i*Hv*D*D:][:Hv*D*D], all[i*C*Hv*D*D:][:Hv*D*D]) {
				t.Fatalf("T=%d: checkpoint %d is not the states before token %d", c.T, i, i*C)
			}
		}
	}
}

// gdnFullHistory runs the forward pass as GatedDeltaNet's Go loop does (the
// same decayDot and updateDot calls, so the same bits) from s0 (nil: zero)
// and returns o [T, Hv·D] and every head's state before every token,
// hist [T, Hv, D·D].
func gdnFullHistory(r *gdnRun, s0 []float32) (o, hist []float32) {
	T, Hk, Hv, D := r.T, r.Hk, r.Hv, r.D
	scale := 1 / float32(math.Sqrt(float64(D)))
	o, hist = make([]float32, T*Hv*D), make([]float32, T*Hv*D*D)
	for h := range Hv {
		S := make([]float32, D*D)
		if s0 != nil {
			copy(S, s0[h*D*D:])
		}
		kh := h % Hk
		for t := range T {
			copy(hist[(t*Hv+h)*D*D:], S)
			qn, kn := r.qn[(t*Hk+kh)*D:][:D], r.kn[(t*Hk+kh)*D:][:D]
			vt, ot := r.v[(t*Hv+h)*D:][:D], o[(t*Hv+h)*D:][:D]
			decay, beta := r.decay[t*Hv+h], r.beta[t*Hv+h]
			for j := range D {
				col := S[j*D : j*D+D]
				d := beta * (vt[j] - decayDot(col, kn, decay))
				ot[j] = updateDot(col, kn, qn, d) * scale
			}
		}
	}
	return o, hist
}

// gdnBackwardFullHistory is GatedDeltaNet's backward pass as it was before
// checkpointing: the same loop, reading the state before each token from
// hist [T, Hv, D·D]. It returns dq, dk, dv, dg and dbeta.
func gdnBackwardFullHistory(r *gdnRun, hist, do, q, k []float32, eps float32) [][]float32 {
	T, Hk, Hv, D := r.T, r.Hk, r.Hv, r.D
	scale := 1 / float32(math.Sqrt(float64(D)))
	dqn, dkn := make([]float32, T*Hv*D), make([]float32, T*Hv*D)
	dv, dg, dbeta := make([]float32, T*Hv*D), make([]float32, T*Hv), make([]float32, T*Hv)
	dS := make([]float32, D*D)
	for h := range Hv {
		clear(dS)
		kh := h % Hk
		for t := T - 1; t >= 0; t-- {
			Sp := hist[(t*Hv+h)*D*D:][:D*D]
			qn := r.qn[(t*Hk+kh)*D:][:D]
			kn := r.kn[(t*Hk+kh)*D:][:D]
			vt := r.v[(t*Hv+h)*D:][:D]
			dot := do[(t*Hv+h)*D:][:D]
			dqt, dkt, dvt := dqn[(t*Hv+h)*D:][:D], dkn[(t*Hv+h)*D:][:D], dv[(t*Hv+h)*D:][:D]
			decay, beta := float32(math.Exp(float64(r.g[t*Hv+h]))), r.beta[t*Hv+h]
			var dgt, dbt float32
			for j := range D {
				p, dSj := Sp[j*D:j*D+D], dS[j*D:j*D+D]
				var u float32
				for i, pi := range p {
					u += decay * pi * kn[i]
				}
				res := vt[j] - u
				d := beta * res
				c := dot[j] * scale
				var dd float32
				for i, pi := range p {
					s := decay*pi + kn[i]*d
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
					dSj[i] += kn[i] * du
					dkt[i] += decay * pi * du
					dgj += dSj[i] * pi
					dSj[i] *= decay
				}
				dgt += decay * dgj
			}
			dg[t*Hv+h], dbeta[t*Hv+h] = dgt, dbt
		}
	}
	return [][]float32{l2Grad(q, r.qn, dqn, Hk, Hv, D, eps), l2Grad(k, r.kn, dkn, Hk, Hv, D, eps), dv, dg, dbeta}
}

func TestGatedDeltaNetShapes(t *testing.T) {
	// T = 2, Hk = 2, Hv = 4, D = 2.
	ok := func() (q, k, v, g, beta *Tensor) { return New(2, 4), New(2, 4), New(2, 8), New(2, 4), New(2, 4) }
	for _, c := range []struct {
		name string
		f    func()
	}{
		{"Hv not a multiple of Hk", func() { _, _, v, g, b := ok(); GatedDeltaNet(New(2, 6), New(2, 6), v, g, b, nil, 0) }},
		{"k unlike q", func() { q, _, v, g, b := ok(); GatedDeltaNet(q, New(2, 2), v, g, b, nil, 0) }},
		{"beta unlike g", func() { q, k, v, g, _ := ok(); GatedDeltaNet(q, k, v, g, New(2, 3), nil, 0) }},
		{"v not Hv heads", func() { q, k, _, g, b := ok(); GatedDeltaNet(q, k, New(2, 9), g, b, nil, 0) }},
		{"state not [Hv, D·D]", func() { q, k, v, g, b := ok(); GatedDeltaNet(q, k, v, g, b, New(4, 2), 0) }},
		{"T differs", func() { q, k, _, g, b := ok(); GatedDeltaNet(q, k, New(3, 8), g, b, nil, 0) }},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", c.name)
				}
			}()
			c.f()
		}()
	}
}

// Qwen3-Next-80B-A3B's linear-attention shapes: Hk = 16, Hv = 32, D = 128;
// one token per decode step, a few thousand at prefill.
func BenchmarkGatedDeltaNet(b *testing.B) {
	const Hk, Hv, D = 16, 32, 128
	for _, T := range []int{1, 512} {
		r := rand.New(rand.NewPCG(1, 1))
		q, k, v, g, beta := gdnInputs(r, T, Hk, Hv, D)
		state := New(Hv, D*D)
		b.Run(map[int]string{1: "decode", 512: "prefill512"}[T], func(b *testing.B) {
			for b.Loop() {
				GatedDeltaNet(q, k, v, g, beta, state, 1e-6)
			}
		})
	}
}

// A training step's gated delta rule: the forward pass under a tape and the
// backward pass, T = 256 tokens, Hv = 4 heads of D = 64.
func BenchmarkGatedDeltaNetBackward(b *testing.B) {
	const T, Hk, Hv, D = 256, 2, 4, 64
	r := rand.New(rand.NewPCG(1, 2))
	q, k, v, g, beta := gdnInputs(r, T, Hk, Hv, D)
	do := randTensor(r, T, Hv*D)
	for _, x := range []*Tensor{q, k, v, g, beta} {
		x.SetRequiresGrad(true)
	}
	for b.Loop() {
		tape := NewTape()
		Record(tape)
		loss := Sum(Mul(GatedDeltaNet(q, k, v, g, beta, nil, 1e-6), do))
		Record(nil)
		tape.Backward(loss)
	}
}

// fusedGDN is pure Go with a gated delta rule kernel that counts its calls
// and runs the op's own loop.
type fusedGDN struct {
	Go
	calls *int
}

func (b fusedGDN) GatedDeltaNet(out, q, k, v, g, beta, state *Tensor, eps float32) {
	*b.calls++
	SetBackend(Go{})
	defer SetBackend(b)
	copy(out.f32, GatedDeltaNet(q, k, v, g, beta, state, eps).f32)
}

// TestFusedRule: a fused kernel runs whenever the backend offers it, with
// or without a tape, except when the call records a gradient the kernel
// cannot give.
func TestFusedRule(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 8))
	q, k, v := randTensor(r, 3, 8), randTensor(r, 3, 8), randTensor(r, 3, 8)
	g, beta := randTensor(r, 3, 2), randTensor(r, 3, 2)
	calls := 0
	old := ActiveBackend()
	SetBackend(fusedGDN{calls: &calls})
	defer SetBackend(old)
	want := GatedDeltaNet(q, k, v, g, beta, nil, 1e-6).Data()
	if calls != 1 {
		t.Fatalf("inference: the kernel ran %d times, want 1", calls)
	}
	tape := NewTape()
	Record(tape)
	defer Record(nil)
	GatedDeltaNet(q, k, v, g, beta, nil, 1e-6) // nothing needs a gradient
	if calls != 2 {
		t.Fatalf("a tape, no gradient: the kernel ran %d times in all, want 2", calls)
	}
	v.SetRequiresGrad(true)
	got := GatedDeltaNet(q, k, v, g, beta, nil, 1e-6).Data()
	if calls != 2 {
		t.Fatalf("recording a gradient: the kernel ran, want the plain path")
	}
	near(t, "GatedDeltaNet, plain path", got, want, 0)
}
