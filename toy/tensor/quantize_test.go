// QuantizeRows and QuantizeRowsWeighted: errors, threads, and what the
// searches of package quant achieve through them.

package tensor

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/toyml/toy/toy/tensor/quant"
)

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

// simpleQuantizers are package quant's min/max quantizers (its kquant.go,
// kquant2.go and iquant.go), which QuantizeRows' searches replace for
// model files.
var simpleQuantizers = map[DType]func([]byte, []float32) []byte{
	Q2_K: quant.QuantizeQ2K, Q3_K: quant.QuantizeQ3K, Q4_K: quant.QuantizeQ4K, Q5_K: quant.QuantizeQ5K, Q6_K: quant.QuantizeQ6K,
	IQ4_NL: quant.QuantizeIQ4NL, IQ4_XS: quant.QuantizeIQ4XS,
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
