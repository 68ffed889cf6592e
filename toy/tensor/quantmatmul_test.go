package tensor

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/toyml/toy/toy/tensor/quant"
)

// TestQuantizedMatMul: MatMul with weights of each quantized type equals
// MatMul with the same weights dequantized to F32, up to the rounding of the
// activations to the type's partner (Q8_0, Q8_1 or Q8_K); and FromBytes
// refuses a buffer of the wrong size.
func TestQuantizedMatMul(t *testing.T) {
	r := rand.New(rand.NewPCG(6, 6))
	const M, K, N = 3, 2 * quant.QK, 5
	x, wf := New(M, K), New(N, K)
	for _, d := range [][]float32{x.Data(), wf.Data()} {
		for i := range d {
			d[i] = float32(r.NormFloat64())
		}
	}
	for _, dt := range []DType{Q8_0, Q4_0, Q5_0, Q4_1, Q5_1, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, IQ4_NL, IQ4_XS} {
		w, err := FromBytes(dt, EncodeRow(nil, wf.Data(), dt), N, K)
		if err != nil {
			t.Fatal(err)
		}
		got := MatMul(x, w).Data()
		want := MatMul(x, FromFloat32(w.Float32s(), N, K)).Data()
		for i := range want {
			if math.Abs(float64(got[i]-want[i])) > 0.02*math.Sqrt(K) {
				t.Errorf("%v: out[%d] = %v, with F32 weights %v", dt, i, got[i], want[i])
			}
		}
		if _, err := FromBytes(dt, make([]byte, 10), N, K); err == nil {
			t.Errorf("%v: FromBytes accepted 10 bytes for %d×%d", dt, N, K)
		}
	}
}
