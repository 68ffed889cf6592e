package nn

import (
	"math"
	"testing"

	"github.com/toyml/toy/toy/tensor"
)

// Temperature leaves the first Floor positions alone and multiplies a
// query at position p by 1 + s·ln(⌊p/Floor⌋ + 1) after them.
func TestTemperature(t *testing.T) {
	tp := Temperature{Scale: 0.5, Floor: 4}
	q := tensor.New(3, 2)
	for i := range q.Data() {
		q.Data()[i] = 2
	}
	got := tp.Apply(q, 3).Float32s() // positions 3, 4, 5
	want := []float32{2, 2, 2 * float32(1+0.5*math.Log(2)), 2 * float32(1+0.5*math.Log(2)), 2 * float32(1+0.5*math.Log(2)), 2 * float32(1+0.5*math.Log(2))}
	for i := range want {
		if math.Abs(float64(got[i]-want[i])) > 1e-6 {
			t.Fatalf("row-major factors %v, want %v", got, want)
		}
	}
	if got := tp.Apply(q, 11).Float32s()[0]; math.Abs(float64(got-2*float32(1+0.5*math.Log(3)))) > 1e-6 { // ⌊11/4⌋ = 2
		t.Errorf("position 11: %g", got)
	}
}

// Llama 4 counts the temperature's positions from 1 (Offset 1): with
// Floor 8192 the first query past the step is at position 8191, where
// ⌊(8191 + 1)/8192⌋ = 1 gives 1 + 0.1·ln 2; position 8190 keeps 1.
func TestTemperatureOffset(t *testing.T) {
	tp := Temperature{Scale: 0.1, Floor: 8192, Offset: 1}
	q := tensor.New(2, 1)
	q.Data()[0], q.Data()[1] = 1, 1
	got := tp.Apply(q, 8190).Float32s() // positions 8190, 8191
	if want := float32(1 + 0.1*math.Log(2)); got[0] != 1 || math.Abs(float64(got[1]-want)) > 1e-7 {
		t.Fatalf("factors %v, want [1 %g]", got, want)
	}
}

// Llama 4's L2 norm: after RoPE, each head of q and k is divided by its RMS,
// so a head of width Dh has length √Dh (to ε), whatever its scale before.
func TestL2NormHeads(t *testing.T) {
	in := NewInit(7)
	const D, H, KV, Dh = 16, 2, 1, 8
	a := &Attention{Q: in.Linear(H*Dh, D, 3, false), K: in.Linear(KV*Dh, D, 3, false), V: in.Linear(KV*Dh, D, 1, false),
		O: in.Linear(D, H*Dh, 1, false), Heads: H, KVHeads: KV, HeadDim: Dh,
		RoPE: &RoPE{Dim: Dh, Base: 10000}}
	a.Then = func(q, k *tensor.Tensor, _ int) (*tensor.Tensor, *tensor.Tensor) {
		return HeadRMS(q, 1e-6, Dh), HeadRMS(k, 1e-6, Dh)
	}
	x := in.Normal(1, 3, D)
	cache := NewKVCache(3, KV*Dh)
	a.Forward(x, cache)
	for p := range 3 {
		var n float64
		for _, v := range cache.K.Row(p) {
			n += float64(v) * float64(v)
		}
		if math.Abs(math.Sqrt(n)-math.Sqrt(Dh)) > 1e-4 {
			t.Errorf("position %d: key head length %.6f, want √%d", p, math.Sqrt(n), Dh)
		}
	}
}
