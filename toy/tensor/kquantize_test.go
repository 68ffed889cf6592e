package tensor

import (
	"errors"
	"fmt"
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

func randomRows(n int, seed uint64) []float32 {
	r := rand.New(rand.NewPCG(seed, 1))
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(r.NormFloat64() * 0.02)
		if r.IntN(64) == 0 {
			x[i] *= 20
		}
	}
	return x
}

// quantError returns the RMS error of x quantized as b, and the RMS error
// weighted by x² (√(Σx²·err²/Σx²)), which the IQ4, Q3_K and Q6_K searches
// minimize rather than the plain one.
func quantError(x []float32, b []byte, t DType) (rms, weighted float64) {
	y := make([]float32, len(x))
	DecodeRow(y, b, t)
	var s, sw, w float64
	for i := range x {
		d, v := float64(x[i]-y[i]), float64(x[i])
		s += d * d
		sw += v * v * d * d
		w += v * v
	}
	return math.Sqrt(s / float64(len(x))), math.Sqrt(sw / w)
}

// simpleQuantizers are the min/max quantizers of kquant.go, kquant2.go and
// iquant.go, which QuantizeRows' searches replace for model files.
var simpleQuantizers = map[DType]func([]byte, []float32) []byte{
	Q2_K: QuantizeQ2K, Q3_K: QuantizeQ3K, Q4_K: QuantizeQ4K, Q5_K: QuantizeQ5K, Q6_K: QuantizeQ6K,
	IQ4_NL: QuantizeIQ4NL, IQ4_XS: QuantizeIQ4XS,
}

// TestSearchBeatsSimpleQuantizers: on weights of a trained layer's spread
// (σ = 0.02, one in 64 twenty times larger), ggml's scale searches leave
// less error than the simple min/max quantizers by the measure each
// minimizes — plain RMS for Q2_K, Q4_K, Q5_K (whose weights, |x| or
// rms + |x|, are near flat), RMS weighted by x² for Q3_K, Q6_K and the IQ4
// types (on plain RMS those are within 1% either way) — and every type's
// RMS error stays below a share of the values' RMS that shrinks with its
// bits.
func TestSearchBeatsSimpleQuantizers(t *testing.T) {
	x := randomRows(64*1024, 7)
	var ss float64
	for _, v := range x {
		ss += float64(v) * float64(v)
	}
	sigma := math.Sqrt(ss / float64(len(x)))
	limit := map[DType]float64{Q2_K: 0.3, Q3_K: 0.18, Q4_K: 0.12, Q5_K: 0.065, Q6_K: 0.04, IQ4_NL: 0.14, IQ4_XS: 0.14}
	byX2 := map[DType]bool{Q3_K: true, Q6_K: true, IQ4_NL: true, IQ4_XS: true}
	for dt, simple := range simpleQuantizers {
		b, err := QuantizeRows(dt, x, 4096)
		if err != nil {
			t.Fatal(err)
		}
		rms, weighted := quantError(x, b, dt)
		rmsSimple, weightedSimple := quantError(x, simple(nil, x), dt)
		got, was := rms, rmsSimple
		if byX2[dt] {
			got, was = weighted, weightedSimple
		}
		if got >= was {
			t.Errorf("%v: search error %.4g, not below the simple quantizer's %.4g", dt, got, was)
		}
		if rms > limit[dt]*sigma {
			t.Errorf("%v: RMS error %.3g above %.2f·σ = %.3g", dt, rms, limit[dt], limit[dt]*sigma)
		}
		t.Logf("%-6v RMS error: search %.4g, simple %.4g (%+.1f%%); x²-weighted: search %.4g, simple %.4g (%+.1f%%)",
			dt, rms, rmsSimple, 100*(rms/rmsSimple-1), weighted, weightedSimple, 100*(weighted/weightedSimple-1))
	}
}

