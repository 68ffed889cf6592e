package quant

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"
)

// TestIQ4NLLayout: a hand-built block decodes to d·kvalues[q_i], weights
// 0–15 in the low nibbles and 16–31 in the high ones, with llama.cpp's
// table: index 0 is −127, 8 is 1, 15 is 113.
func TestIQ4NLLayout(t *testing.T) {
	blk := make([]byte, iq4NLBytes)
	binary.LittleEndian.PutUint16(blk, F32ToFP16(0.5))
	for i := 0; i < 32; i++ {
		q := uint8(i * 7 % 16)
		if i >= 16 {
			blk[2+i%16] |= q << 4
		} else {
			blk[2+i%16] |= q
		}
	}
	y := make([]float32, 32)
	DecodeRow(y, blk, IQ4_NL)
	table := []float32{-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113}
	for i, v := range y {
		if want := 0.5 * table[i*7%16]; v != want {
			t.Errorf("weight %d = %v, want %v", i, v, want)
		}
	}
}

// TestIQ4XSLayout: weight i of sub-block j of a hand-built super-block is
// d·(ls_j − 32)·kvalues[q_i], ls_j's low nibble in scales_l[j/2] (j even
// low) and its top two bits at bits 2j of scales_h, the indices 16 bytes
// per sub-block, weight l low and l+16 high in byte l — llama.cpp's
// dequantize_row_iq4_xs.
func TestIQ4XSLayout(t *testing.T) {
	blk := make([]byte, iq4XSBytes)
	binary.LittleEndian.PutUint16(blk, F32ToFP16(0.25))
	ls := [8]uint8{0, 1, 31, 32, 33, 47, 62, 63}
	var h uint16
	for j, l := range ls {
		blk[iq4XSScalesL+j/2] |= (l & 0xF) << (4 * (j % 2))
		h |= uint16(l>>4) << (2 * j)
	}
	binary.LittleEndian.PutUint16(blk[iq4XSScalesH:], h)
	for i := 0; i < QK; i++ {
		q := uint8(i * 5 % 16)
		at := iq4XSQuants + i/32*16 + i%16
		if i%32 >= 16 {
			blk[at] |= q << 4
		} else {
			blk[at] |= q
		}
	}
	y := make([]float32, QK)
	DecodeRow(y, blk, IQ4_XS)
	for i, v := range y {
		want := 0.25 * float32(int(ls[i/32])-32) * float32(kvaluesIQ4NL[i*5%16])
		if v != want {
			t.Fatalf("weight %d = %v, want %v", i, v, want)
		}
	}
}

// TestIQ4RoundTrip: toy's simple quantizers keep each weight within about
// half the widest gap between levels (24 steps of 127: 89 → 113) of its
// block's max|x|, plus the least-squares change of the step and the
// rounding of IQ4_XS's six-bit scales (measured: 0.10 and 0.09), on normal,
// all-positive, constant and all-zero inputs; a block whose values are
// levels comes back exactly.
func TestIQ4RoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(41, 41))
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
	bounds := map[Type]float64{IQ4_NL: 0.12, IQ4_XS: 0.14}
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
	levels := make([]float32, 32)
	for i := range levels {
		levels[i] = 0.125 * float32(kvaluesIQ4NL[(i*3)%16])
	}
	levels[0] = 0.125 * -127 // the block maximum sets the step exactly
	y := make([]float32, 32)
	DecodeRow(y, QuantizeIQ4NL(nil, levels), IQ4_NL)
	for i := range y {
		if y[i] != levels[i] {
			t.Errorf("IQ4_NL of levels: weight %d = %v, want %v", i, y[i], levels[i])
		}
	}
}

// TestIQ4Dot: IQ4_NL rows' dots with Q8_0 activations and IQ4_XS rows'
// with Q8_K activations equal, to float32 rounding, the float64 dot of the
// dequantized row with the dequantized activations; for quantizer output
// and for random bytes.
func TestIQ4Dot(t *testing.T) {
	r := rand.New(rand.NewPCG(42, 42))
	const K = 3 * QK
	x, w := make([]float32, K), make([]float32, K)
	for i := range x {
		x[i], w[i] = float32(r.NormFloat64()), float32(r.NormFloat64())
	}
	x8 := QuantizeQ8_0(nil, x)
	xk := quantizeQ8K(nil, x)
	for _, dt := range []Type{IQ4_NL, IQ4_XS} {
		random := make([]byte, K/dt.BlockSize()*dt.TypeSize())
		for i := range random {
			random[i] = byte(r.Uint32())
		}
		for b := 0; b < len(random); b += dt.TypeSize() { // finite fp16 scales
			binary.LittleEndian.PutUint16(random[b:], F32ToFP16(float32(r.NormFloat64()*0.01)))
		}
		for _, wb := range [][]byte{EncodeRow(nil, w, dt), random} {
			wd := make([]float32, K)
			DecodeRow(wd, wb, dt)
			var want, mag float64
			for i := range wd {
				var xi float64
				if dt == IQ4_NL {
					xi = float64(FP16ToF32(binary.LittleEndian.Uint16(x8[i/32*Q8BlockLen:]))) * float64(int8(x8[i/32*Q8BlockLen+2+i%32]))
				} else {
					xi = float64(xk[i/QK].d) * float64(xk[i/QK].q[i%QK])
				}
				want += float64(wd[i]) * xi
				mag += math.Abs(float64(wd[i]) * xi)
			}
			var got float32
			if dt == IQ4_NL {
				bytes, quant := q32Format(dt)
				got = dotQ32(wb, bytes, quant, x8)
			} else {
				got = kquantDot(dt)(wb, xk)
			}
			if math.Abs(float64(got)-want) > 1e-5*mag {
				t.Errorf("%v: dot %v, dequantized dot %v", dt, got, want)
			}
		}
	}
}
