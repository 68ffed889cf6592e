package tensor

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unsafe"
)

// idsOf returns the I32 tensor [T, k] of v.
func idsOf(T, k int, v ...int32) *Tensor {
	b := unsafe.Slice((*byte)(unsafe.Pointer(&v[0])), 4*len(v))
	t, err := FromBytes(I32, slices.Clone(b), T, k)
	if err != nil {
		panic(err)
	}
	return t
}

func TestTopK(t *testing.T) {
	s := FromFloat32([]float32{
		0.1, 0.5, 0.3, 0.3, 0.9, 0.0, 0.2, 0.2, // k = 3: 4, 1, then 2 over 3 on the tie
		1, 1, 1, 1, 1, 1, 1, 1, // all equal: the lowest indices
	}, 2, 8)
	if got := TopK(s, 3, 1, 1).Int32s(); !slices.Equal(got, []int32{1, 2, 4, 0, 1, 2}) {
		t.Errorf("TopK: %v, want [1 2 4 0 1 2] (ascending, ties to the lower index)", got)
	}
	// Groups of two score 0.6, 0.6, 0.9, 0.4: groups 2 and 0 compete.
	if got := TopK(s, 3, 4, 2).Int32s(); !slices.Equal(got[:3], []int32{0, 1, 4}) {
		t.Errorf("TopK in groups: %v, want [0 1 4]", got[:3])
	}
	defer func() {
		if r := recover(); r == nil || !strings.Contains(r.(string), "TopK") {
			t.Errorf("4 of 2 allowed experts: %v, want a panic", r)
		}
	}()
	TopK(s, 4, 4, 1)
}

// TestMatMulID: each row is MatMul's for that row and the chosen expert,
// for x one row per token and one per chosen expert, and quantized stacks.
func TestMatMulID(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	const E, N, K, T, k = 4, 6, 64, 2, 3
	wf := randTensor(r, E, N, K)
	ids := idsOf(T, k, 0, 2, 3, 1, 2, 3)
	for _, dt := range []DType{F32, Q8_0, Q4_K} {
		w := wf
		if dt != F32 {
			if dt == Q4_K {
				w = randTensor(r, E, N, 256)
			}
			q, err := FromBytes(dt, EncodeRow(nil, w.Data(), dt), w.Shape()...)
			if err != nil {
				t.Fatal(err)
			}
			w = q
		}
		for _, rows := range []int{T, T * k} {
			x := randTensor(r, rows, w.shape[2])
			got := MatMulID(x, w, ids)
			for s, e := range ids.Int32s() {
				xr := s
				if rows == T {
					xr = s / k
				}
				want := MatMul(x.Slice(xr, xr+1), Select(w, int(e))).Data()
				if !slices.Equal(got.Row(s), want) {
					t.Errorf("%v, %d rows of x: row %d differs from MatMul", dt, rows, s)
				}
			}
		}
	}
}

// TestWeightedSumIsScatterAdd: WeightedSum equals ScatterAdd of the same
// weighted rows into zeros, bit for bit.
func TestWeightedSumIsScatterAdd(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	const T, k, D = 3, 4, 7
	h, w := randTensor(r, T*k, D), randTensor(r, T, k)
	rows := make([]int32, T*k)
	for i := range rows {
		rows[i] = int32(i / k)
	}
	want := ScatterAdd(New(T, D), rows, h, Reshape(w, T*k, 1)).Data()
	if got := WeightedSum(h, w).Data(); !slices.Equal(got, want) {
		t.Errorf("WeightedSum %v\nScatterAdd  %v", got, want)
	}
}

// TestMatMulIDNoGradient: recording a gradient through MatMulID is refused.
func TestMatMulIDNoGradient(t *testing.T) {
	w := FromFloat32(make([]float32, 2*3*4), 2, 3, 4)
	w.SetRequiresGrad(true)
	tp := NewTape()
	Record(tp)
	defer Record(nil)
	defer func() {
		if r := recover(); r == nil || !strings.Contains(r.(string), "no gradient") {
			t.Errorf("MatMulID with a trainable stack on a tape: %v, want a panic", r)
		}
	}()
	MatMulID(New(1, 4), w, idsOf(1, 1, 1))
}
