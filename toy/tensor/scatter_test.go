package tensor

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// Rows 0 and 2 of dst get src's rows back, weighted; row 2 twice:
//
//	out[0] = [1 1] + 0.5·[2 4]            = [2 3]
//	out[1] = [1 1]                         (no id)
//	out[2] = [1 1] + 2·[1 0] + 1·[0 3]    = [3 4]
func TestScatterAddByHand(t *testing.T) {
	dst := FromFloat32([]float32{1, 1, 1, 1, 1, 1}, 3, 2)
	src := FromFloat32([]float32{2, 4, 1, 0, 0, 3}, 3, 2)
	out := ScatterAdd(dst, []int32{0, 2, 2}, src, FromFloat32([]float32{0.5, 2, 1}, 3, 1))
	if want := []float32{2, 3, 1, 1, 3, 4}; !slices.Equal(out.Data(), want) {
		t.Fatalf("ScatterAdd = %v, want %v", out.Data(), want)
	}
	if want := []float32{1, 1, 1, 1, 1, 1}; !slices.Equal(dst.Data(), want) {
		t.Fatalf("dst changed to %v", dst.Data())
	}
	out = ScatterAdd(dst, []int32{1}, src.Slice(0, 1), nil) // scale nil: 1
	if want := []float32{1, 1, 3, 5, 1, 1}; !slices.Equal(out.Data(), want) {
		t.Fatalf("ScatterAdd without scale = %v, want %v", out.Data(), want)
	}
}

// Gathering rows (Embedding over activations), weighting and scattering them
// back is the identity when every row goes out and comes back with weight 1.
func TestGatherScatterRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	x := randTensor(r, 5, 3)
	ids := []int32{4, 1, 0, 3, 2}
	back := ScatterAdd(New(5, 3), ids, Embedding(x, ids), FromFloat32([]float32{1, 1, 1, 1, 1}, 5))
	if !slices.Equal(back.Data(), x.Data()) {
		t.Fatalf("round trip %v, want %v", back.Data(), x.Data())
	}
}

// Select views sub-tensor i without copying: it shares x's elements, for
// quantized stacks too.
func TestSelectIsAView(t *testing.T) {
	x := FromFloat32([]float32{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, 3, 2, 2)
	s := Select(x, 1)
	if !slices.Equal(s.Shape(), []int{2, 2}) || !slices.Equal(s.Data(), []float32{4, 5, 6, 7}) {
		t.Fatalf("Select = %v %v", s.Shape(), s.Data())
	}
	x.Data()[5] = 50
	if s.Data()[1] != 50 {
		t.Fatal("Select copied instead of viewing")
	}
	vals := make([]float32, 2*4*32)
	for i := range vals {
		vals[i] = float32(i%7) - 3
	}
	q, err := FromBytes(Q8_0, EncodeRow(nil, vals, Q8_0), 2, 4, 32)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := Select(q, 1).Float32s(), q.Float32s()[4*32:]; !slices.Equal(got, want) {
		t.Fatalf("Select of Q8_0: %v, want %v", got[:4], want[:4])
	}
}

// The gradient rules against finite differences: an expert-style pipeline
// (select one matrix of a stack, gather rows, project, weight, scatter back).
func TestScatterGradients(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	x := func(shape ...int) *Tensor { return randTensor(r, shape...) }
	gradCheck(t, "ScatterAdd", func(in []*Tensor) *Tensor {
		return ScatterAdd(in[0], []int32{2, 0, 2}, in[1], in[2])
	}, x(3, 4), x(3, 4), x(3, 1))
	gradCheck(t, "Select", func(in []*Tensor) *Tensor { return Select(in[0], 1) }, x(3, 2, 4))
	gradCheck(t, "expert", func(in []*Tensor) *Tensor {
		ids := []int32{3, 1}
		h := MatMul(Embedding(in[0], ids), Select(in[1], 1))                   // [2, 3]
		return ScatterAdd(in[2], ids, h, Embedding(Reshape(in[3], 8, 1), ids)) // [4, 3]
	}, x(4, 5), x(2, 3, 5), x(4, 3), x(4, 2))
}
