package quant

import "testing"

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
