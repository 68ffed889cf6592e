package quant

import (
	"math"
	"testing"
)

func TestFP16RoundTripsEveryValue(t *testing.T) {
	for i := 0; i < 1<<16; i++ {
		h := uint16(i)
		f := FP16ToF32(h)
		if math.IsNaN(float64(f)) {
			continue
		}
		if back := F32ToFP16(f); back != h {
			t.Fatalf("fp16 %#04x → %v → %#04x", h, f, back)
		}
	}
}

func TestF32ToFP16RoundsHalfToEven(t *testing.T) {
	for _, c := range []struct {
		in   float32
		want uint16
	}{
		{1, 0x3c00},
		{1 + 1.0/2048, 0x3c00},      // halfway between 1 and 1+2⁻¹⁰: to even (1)
		{1 + 3.0/2048, 0x3c02},      // halfway between 1+2⁻¹⁰ and 1+2·2⁻¹⁰: to even
		{65504, 0x7bff},             // largest finite
		{65520, 0x7c00},             // rounds to +Inf
		{5.960464477539063e-08, 1},  // smallest subnormal
		{2.9802322387695312e-08, 0}, // half of it: ties to even (0)
		{-2, 0xc000},
	} {
		if got := F32ToFP16(c.in); got != c.want {
			t.Errorf("F32ToFP16(%v) = %#04x, want %#04x", c.in, got, c.want)
		}
	}
}

func TestBF16(t *testing.T) {
	if got := BF16ToF32(F32ToBF16(1.00390625)); got != 1 { // 1 + 2⁻⁸: halfway, to even
		t.Errorf("bf16(1+2⁻⁸) = %v, want 1", got)
	}
	if got := BF16ToF32(F32ToBF16(-3.5)); got != -3.5 {
		t.Errorf("bf16(-3.5) = %v", got)
	}
}

func TestQuantizeQ8_0ByHand(t *testing.T) {
	// A block whose largest magnitude is 127 has scale 1 and quantizes to the
	// rounded values; 2.5 rounds half to even (2), −0.5 to 0.
	x := make([]float32, 32)
	x[0], x[1], x[2], x[3] = 127, 2.5, -0.5, -126.6
	b := QuantizeQ8_0(nil, x)
	if len(b) != Q8BlockLen || FP16ToF32(uint16(b[0])|uint16(b[1])<<8) != 1 {
		t.Fatalf("block %v: want 34 bytes with scale 1", b[:2])
	}
	if q := []int8{int8(b[2]), int8(b[3]), int8(b[4]), int8(b[5])}; q[0] != 127 || q[1] != 2 || q[2] != 0 || q[3] != -127 {
		t.Fatalf("quants %v, want [127 2 0 -127]", q)
	}
	out := make([]float32, 32)
	DequantizeQ8_0(out, b)
	if out[0] != 127 || out[1] != 2 || out[3] != -127 {
		t.Fatalf("dequantized %v", out[:4])
	}
	// An all-zero block has scale 0 and zero quants.
	z := QuantizeQ8_0(nil, make([]float32, 32))
	for _, v := range z {
		if v != 0 {
			t.Fatalf("zero block encodes as %v", z)
		}
	}
}
