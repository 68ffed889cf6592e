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
	got := tp.apply(q, 3).Float32s() // positions 3, 4, 5
	want := []float32{2, 2, 2 * float32(1+0.5*math.Log(2)), 2 * float32(1+0.5*math.Log(2)), 2 * float32(1+0.5*math.Log(2)), 2 * float32(1+0.5*math.Log(2))}
	for i := range want {
		if math.Abs(float64(got[i]-want[i])) > 1e-6 {
			t.Fatalf("row-major factors %v, want %v", got, want)
		}
	}
	if got := tp.apply(q, 11).Float32s()[0]; math.Abs(float64(got-2*float32(1+0.5*math.Log(3)))) > 1e-6 { // ⌊11/4⌋ = 2
		t.Errorf("position 11: %g", got)
	}
}
