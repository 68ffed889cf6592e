package nn

import (
	"bytes"
	"math"
	"slices"
	"testing"

	"github.com/toyml/toy/toy/gguf"
	"github.com/toyml/toy/toy/tensor"
)

// randomMoE returns a mixture of E experts of width F over width D, k used,
// with fixed pseudo-random F32 weights.
func randomMoE(D, F, E, k int, seed uint64) *MoE {
	in := NewInit(seed)
	m := &MoE{Router: in.Linear(E, D, 1, false), Gate: in.Normal(0.5, E, F, D), Up: in.Normal(0.5, E, F, D),
		Down: in.Normal(0.5, E, D, F), Used: k}
	for _, w := range []*tensor.Tensor{m.Router.W, m.Gate, m.Up, m.Down} {
		w.SetRequiresGrad(false)
	}
	return m
}

// expertOf computes expert e of m on x directly from the stacks' elements:
// Down_e (SiLU(Gate_e x) ⊙ Up_e x), one row of x at a time.
func expertOf(m *MoE, e int, x []float32) []float32 {
	F, D := m.Gate.Dim(1), m.Gate.Dim(2)
	g, u, d := m.Gate.Data()[e*F*D:], m.Up.Data()[e*F*D:], m.Down.Data()[e*D*F:]
	h := make([]float32, F)
	for f := range h {
		var a, b float64
		for i, v := range x {
			a += float64(g[f*D+i] * v)
			b += float64(u[f*D+i] * v)
		}
		h[f] = float32(a / (1 + math.Exp(-a)) * b)
	}
	y := make([]float32, D)
	for i := range y {
		var s float64
		for f, v := range h {
			s += float64(d[i*F+f] * v)
		}
		y[i] = float32(s)
	}
	return y
}

// With k = E every expert runs on every token, and the layer is the dense
// sum Σ_e p_e · expert_e(x) with p = softmax(router(x)).
func TestMoEAllExpertsIsTheWeightedSum(t *testing.T) {
	const D, F, E, T = 8, 6, 3, 5
	m := randomMoE(D, F, E, E, 1)
	x := NewInit(2).Normal(1, T, D).SetRequiresGrad(false)
	y := m.Forward(x)
	p := tensor.Softmax(m.Router.Forward(x), -1)
	for t0 := range T {
		want := make([]float32, D)
		for e := range E {
			for i, v := range expertOf(m, e, x.Row(t0)) {
				want[i] += p.Row(t0)[e] * v
			}
		}
		for i := range want {
			if d := math.Abs(float64(y.Row(t0)[i] - want[i])); d > 1e-5 {
				t.Fatalf("token %d, feature %d: %g, want %g", t0, i, y.Row(t0)[i], want[i])
			}
		}
	}
}

// k = 1 with a router that reads off one feature each: token [3, 0] goes to
// expert 0 with weight p_0 = e³/(e³ + e⁰) ≈ 0.9526, token [0, 3] to expert 1
// with the same weight; the weight is not renormalised to 1.
func TestMoETopOneByHand(t *testing.T) {
	m := randomMoE(2, 4, 2, 1, 3)
	m.Router.W = tensor.FromFloat32([]float32{1, 0, 0, 1}, 2, 2)
	x := tensor.FromFloat32([]float32{3, 0, 0, 3}, 2, 2)
	y := m.Forward(x)
	p := float32(math.Exp(3) / (math.Exp(3) + 1))
	for t0, e := range []int{0, 1} {
		want := expertOf(m, e, x.Row(t0))
		for i := range want {
			if d := math.Abs(float64(y.Row(t0)[i] - p*want[i])); d > 1e-5 {
				t.Fatalf("token %d: %v, want %g · %v", t0, y.Row(t0), p, want)
			}
		}
	}
}

