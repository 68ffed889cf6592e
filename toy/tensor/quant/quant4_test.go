package quant

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"
)

// TestQ4_0Q5_0Layout: hand-built blocks decode to d·(q − 8) and d·(q − 16),
// weights 0–15 in the low nibbles, 16–31 in the high ones, Q5_0's fifth bit
// i in bit i of its word.
func TestQ4_0Q5_0Layout(t *testing.T) {
	b4 := make([]byte, q4_0Bytes)
	b5 := make([]byte, q5_0Bytes)
	binary.LittleEndian.PutUint16(b4, F32ToFP16(0.5))
	binary.LittleEndian.PutUint16(b5, F32ToFP16(0.25))
	var qh uint32
	for i := 0; i < 32; i++ {
		q4, q5 := uint8(i*3%16), uint8(i*7%32)
		if i >= 16 {
			b4[2+i%16] |= q4 << 4
			b5[6+i%16] |= (q5 & 0xF) << 4
		} else {
			b4[2+i%16] |= q4
			b5[6+i%16] |= q5 & 0xF
		}
		qh |= uint32(q5>>4) << i
	}
	binary.LittleEndian.PutUint32(b5[2:], qh)
	y4, y5 := make([]float32, 32), make([]float32, 32)
	DecodeRow(y4, b4, Q4_0)
	DecodeRow(y5, b5, Q5_0)
	for i := 0; i < 32; i++ {
		if w := 0.5 * float32(i*3%16-8); y4[i] != w {
			t.Errorf("Q4_0 weight %d = %v, want %v", i, y4[i], w)
		}
		if w := 0.25 * float32(i*7%32-16); y5[i] != w {
			t.Errorf("Q5_0 weight %d = %v, want %v", i, y5[i], w)
		}
	}
}

// TestQ4_0Q5_0RoundTripAndDot: quantization keeps weights within one step
// (max|x|/8 or /16), and the dot with Q8_0 activations equals the float64
// dot of the dequantized sides.
func TestQ4_0Q5_0RoundTripAndDot(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 8))
	const K = 128
	x, w := make([]float32, K), make([]float32, K)
	for i := range x {
		x[i], w[i] = float32(r.NormFloat64()), float32(r.NormFloat64())
	}
	xq := QuantizeQ8_0(nil, x)
	xd := make([]float32, K)
	DequantizeQ8_0(xd, xq)
	for _, dt := range []Type{Q4_0, Q5_0} {
		b := EncodeRow(nil, w, dt)
		wd := make([]float32, K)
		DecodeRow(wd, b, dt)
		levels := map[Type]float64{Q4_0: 8, Q5_0: 16}[dt]
		for blk := 0; blk < K/32; blk++ {
			var amax float64
			for _, v := range w[32*blk : 32*blk+32] {
				amax = max(amax, math.Abs(float64(v)))
			}
			for i := 32 * blk; i < 32*blk+32; i++ {
				if e := math.Abs(float64(wd[i] - w[i])); e > amax/levels*1.01 {
					t.Fatalf("%v weight %d: %v decoded as %v (step %v)", dt, i, w[i], wd[i], amax/levels)
				}
			}
		}
		bytes, quant := q32Format(dt)
		var want, mag float64
		for i := range wd {
			want += float64(wd[i]) * float64(xd[i])
			mag += math.Abs(float64(wd[i]) * float64(xd[i]))
		}
		if got := dotQ32(b, bytes, quant, xq); math.Abs(float64(got)-want) > 1e-6*mag {
			t.Errorf("%v: dot %v, dequantized %v", dt, got, want)
		}
	}
}
