package quant

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"
)

// TestQ4KLayout: a block built by hand decodes to d·scale_j·q − dmin·min_j,
// with the scales and mins of sub-blocks 4–7 split across the packed bytes
// as llama.cpp's get_scale_min_k4 reads them.
func TestQ4KLayout(t *testing.T) {
	blk := make([]byte, q4KBytes)
	binary.LittleEndian.PutUint16(blk, F32ToFP16(0.5))
	binary.LittleEndian.PutUint16(blk[2:], F32ToFP16(0.25))
	scale := [8]uint8{1, 2, 3, 63, 17, 33, 48, 60}
	mins := [8]uint8{0, 5, 62, 7, 19, 40, 1, 63}
	s := blk[q4KScales:q4KQuants]
	for j := 0; j < 4; j++ {
		s[j] = scale[j] | (scale[j+4]>>4)<<6
		s[j+4] = mins[j] | (mins[j+4]>>4)<<6
		s[j+8] = scale[j+4]&0xF | (mins[j+4]&0xF)<<4
	}
	for j := 0; j < 8; j++ {
		if sc, m := q4KScaleMin(j, s); sc != scale[j] || m != mins[j] {
			t.Fatalf("sub-block %d: scale %d min %d, want %d %d", j, sc, m, scale[j], mins[j])
		}
	}
	for i := 0; i < QK; i++ { // quant of weight i: (i·7) mod 16
		q := uint8(i * 7 % 16)
		at := q4KQuants + i/64*32 + i%32
		if i%64 >= 32 {
			blk[at] |= q << 4
		} else {
			blk[at] |= q
		}
	}
	got := make([]float32, QK)
	DequantizeQ4K(got, blk)
	for i, v := range got {
		j := i / 32
		want := 0.5*float32(scale[j])*float32(i*7%16) - 0.25*float32(mins[j])
		if v != want {
			t.Fatalf("weight %d = %v, want %v", i, v, want)
		}
	}
}

// TestQ6KLayout: weight i of a hand-built block is d·scale_{i/16}·(q_i − 32),
// its six bits split between the low and high arrays as llama.cpp's
// dequantize_row_q6_K reads them.
func TestQ6KLayout(t *testing.T) {
	blk := make([]byte, q6KBytes)
	binary.LittleEndian.PutUint16(blk[q6KD:], F32ToFP16(0.125))
	for j := 0; j < 16; j++ {
		blk[q6KScales+j] = byte(int8(j*9 - 70))
	}
	for i := 0; i < QK; i++ { // the 6-bit value of weight i: (i·5) mod 64
		u := uint8(i * 5 % 64)
		half, r := i/128, i%128
		k, l := r/32, r%32
		if k >= 2 {
			blk[half*64+l+32*(k%2)] |= (u & 0xF) << 4
		} else {
			blk[half*64+l+32*(k%2)] |= u & 0xF
		}
		blk[q6KHigh+half*32+l] |= (u >> 4) << (2 * k)
	}
	got := make([]float32, QK)
	DequantizeQ6K(got, blk)
	for i, v := range got {
		want := 0.125 * float32(int8((i/16)*9-70)) * float32(i*5%64-32)
		if v != want {
			t.Fatalf("weight %d = %v, want %v", i, v, want)
		}
	}
}

// TestKQuantRoundTrip: toy's quantizers keep each weight within one step of
// its sub-block (plus the six-bit rounding of the scales), on normal,
// all-positive, constant and all-zero blocks.
func TestKQuantRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 4))
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
	for name, x := range inputs {
		for _, dt := range []Type{Q4_K, Q6_K} {
			b := EncodeRow(nil, x, dt)
			if n, _ := dt.RowBytes(len(x)); len(b) != n {
				t.Fatalf("%s %v: %d bytes, want %d", name, dt, len(b), n)
			}
			y := make([]float32, len(x))
			DecodeRow(y, b, dt)
			var amax, worst float64
			for i := range x {
				amax = max(amax, math.Abs(float64(x[i])))
				worst = max(worst, math.Abs(float64(y[i]-x[i])))
			}
			bound := amax / 7 // Q4_K: 15 steps over the range, scales to 1/63
			if dt == Q6_K {
				bound = amax / 40
			}
			if worst > bound+1e-6 {
				t.Errorf("%s %v: worst error %.4g, bound %.4g", name, dt, worst, bound)
			}
		}
	}
}

// TestKQuantDot: a k-quant row's dot product with Q8_K activations equals,
// to float32 rounding, the float64 dot of the dequantized row with the
// dequantized activations; and Q8_K quantizes as llama.cpp describes
// (the element of largest magnitude to −127, block sums of 16).
func TestKQuantDot(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 5))
	const K = 3 * QK
	x, w := make([]float32, K), make([]float32, K)
	for i := range x {
		x[i], w[i] = float32(r.NormFloat64()), float32(r.NormFloat64())
	}
	x[300] = -9 // the largest magnitude of block 1
	xq := quantizeQ8K(nil, x)
	if xq[1].q[300-QK] != -127 || xq[1].d != 1/(-127/float32(-9)) {
		t.Errorf("Q8_K block 1: q[44] = %d, d = %v; want −127 and 1/(−127/max), max = −9", xq[1].q[300-QK], xq[1].d)
	}
	for b := range xq {
		for j := range xq[b].bsums {
			var s int16
			for _, q := range xq[b].q[16*j : 16*j+16] {
				s += int16(q)
			}
			if s != xq[b].bsums[j] {
				t.Fatalf("block %d: bsums[%d] = %d, want %d", b, j, xq[b].bsums[j], s)
			}
		}
	}
	for _, dt := range []Type{Q4_K, Q6_K} {
		wb := EncodeRow(nil, w, dt)
		wd := make([]float32, K)
		DecodeRow(wd, wb, dt)
		var want, mag float64
		for i := range wd {
			xi := float64(xq[i/QK].d) * float64(xq[i/QK].q[i%QK])
			want += float64(wd[i]) * xi
			mag += math.Abs(float64(wd[i]) * xi)
		}
		got := kquantDot(dt)(wb, xq)
		if math.Abs(float64(got)-want) > 1e-6*mag {
			t.Errorf("%v: dot %v, dequantized dot %v", dt, got, want)
		}
	}
}