// Gradients through routing weights, expert stacks and inputs agree with
// finite differences (the routing itself does not change under the small
// steps: its margins here are far larger).
func TestMoEGradients(t *testing.T) {
	const D, F, E, k, T = 4, 3, 4, 2, 6
	m := randomMoE(D, F, E, k, 4)
	x := NewInit(5).Normal(1, T, D)
	weight := NewInit(6).Normal(1, T, D).SetRequiresGrad(false)
	params := []*tensor.Tensor{m.Router.W, m.Gate, m.Up, m.Down, x}
	loss := func() *tensor.Tensor { return tensor.Sum(tensor.Mul(m.Forward(x), weight)) }
	for _, p := range params {
		p.SetRequiresGrad(true)
	}
	tape := tensor.NewTape()
	tensor.Record(tape)
	l := loss()
	tensor.Record(nil)
	tape.Backward(l)
	const h = 1e-3
	for n, p := range params {
		if p.Grad() == nil {
			t.Fatalf("parameter %d got no gradient", n)
		}
		d := p.Data()
		for i := range d {
			old := d[i]
			d[i] = old + h
			up := float64(loss().Data()[0])
			d[i] = old - h
			down := float64(loss().Data()[0])
			d[i] = old
			num, got := (up-down)/(2*h), float64(p.Grad().Data()[i])
			if math.Abs(num-got) > 1e-2*math.Max(1, math.Abs(num)) {
				t.Fatalf("parameter %d [%d]: gradient %.5f, finite difference %.5f", n, i, got, num)
			}
		}
	}
}

// A quantized stack runs each expert on its Q8_0 view: the same as the
// dequantized stack multiplied in F32 up to activation quantization.
func TestMoEQuantizedStacks(t *testing.T) {
	const D, F, E, T = 32, 32, 4, 3
	m := randomMoE(D, F, E, 2, 7)
	x := NewInit(8).Normal(1, T, D).SetRequiresGrad(false)
	want := m.Forward(x).Data()
	q := &MoE{Router: m.Router, Gate: m.Gate, Up: m.Up, Down: m.Down, Used: m.Used}
	for _, p := range []**tensor.Tensor{&q.Gate, &q.Up, &q.Down} {
		w, err := tensor.FromBytes(tensor.Q8_0, tensor.EncodeRow(nil, (*p).Data(), tensor.Q8_0), (*p).Shape()...)
		if err != nil {
			t.Fatal(err)
		}
		*p = w
	}
	got := q.Forward(x).Data()
	var diff, norm float64
	for i := range want {
		diff += float64((got[i] - want[i]) * (got[i] - want[i]))
		norm += float64(want[i] * want[i])
	}
	if rel := math.Sqrt(diff / norm); rel > 0.02 || rel == 0 {
		t.Fatalf("Q8_0 stacks differ from F32 by %.3g (relative RMS); want quantization noise, under 0.02", rel)
	}
}

// Load fills the router and the three 3-D stacks by their GGUF names, and
// Collect lists them back under the same names.
func TestMoELoadAndCollect(t *testing.T) {
	const D, F, E = 32, 32, 4
	w := gguf.NewWriter()
	add := func(name string, shape ...int) {
		n := 1
		for _, d := range shape {
			n *= d
		}
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(i%17) / 17
		}
		if err := w.AddFloat32(name, tensor.Q8_0, v, shape...); err != nil {
			t.Fatal(err)
		}
	}
	add("blk.0.ffn_gate_inp.weight", E, D)
	add("blk.0.ffn_gate_exps.weight", E, F, D)
	add("blk.0.ffn_up_exps.weight", E, F, D)
	add("blk.0.ffn_down_exps.weight", E, D, F)
	var b bytes.Buffer
	if _, err := w.WriteTo(&b); err != nil {
		t.Fatal(err)
	}
	f, err := gguf.Parse(b.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	blk := struct{ FFN Layer }{FFN: &MoE{Used: 2}}
	if err := Load(f, "blk.0.", &blk); err != nil {
		t.Fatal(err)
	}
	m := blk.FFN.(*MoE)
	if err := m.Check(D); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(m.Down.Shape(), []int{E, D, F}) || m.Gate.DType() != tensor.Q8_0 {
		t.Fatalf("down %v, gate %v", m.Down.Shape(), m.Gate.DType())
	}
	var names []string
	for _, n := range Collect("blk.0.", &blk) {
		names = append(names, n.Name)
	}
	want := []string{"blk.0.ffn_gate_inp.weight", "blk.0.ffn_gate_exps.weight", "blk.0.ffn_up_exps.weight", "blk.0.ffn_down_exps.weight"}
	if !slices.Equal(names, want) {
		t.Fatalf("Collect: %v, want %v", names, want)
	}
	m.Used = 5
	if err := m.Check(D); err == nil {
		t.Fatal("Check accepted 5 experts used of 4")
	}
}

