package quant

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestNearestIntTiesToEven checks ggml's rounding trick: halves go to the
// even neighbour, as the float32 addition of 1.5·2²³ rounds.
func TestNearestIntTiesToEven(t *testing.T) {
	for in, want := range map[float32]int{0: 0, 0.5: 0, 1.5: 2, 2.5: 2, -0.5: 0, -1.5: -2, -2.5: -2, 2.49: 2, 3.7: 4, -3.7: -4, 4194303: 4194303} {
		if got := nearestInt(in); got != want {
			t.Errorf("nearestInt(%v) = %d, want %d", in, got, want)
		}
	}
}

// TestIQ4IndexTiesUp checks the level search: the nearest of the 16
// levels, the upper one on a tie (−10 and 1 are 11 apart: −4.5 is a tie).
func TestIQ4IndexTiesUp(t *testing.T) {
	for in, want := range map[float32]uint8{-200: 0, -127: 0, -4.5: 8, -4.6: 7, 0: 8, 113: 15, 500: 15, 101: 15, 100.9: 14} {
		if got := iq4Index(in); got != want {
			t.Errorf("iq4Index(%v) = %d, want %d", in, got, want)
		}
	}
}

// TestIQ4IndexIsBinarySearch: the table lookup gives ggml's binary
// search's answer on every integer, every midpoint between two levels,
// the values just beside them, and random values.
func TestIQ4IndexIsBinarySearch(t *testing.T) {
	search := func(v float32) uint8 { // best_index_int8, as ggml writes it
		k := &kvaluesIQ4NL
		if v <= float32(k[0]) {
			return 0
		}
		if v >= float32(k[15]) {
			return 15
		}
		lo, hi := 0, 15
		for hi-lo > 1 {
			if mid := (lo + hi) / 2; v < float32(k[mid]) {
				hi = mid
			} else {
				lo = mid
			}
		}
		if v-float32(k[hi-1]) < float32(k[hi])-v {
			return uint8(hi - 1)
		}
		return uint8(hi)
	}
	var vs []float32
	for i := -140; i <= 130; i++ {
		v := float32(i)
		vs = append(vs, v, v+0.5, math.Nextafter32(v, -200), math.Nextafter32(v, 200), math.Nextafter32(v+0.5, -200), math.Nextafter32(v+0.5, 200))
	}
	vs = append(vs, float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)))
	r := rand.New(rand.NewPCG(1, 2))
	for range 100000 {
		vs = append(vs, float32(r.NormFloat64()*60))
	}
	for _, v := range vs {
		if got, want := iq4Index(v), search(v); got != want {
			t.Fatalf("iq4Index(%v) = %d, binary search %d", v, got, want)
		}
	}
}

// TestFitSymmetricExact: values that are exact multiples of one step, and
// whose largest is −nmax steps, fit with no error: every candidate step
// is at best as good, so the first one stays, scale = step.
func TestFitSymmetricExact(t *testing.T) {
	x := []float32{-3, 1, 0, 2, -1, 1, 0, 0, 3, -2, 1, 0, 0, 2, -3, 1} // step 0.75 when scaled below
	for i := range x {
		x[i] *= -0.75
	}
	x[0] = 3 // = −4 · (−0.75): the element of largest magnitude, the level −4
	var L [16]int8
	scale := fitSymmetricRefined(x, 4, L[:])
	if scale != -0.75 {
		t.Fatalf("scale %v, want -0.75", scale)
	}
	for i, v := range x {
		if got := scale * float32(int(L[i])-4); got != v {
			t.Errorf("x[%d] = %v reconstructs as %v", i, v, got)
		}
	}
}
