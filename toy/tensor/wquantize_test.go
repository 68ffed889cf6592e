package tensor

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// weightedTypes are the types whose llama.cpp quantizer uses an imatrix;
// ignoringTypes those that take none.
var (
	weightedTypes = []DType{Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, IQ4_NL, IQ4_XS, Q4_0, Q4_1, Q5_0, Q5_1}
	ignoringTypes = []DType{Q8_0, F16, BF16, F32, MXFP4}
)

// randomImportance returns n importances spread over six orders of
// magnitude, as llama-imatrix's mean squared activations are.
func randomImportance(n int, seed uint64) []float32 {
	r := rand.New(rand.NewPCG(seed, 2))
	w := make([]float32, n)
	for i := range w {
		w[i] = float32(math.Pow(10, 6*r.Float64()-3))
	}
	return w
}

// TestQuantizeRowsWeightedNil: no importances is QuantizeRows, for every
// type.
func TestQuantizeRowsWeightedNil(t *testing.T) {
	x := randomRows(4*256, 5)
	for _, dt := range append(weightedTypes, ignoringTypes...) {
		want, err := QuantizeRows(dt, x, 256)
		if err != nil {
			t.Fatalf("%v: %v", dt, err)
		}
		got, err := QuantizeRowsWeighted(dt, x, 256, nil)
		if err != nil {
			t.Fatalf("%v: %v", dt, err)
		}
		if string(got) != string(want) {
			t.Errorf("%v: nil importances differ from QuantizeRows", dt)
		}
	}
}

// TestQuantizeRowsWeightedIgnored: Q8_0, F16, BF16, F32 and MXFP4 take no
// importances (llama.cpp ignores them): the bytes are QuantizeRows'.
func TestQuantizeRowsWeightedIgnored(t *testing.T) {
	x := randomRows(4*256, 6)
	w := randomImportance(256, 6)
	for _, dt := range ignoringTypes {
		want, _ := QuantizeRows(dt, x, 256)
		got, err := QuantizeRowsWeighted(dt, x, 256, w)
		if err != nil {
			t.Fatalf("%v: %v", dt, err)
		}
		if string(got) != string(want) {
			t.Errorf("%v: the importances changed the bytes", dt)
		}
	}
}

// TestQuantizeRowsWeightedErrors: importances are one per column, and the
// errors of QuantizeRows still hold.
func TestQuantizeRowsWeightedErrors(t *testing.T) {
	x := make([]float32, 2*256)
	for _, n := range []int{0, 255, 257, 512} {
		if _, err := QuantizeRowsWeighted(Q4_K, x, 256, make([]float32, n)); err == nil {
			t.Errorf("%d importances for rows of 256: no error", n)
		}
	}
	if _, err := QuantizeRowsWeighted(I32, make([]float32, 32), 32, make([]float32, 32)); !errors.Is(err, ErrCannotQuantize) {
		t.Errorf("I32: %v, want ErrCannotQuantize", err)
	}
	if _, err := QuantizeRowsWeighted(Q4_K, make([]float32, 128), 128, make([]float32, 128)); err == nil {
		t.Error("Q4_K rows of 128: no error")
	}
}

// TestImportanceLowersWeightedError: the point of an imatrix. Over many
// rows, the error weighted by the importances, Σ imatrix·err², is lower
// with them than without, for every type that uses them.
func TestImportanceLowersWeightedError(t *testing.T) {
	const rowLen, rows = 256, 32
	x := randomRows(rows*rowLen, 7)
	w := randomImportance(rowLen, 7)
	weightedErr := func(b []byte, dt DType) float64 {
		y := make([]float32, len(x))
		DecodeRow(y, b, dt)
		var e float64
		for i := range x {
			d := float64(x[i] - y[i])
			e += float64(w[i%rowLen]) * d * d
		}
		return e
	}
	for _, dt := range weightedTypes {
		plain, _ := QuantizeRows(dt, x, rowLen)
		with, err := QuantizeRowsWeighted(dt, x, rowLen, w)
		if err != nil {
			t.Fatalf("%v: %v", dt, err)
		}
		ep, ew := weightedErr(plain, dt), weightedErr(with, dt)
		if !(ew < ep) {
			t.Errorf("%v: weighted error %.4g with importances, %.4g without", dt, ew, ep)
		}
	}
}

// TestFitSharesExact: values that are exact multiples of one step, the
// largest nmax steps, fit with no error: the first step stays (no other is
// strictly better), every level is x/step, and the least-squares step
// Σwxl/Σwl² = Σ½l²/Σl² is ½ exactly.
func TestFitSharesExact(t *testing.T) {
	x := []float32{0, 3, 7.5, 1, 0.5, 6, 2, 4.5} // multiples of ½, largest 15·½
	w := []float32{1, 2, 3, 4, 5, 6, 7, 8}
	var L [8]uint8
	if got := fitShares(x, 15, L[:], w); got != 0.5 {
		t.Fatalf("step %v, want 0.5", got)
	}
	for i, v := range x {
		if float32(L[i]) != 2*v {
			t.Errorf("x[%d] = %v: level %d, want %v", i, v, L[i], 2*v)
		}
	}
}

// ExampleQuantizeRowsWeighted quantizes a row to Q4_K with an importance
// matrix that marks every eighth column as 100 times more important than
// the others (as if its input were 10 times larger): their error falls to
// a fifth, for a quarter more in the others.
func ExampleQuantizeRowsWeighted() {
	x := make([]float32, 256)
	imatrix := make([]float32, 256)
	for i := range x {
		x[i] = float32((i*37)%101-50) / 50 // a scrambled ramp in [−1, 1]
		imatrix[i] = 1
		if i%8 == 0 {
			imatrix[i] = 100
		}
	}
	// rms is the error of the important columns and of the others.
	rms := func(b []byte) (important, others float64) {
		y := make([]float32, len(x))
		DecodeRow(y, b, Q4_K)
		var s [2]float64
		for i := range x {
			d := float64(x[i] - y[i])
			s[min(1, i%8)] += d * d
		}
		return math.Sqrt(s[0] / 32), math.Sqrt(s[1] / 224)
	}
	plain, _ := QuantizeRows(Q4_K, x, 256)
	weighted, err := QuantizeRowsWeighted(Q4_K, x, 256, imatrix)
	if err != nil {
		fmt.Println(err)
		return
	}
	a, b := rms(plain)
	fmt.Printf("without: rms error %.4f in the important columns, %.4f in the others\n", a, b)
	a, b = rms(weighted)
	fmt.Printf("with:    rms error %.4f in the important columns, %.4f in the others\n", a, b)
	// Output:
	// without: rms error 0.0327 in the important columns, 0.0350 in the others
	// with:    rms error 0.0069 in the important columns, 0.0444 in the others
}