// TestQuantizeRowsZerosAndConstants: an all-zero row is all-zero blocks
// (IQ4's index 8 is the level 1, times d = 0) and decodes to zeros; a
// constant row decodes within a step of its value.
func TestQuantizeRowsZerosAndConstants(t *testing.T) {
	for _, dt := range []DType{Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, IQ4_NL, IQ4_XS, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1} {
		b, err := QuantizeRows(dt, make([]float32, 512), 256)
		if err != nil {
			t.Fatal(err)
		}
		y := make([]float32, 512)
		DecodeRow(y, b, dt)
		for i, v := range y {
			if v != 0 {
				t.Errorf("%v: zero row decodes to %v at %d", dt, v, i)
				break
			}
		}
		c := make([]float32, 256)
		for i := range c {
			c[i] = -0.375
		}
		b, _ = QuantizeRows(dt, c, 256)
		DecodeRow(y[:256], b, dt)
		for i, v := range y[:256] {
			if math.Abs(float64(v+0.375)) > 0.375/3 {
				t.Errorf("%v: constant −0.375 decodes to %v at %d", dt, v, i)
				break
			}
		}
	}
}

// TestQuantizeRowsErrors: types it cannot write, and rows that are not
// whole blocks, are errors.
func TestQuantizeRowsErrors(t *testing.T) {
	if _, err := QuantizeRows(I32, make([]float32, 32), 32); !errors.Is(err, ErrCannotQuantize) {
		t.Errorf("I32: %v, want ErrCannotQuantize", err)
	}
	if _, err := QuantizeRows(DType(16), make([]float32, 256), 256); !errors.Is(err, ErrCannotQuantize) {
		t.Errorf("IQ2_XXS: %v, want ErrCannotQuantize", err)
	}
	if _, err := QuantizeRows(Q4_K, make([]float32, 128), 128); err == nil {
		t.Error("Q4_K rows of 128: no error")
	}
	if _, err := QuantizeRows(Q8_0, make([]float32, 100), 32); err == nil {
		t.Error("100 values in rows of 32: no error")
	}
}

// TestQuantizeRowsThreads: rows are independent, so the result does not
// depend on how they are split across goroutines.
func TestQuantizeRowsThreads(t *testing.T) {
	x := randomRows(64*256, 3)
	defer SetThreads(Threads())
	SetThreads(1)
	one, _ := QuantizeRows(Q4_K, x, 256)
	SetThreads(4)
	four, _ := QuantizeRows(Q4_K, x, 256)
	if string(one) != string(four) {
		t.Error("1 and 4 threads give different bytes")
	}
}

// BenchmarkQuantizeRows quantizes a 4096×4096 matrix to each type (on
// Threads() goroutines; -cpu or SetThreads to change).
func BenchmarkQuantizeRows(b *testing.B) {
	x := randomRows(4096*4096, 1)
	for _, dt := range []DType{Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, IQ4_NL, IQ4_XS, Q8_0, Q4_0, Q5_0, Q4_1, Q5_1, F16} {
		b.Run(dt.String(), func(b *testing.B) {
			b.SetBytes(int64(4 * len(x)))
			for b.Loop() {
				if _, err := QuantizeRows(dt, x, 4096); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkQuantizeSimple is the simple quantizers on the same matrix.
func BenchmarkQuantizeSimple(b *testing.B) {
	x := randomRows(4096*4096, 1)
	for _, dt := range []DType{Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, IQ4_NL, IQ4_XS} {
		b.Run(fmt.Sprint(dt), func(b *testing.B) {
			b.SetBytes(int64(4 * len(x)))
			for b.Loop() {
				simpleQuantizers[dt](nil, x)
			}
		})
	}
}

// ExampleQuantizeRows quantizes two rows of 256 weights to Q4_K as
// llama.cpp does, and reads them back.
func ExampleQuantizeRows() {
	x := make([]float32, 2*256)
	for i := range x {
		x[i] = float32(i%256-128) / 128 // a ramp from −1 to 1 in each row
	}
	b, err := QuantizeRows(Q4_K, x, 256)
	if err != nil {
		fmt.Println(err)
		return
	}
	y := make([]float32, len(x))
	DecodeRow(y, b, Q4_K)
	var worst float64
	for i := range x {
		worst = max(worst, math.Abs(float64(x[i]-y[i])))
	}
	fmt.Printf("%d bytes (%d per row), largest error %.4f\n", len(b), len(b)/2, worst)
	// Output:
	// 288 bytes (144 per row), largest error 0.0304
}
