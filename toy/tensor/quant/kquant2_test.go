package quant

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"
)

// TestQ5KLayout: a hand-built block decodes to d·scale_j·q − dmin·min_j,
// the scales packed as Q4_K's and the fifth bit of weight i in bit i/32 of
// high byte i%32, as llama.cpp's dequantize_row_q5_K reads it.
func TestQ5KLayout(t *testing.T) {
	blk := make([]byte, q5KBytes)
	binary.LittleEndian.PutUint16(blk, F32ToFP16(0.5))
	binary.LittleEndian.PutUint16(blk[2:], F32ToFP16(0.25))
	scale := [8]uint8{1, 2, 3, 63, 17, 33, 48, 60}
	mins := [8]uint8{0, 5, 62, 7, 19, 40, 1, 63}
	s := blk[q5KScales:q5KHigh]
	for j := 0; j < 4; j++ {
		s[j] = scale[j] | (scale[j+4]>>4)<<6
		s[j+4] = mins[j] | (mins[j+4]>>4)<<6
		s[j+8] = scale[j+4]&0xF | (mins[j+4]&0xF)<<4
	}
	for i := 0; i < QK; i++ { // quant of weight i: (i·7) mod 32
		q := uint8(i * 7 % 32)
		at := q5KQuants + i/64*32 + i%32
		if i%64 >= 32 {
			blk[at] |= (q & 0xF) << 4
		} else {
			blk[at] |= q & 0xF
		}
		blk[q5KHigh+i%32] |= (q >> 4) << (i / 32)
	}
	got := make([]float32, QK)
	DequantizeQ5K(got, blk)
	for i, v := range got {
		j := i / 32
		want := 0.5*float32(scale[j])*float32(i*7%32) - 0.25*float32(mins[j])
		if v != want {
			t.Fatalf("weight %d = %v, want %v", i, v, want)
		}
	}
}

// TestQ3KLayout: weight i of a hand-built block is d·(scale_{i/16} − 32)·q_i,
// q_i = its bit pair − 4·(high bit clear), with the scales' low nibbles in
// bytes 0–7 and their high bit pairs in bytes 8–11, as llama.cpp's
// dequantize_row_q3_K unpacks them.
func TestQ3KLayout(t *testing.T) {
	blk := make([]byte, q3KBytes)
	binary.LittleEndian.PutUint16(blk[q3KD:], F32ToFP16(0.125))
	var scales [16]uint8 // six-bit values 0 … 63, stored as is
	for g := range scales {
		scales[g] = uint8(g*13+5) % 64
	}
	s := blk[q3KScales:q3KD]
	// llama.cpp's packing: scales 0-7 low nibbles in bytes 0-7, scales
	// 8-15 high nibbles there; the high bit pairs of scale g at bits
	// 2·(g/4) of byte 8 + g%4.
	for g, v := range scales {
		if g < 8 {
			s[g] |= v & 0xF
		} else {
			s[g-8] |= (v & 0xF) << 4
		}
		s[8+g%4] |= (v >> 4) << (2 * (g / 4))
	}
	for i := 0; i < QK; i++ { // the 3-bit value of weight i: (i·5) mod 8
		u := uint8(i * 5 % 8)
		blk[q3KQuants+i/128*32+i%32] |= (u & 3) << (2 * (i % 128 / 32))
		blk[i%32] |= (u >> 2) << (4*(i/128) + i%128/32)
	}
	got := make([]float32, QK)
	DequantizeQ3K(got, blk)
	for i, v := range got {
		want := 0.125 * float32(int(scales[i/16])-32) * float32(i*5%8-4)
		if v != want {
			t.Fatalf("weight %d = %v, want %v", i, v, want)
		}
	}
}

