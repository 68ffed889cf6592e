package quant

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"
)

// TestQ4_1Q5_1Layout: hand-built blocks decode to d·q + m, weights 0–15 in
// the low nibbles and 16–31 in the high ones, Q5_1's fifth bit i in bit i
// of its word.
func TestQ4_1Q5_1Layout(t *testing.T) {
	b4 := make([]byte, q4_1Bytes)
	b5 := make([]byte, q5_1Bytes)
	binary.LittleEndian.PutUint16(b4, F32ToFP16(0.5))
	binary.LittleEndian.PutUint16(b4[2:], F32ToFP16(-3))
	binary.LittleEndian.PutUint16(b5, F32ToFP16(0.25))
	binary.LittleEndian.PutUint16(b5[2:], F32ToFP16(1.5))
	var qh uint32
	for i := 0; i < 32; i++ {
		q4, q5 := uint8(i*3%16), uint8(i*7%32)
		if i >= 16 {
			b4[4+i%16] |= q4 << 4
			b5[8+i%16] |= (q5 & 0xF) << 4
		} else {
			b4[4+i%16] |= q4
			b5[8+i%16] |= q5 & 0xF
		}
		qh |= uint32(q5>>4) << i
	}
	binary.LittleEndian.PutUint32(b5[4:], qh)
	y4, y5 := make([]float32, 32), make([]float32, 32)
	DecodeRow(y4, b4, Q4_1)
	DecodeRow(y5, b5, Q5_1)
	for i := 0; i < 32; i++ {
		if w := 0.5*float32(i*3%16) - 3; y4[i] != w {
			t.Errorf("Q4_1 weight %d = %v, want %v", i, y4[i], w)
		}
		if w := 0.25*float32(i*7%32) + 1.5; y5[i] != w {
			t.Errorf("Q5_1 weight %d = %v, want %v", i, y5[i], w)
		}
	}
}

// TestQuantizeQ4_1Q5_1: llama.cpp's reference rounding on a block whose
// answer is known: x = 0.5·i − 2 spans [−2, 13.5], so Q5_1's d = 15.5/31 =
// 0.5 and q_i = i exactly; Q4_1's d = 15.5/15 and q_i = trunc(i·15/31 + 0.5).
func TestQuantizeQ4_1Q5_1(t *testing.T) {
	x := make([]float32, 32)
	for i := range x {
		x[i] = 0.5*float32(i) - 2
	}
	b5 := QuantizeQ5_1(nil, x)
	b4 := QuantizeQ4_1(nil, x)
	if d, m := FP16ToF32(binary.LittleEndian.Uint16(b5)), FP16ToF32(binary.LittleEndian.Uint16(b5[2:])); d != 0.5 || m != -2 {
		t.Errorf("Q5_1 d, m = %v, %v; want 0.5, −2", d, m)
	}
	d4 := float32(15.5) / 15
	for i := 0; i < 32; i++ {
		if q := q5_1Quant(b5, i); int(q) != i {
			t.Errorf("Q5_1 q[%d] = %d, want %d", i, q, i)
		}
		if q, want := q4_1Quant(b4, i), uint8((x[i]+2)*(1/d4)+0.5); q != min(15, want) {
			t.Errorf("Q4_1 q[%d] = %d, want %d", i, q, want)
		}
	}
}

// TestQ4_1Q5_1RoundTripAndDot: quantization keeps weights within a step
// (range/15 or /31) plus the fp16 rounding of m, and the dot with Q8_1
// activations equals the float64 dot of the dequantized sides, with
// s = d·Σq as llama.cpp's Q8_1 stores it.
func TestQ4_1Q5_1RoundTripAndDot(t *testing.T) {
	r := rand.New(rand.NewPCG(18, 18))
	const K = 128
	x, w := make([]float32, K), make([]float32, K)
	for i := range x {
		x[i], w[i] = float32(r.NormFloat64()), float32(r.NormFloat64()+1)
	}
	xq := quantizeQ8_1(nil, x)
	q80 := QuantizeQ8_0(nil, x)
	for b := 0; b < K/32; b++ { // d and q are Q8_0's; s their sum times d
		xb := xq[b*q8_1Bytes:]
		if xb[0] != q80[b*Q8BlockLen] || xb[1] != q80[b*Q8BlockLen+1] || string(xb[4:36]) != string(q80[b*Q8BlockLen+2:(b+1)*Q8BlockLen]) {
			t.Fatalf("Q8_1 block %d: d or q differ from Q8_0's", b)
		}
		var s float64
		for _, q := range xb[4:36] {
			s += float64(int8(q))
		}
		if got, want := FP16ToF32(binary.LittleEndian.Uint16(xb[2:])), float64(FP16ToF32(binary.LittleEndian.Uint16(xb)))*s; math.Abs(float64(got)-want) > 2e-3*math.Abs(want)+1e-6 {
			t.Errorf("Q8_1 block %d: s = %v, want d·Σq ≈ %v", b, got, want)
		}
	}
	for _, dt := range []Type{Q4_1, Q5_1} {
		b := EncodeRow(nil, w, dt)
		wd := make([]float32, K)
		DecodeRow(wd, b, dt)
		levels := map[Type]float64{Q4_1: 15, Q5_1: 31}[dt]
		for blk := 0; blk < K/32; blk++ {
			lo, hi := math.Inf(1), math.Inf(-1)
			for _, v := range w[32*blk : 32*blk+32] {
				lo, hi = min(lo, float64(v)), max(hi, float64(v))
			}
			for i := 32 * blk; i < 32*blk+32; i++ {
				if e := math.Abs(float64(wd[i] - w[i])); e > (hi-lo)/levels*0.51+1e-3*math.Abs(lo) {
					t.Fatalf("%v weight %d: %v decoded as %v (step %v)", dt, i, w[i], wd[i], (hi-lo)/levels)
				}
			}
		}
		// the dot: Σ (d_w·q_w + m_w)·d_x·q_x = Σ d_w·d_x·q_w·q_x + m_w·s_x
		bytes, quant := q41Format(dt)
		var want, mag float64
		for blk := 0; blk < K/32; blk++ {
			xb := xq[blk*q8_1Bytes:]
			dx := float64(FP16ToF32(binary.LittleEndian.Uint16(xb)))
			for i := 32 * blk; i < 32*blk+32; i++ {
				p := float64(wd[i]-FP16ToF32(binary.LittleEndian.Uint16(b[blk*bytes+2:]))) * dx * float64(int8(xb[4+i%32]))
				want, mag = want+p, mag+math.Abs(p)
			}
			p := float64(FP16ToF32(binary.LittleEndian.Uint16(b[blk*bytes+2:]))) * float64(FP16ToF32(binary.LittleEndian.Uint16(xb[2:])))
			want, mag = want+p, mag+math.Abs(p)
		}
		if got := dotQ41(b, bytes, quant, xq); math.Abs(float64(got)-want) > 1e-5*mag {
			t.Errorf("%v: dot %v, dequantized %v", dt, got, want)
		}
	}
}