// TestMoERoutedEqualsGrouped: the routed products that decode takes
// (TopK, MatMulID, WeightedSum) give bit for bit what the grouped ones
// give, for every router the mixtures use, on F32 and Q8_0 stacks, for one
// token and for a short batch; and T > routedTokens goes the grouped way.
func TestMoERoutedEqualsGrouped(t *testing.T) {
	const D, F, E, k = 32, 64, 8, 3
	routers := []struct {
		name string
		set  func(m *MoE)
	}{
		{"softmax", func(m *MoE) {}},
		{"normalised", func(m *MoE) { m.Normalize = true }},
		{"sigmoid, bias, groups, scale", func(m *MoE) {
			m.Sigmoid, m.Scale, m.Groups, m.GroupsUsed = true, 2.5, 4, 2
			m.Bias = tensor.FromFloat32([]float32{0, 0.3, 0, 0, -0.2, 0, 0, 0.1}, E)
		}},
		{"sigmoid normalised, bias, groups, scale (DeepSeek-V3)", func(m *MoE) {
			m.Sigmoid, m.Normalize, m.Scale, m.Groups, m.GroupsUsed = true, true, 2.5, 2, 1
			m.Bias = tensor.FromFloat32([]float32{0, 0.3, 0, 0, -0.2, 0, 0, 0.1}, E)
		}},
		{"normalised, scaled, gated shared expert", func(m *MoE) {
			in := NewInit(5)
			m.Normalize, m.Scale = true, 0.5
			m.SharedGate, m.SharedUp, m.SharedDown = in.Linear(F, D, 0.5, false), in.Linear(F, D, 0.5, false), in.Linear(D, F, 0.5, false)
			m.SharedWeight = in.Normal(0.5, D)
			m.SharedWeight.SetRequiresGrad(false)
		}},
		{"sigmoid, weighted inputs (Llama 4)", func(m *MoE) { m.Sigmoid, m.WeightInputs = true, true }},
	}
	for _, r := range routers {
		for _, dt := range []tensor.DType{tensor.F32, tensor.Q8_0} {
			m := randomMoE(D, F, E, k, 21)
			r.set(m)
			if dt != tensor.F32 {
				for _, w := range []**tensor.Tensor{&m.Gate, &m.Up, &m.Down} {
					q, err := tensor.FromBytes(dt, tensor.EncodeRow(nil, (*w).Data(), dt), (*w).Shape()...)
					if err != nil {
						t.Fatal(err)
					}
					*w = q
				}
			}
			for _, T := range []int{1, 5} {
				x := NewInit(uint64(T)).Normal(1, T, D)
				logits := m.Router.Forward(x)
				probs := tensor.Softmax(logits, -1)
				if m.Sigmoid {
					probs = m.sigmoid(logits)
				}
				scores := probs
				if m.Bias != nil {
					scores = tensor.Add(probs, m.Bias)
				}
				if m.WeightInputs {
					scores = logits
				}
				want := m.grouped(x, logits, probs, scores).Float32s()
				got := m.routed(x, logits, probs, scores).Float32s()
				if !slices.Equal(got, want) {
					t.Errorf("%s, %v, %d tokens: routed products differ from grouped ones", r.name, dt, T)
				}
				if y := m.Forward(x).Float32s(); !slices.Equal(y, m.addShared(x, tensor.FromFloat32(want, T, D)).Float32s()) {
					t.Errorf("%s, %v, %d tokens: Forward differs from the grouped products", r.name, dt, T)
				}
			}
		}
	}
}