// TestQ2KLayout: weight i of a hand-built block is d·scale_g·q_i − dmin·min_g
// for its group g = i/16 (scale in the low nibble of byte g, min in the high
// one), q_i the bit pair 2k of byte l of its half (weight l + 32k).
func TestQ2KLayout(t *testing.T) {
	blk := make([]byte, q2KBytes)
	binary.LittleEndian.PutUint16(blk[q2KD:], F32ToFP16(0.5))
	binary.LittleEndian.PutUint16(blk[q2KDmin:], F32ToFP16(0.25))
	for g := 0; g < 16; g++ {
		blk[g] = uint8(g*7%16) | uint8(15-g)<<4
	}
	for i := 0; i < QK; i++ {
		u := uint8(i * 3 % 4)
		blk[q2KQuants+i/128*32+i%32] |= u << (2 * (i % 128 / 32))
	}
	got := make([]float32, QK)
	DequantizeQ2K(got, blk)
	for i, v := range got {
		g := i / 16
		want := 0.5*float32(g*7%16)*float32(i*3%4) - 0.25*float32(15-g)
		if v != want {
			t.Fatalf("weight %d = %v, want %v", i, v, want)
		}
	}
}

// TestKQuant2RoundTrip: toy's simple quantizers keep each weight within
// about one step of its group, on normal, all-positive, constant and
// all-zero blocks.
func TestKQuant2RoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(14, 14))
	inputs := map[string][]float32{"zeros": make([]float32, 2*QK), "constant": make([]float32, QK)}
	for i := range inputs["constant"] {
		inputs["constant"][i] = 0.75
	}
	normal, positive := make([]float32, 4*QK), make([]float32, QK)
	for i := range normal {
		normal[i] = float32(r.NormFloat64())
	}
	for i := range positive {
		positive[i] = 3 + float32(r.Float64())
	}
	inputs["normal"], inputs["positive"] = normal, positive
	// bound: the largest error as a fraction of max|x| (a step, plus the
	// rounding of the scales to their four to six bits)
	bounds := map[Type]float64{Q5_K: 1.0 / 14, Q3_K: 1.0 / 3, Q2_K: 1.0 / 2}
	for name, x := range inputs {
		for dt, frac := range bounds {
			b := EncodeRow(nil, x, dt)
			if n, _ := dt.RowBytes(len(x)); len(b) != n {
				t.Fatalf("%s %v: %d bytes, want %d", name, dt, len(b), n)
			}
			y := make([]float32, len(x))
			DecodeRow(y, b, dt)
			var amax, worst, sq float64
			for i := range x {
				amax = max(amax, math.Abs(float64(x[i])))
				e := math.Abs(float64(y[i] - x[i]))
				worst, sq = max(worst, e), sq+e*e
			}
			if worst > frac*amax+1e-6 {
				t.Errorf("%s %v: worst error %.4g, bound %.4g", name, dt, worst, frac*amax)
			}
			t.Logf("%s %v: worst error %.3g, rms %.3g (max|x| %.3g)", name, dt, worst, math.Sqrt(sq/float64(len(x))), amax)
		}
	}
}

// TestKQuant2Dot: Q5_K, Q3_K and Q2_K rows' dots with Q8_K activations
// equal, to float32 rounding, the float64 dot of the dequantized row with
// the dequantized activations; for quantizer output and for random bytes.
func TestKQuant2Dot(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 15))
	const K = 3 * QK
	x, w := make([]float32, K), make([]float32, K)
	for i := range x {
		x[i], w[i] = float32(r.NormFloat64()), float32(r.NormFloat64())
	}
	xq := quantizeQ8K(nil, x)
	for _, dt := range []Type{Q5_K, Q3_K, Q2_K} {
		random := make([]byte, K/QK*dt.TypeSize())
		for i := range random {
			random[i] = byte(r.Uint32())
		}
		for b := 0; b < len(random); b += dt.TypeSize() { // finite fp16 scales
			for _, o := range map[Type][]int{Q5_K: {0, 2}, Q3_K: {q3KD}, Q2_K: {q2KD, q2KDmin}}[dt] {
				binary.LittleEndian.PutUint16(random[b+o:], F32ToFP16(float32(r.NormFloat64()*0.01)))
			}
		}
		for _, wb := range [][]byte{EncodeRow(nil, w, dt), random} {
			wd := make([]float32, K)
			DecodeRow(wd, wb, dt)
			var want, mag float64
			for i := range wd {
				xi := float64(xq[i/QK].d) * float64(xq[i/QK].q[i%QK])
				want += float64(wd[i]) * xi
				mag += math.Abs(float64(wd[i]) * xi)
			}
			got := kquantDot(dt)(wb, xq)
			if math.Abs(float64(got)-want) > 1e-5*mag {
				t.Errorf("%v: dot %v, dequantized dot %v", dt, got, want)
			}
		}
	}
}
