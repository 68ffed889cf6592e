package quant

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"testing"
)

// e2m1 are the 16 values an FP4 (E2M1) code stands for, by code: sign bit
// 3, then exponent bits 2–1 and the mantissa bit 0 (codes 1 and 9 are the
// subnormals ±0.5). MXFP4 stores the code; the block scale multiplies.
var e2m1 = [16]float64{0, 0.5, 1, 1.5, 2, 3, 4, 6, 0, -0.5, -1, -1.5, -2, -3, -4, -6}

// mxfp4Block builds a block from its exponent byte and its 32 codes:
// weights 0–15 in the low nibbles, 16–31 in the high ones.
func mxfp4Block(e uint8, codes [32]uint8) []byte {
	blk := make([]byte, mxfp4Bytes)
	blk[0] = e
	for i, c := range codes {
		if i < 16 {
			blk[1+i] |= c
		} else {
			blk[1+i-16] |= c << 4
		}
	}
	return blk
}

// TestMXFP4Layout: weight i of a hand-built block is e2m1[code_i]·2^(e−127),
// codes of weights 0–15 in the low nibbles and 16–31 in the high ones, for
// every kind of exponent byte as llama.cpp reads it: e = 0 is 2⁻¹²⁷ (its
// half-steps 2⁻¹²⁸, subnormal), e = 255 (NaN in the OCP format) is 2¹²⁸,
// so that ±0.5 gives ±2¹²⁷ and ±1 … ±6 overflow to ±Inf; code 8 (−0) is +0.
func TestMXFP4Layout(t *testing.T) {
	var codes [32]uint8
	for i := range codes {
		codes[i] = uint8(i*7+3) % 16 // weights 0–15 and 16–31 both cover all 16 codes
	}
	for _, e := range []uint8{0, 1, 2, 3, 100, 126, 127, 128, 200, 253, 254, 255} {
		y := make([]float32, 32)
		DecodeRow(y, mxfp4Block(e, codes), MXFP4)
		scale := math.Ldexp(1, int(e)-127)
		for i, v := range y {
			want := float32(e2m1[codes[i]] * scale) // exact, or ±Inf beyond float32
			if math.Float32bits(v) != math.Float32bits(want) {
				t.Errorf("e=%d weight %d (code %d) = %v, want %v", e, i, codes[i], v, want)
			}
		}
	}
	// A few by hand.
	y := make([]float32, 32)
	DecodeRow(y, mxfp4Block(127, [32]uint8{1, 7, 15, 8, 31 - 16: 3}), MXFP4)
	if y[0] != 0.5 || y[1] != 6 || y[2] != -6 || math.Float32bits(y[3]) != 0 || y[15] != 1.5 || y[31] != 0 {
		t.Errorf("e=127, codes 1, 7, 15, 8, …, 3 (weight 15): %v, want 0.5 6 −6 +0 … 1.5 … 0", y)
	}
	DecodeRow(y, mxfp4Block(255, [32]uint8{1, 9, 2, 14}), MXFP4)
	if y[0] != float32(math.Ldexp(1, 127)) || y[1] != -y[0] || !math.IsInf(float64(y[2]), 1) || !math.IsInf(float64(y[3]), -1) {
		t.Errorf("e=255, codes 1, 9, 2, 14: %v, want 2¹²⁷ −2¹²⁷ +Inf −Inf", y[:4])
	}
	DecodeRow(y, mxfp4Block(0, [32]uint8{1, 7}), MXFP4)
	if math.Float32bits(y[0]) != 0x00200000 || y[1] != float32(math.Ldexp(12, -128)) {
		t.Errorf("e=0, codes 1, 7: %v, want 2⁻¹²⁸ (bits 0x00200000) and 12·2⁻¹²⁸", y[:2])
	}
}

// mxfp4Golden is testdata/mxfp4.golden.json, what llama.cpp's own
// libraries make of MXFP4 (written by testdata/mxfp4_llamacpp.py).
type mxfp4Golden struct {
	Quantize []struct {
		Name, X, Q string
	}
	Exponents  [][4]int
	Dequantize struct {
		SHA256 string `json:"sha256"`
	}
	Dot struct {
		M, N, K               int
		X, Q8, W              string
		Generic, AVX2, AVX512 []uint32
	}
}

func readMXFP4Golden(t *testing.T) *mxfp4Golden {
	t.Helper()
	b, err := os.ReadFile("testdata/mxfp4.golden.json")
	if err != nil {
		t.Fatal(err)
	}
	var g mxfp4Golden
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatal(err)
	}
	return &g
}

func unhex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func float32sOf(b []byte) []float32 {
	x := make([]float32, len(b)/4)
	for i := range x {
		x[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return x
}

// TestMXFP4QuantizeLlamaCpp: QuantizeMXFP4 (and RowQuantizer) write the
// bytes llama.cpp's ggml_quantize_chunk writes, on ordinary blocks, exact
// ties between levels at several scales, a largest magnitude just below a
// power of two, zeros of both signs, tiny, subnormal and huge blocks, and
// blocks holding NaN or ±Inf.
func TestMXFP4QuantizeLlamaCpp(t *testing.T) {
	g := readMXFP4Golden(t)
	var all []float32
	var want []byte
	for _, c := range g.Quantize {
		x, q := float32sOf(unhex(t, c.X)), unhex(t, c.Q)
		if got := QuantizeMXFP4(nil, x); !slices.Equal(got, q) {
			t.Errorf("%s: toy %x\n\tllama.cpp %x", c.Name, got, q)
		}
		all, want = append(all, x...), append(want, q...)
	}
	got, quantize := make([]byte, len(want)), RowQuantizer(MXFP4)
	for r := range len(all) / 64 { // rows of 64: two blocks each
		quantize(got[r*2*mxfp4Bytes:(r+1)*2*mxfp4Bytes], all[r*64:(r+1)*64], nil)
	}
	if !slices.Equal(got, want) {
		t.Error("RowQuantizer: bytes differ")
	}
	t.Logf("%d blocks bit for bit", len(g.Quantize))
}

// TestMXFP4ExponentLlamaCpp: the exponent byte of a block whose largest
// magnitude is one of the 256 floats below each power of two 2^j, j = −147 …
// 128, is llama.cpp's: floor(log2f(amax)) + 125, where log2f rounds the
// c floats nearest below 2^j up to j (c = 44 near 2¹²⁸, 0 for tiny j), and
// negative values wrap to their low byte.
func TestMXFP4ExponentLlamaCpp(t *testing.T) {
	g := readMXFP4Golden(t)
	pow2Bits := func(j int) uint32 {
		switch {
		case j < -149:
			return 0
		case j < -126:
			return 1 << (j + 149)
		}
		return uint32(j+127) << 23
	}
	checked, up := 0, 0
	for _, b := range g.Exponents {
		j, c, eUp, eLo := b[0], b[1], uint8(b[2]), uint8(b[3])
		for m := uint32(0); m <= 256; m++ {
			if m >= pow2Bits(j)-pow2Bits(j-1) || (j == 128 && m == 0) {
				continue // only [2^(j−1), 2^j), and no +Inf
			}
			bits := pow2Bits(j) - m
			want := eLo
			if int(m) <= c {
				want = eUp
			}
			x := make([]float32, 32)
			x[0] = math.Float32frombits(bits)
			if got := QuantizeMXFP4(nil, x)[0]; got != want {
				t.Errorf("amax %v (2^%d − %d ulps): e = %d, llama.cpp %d", x[0], j, m, got, want)
			}
			checked++
		}
		up += c
	}
	t.Logf("%d largest magnitudes checked, %d of them rounded up to a power of two by log2f", checked, up)
}

// TestMXFP4DequantizeLlamaCpp: 256 blocks, block b with e = b and codes
// (i + b) mod 16, dequantize to llama.cpp's dequantize_row_mxfp4 floats
// (their SHA-256).
func TestMXFP4DequantizeLlamaCpp(t *testing.T) {
	g := readMXFP4Golden(t)
	var src []byte
	for b := 0; b < 256; b++ {
		var codes [32]uint8
		for i := range codes {
			codes[i] = uint8((i + b) % 16)
		}
		src = append(src, mxfp4Block(uint8(b), codes)...)
	}
	y := make([]float32, 256*32)
	DecodeRow(y, src, MXFP4)
	raw := make([]byte, 4*len(y))
	for i, v := range y {
		binary.LittleEndian.PutUint32(raw[4*i:], math.Float32bits(v))
	}
	if got := fmt.Sprintf("%x", sha256.Sum256(raw)); got != g.Dequantize.SHA256 {
		t.Errorf("SHA-256 %s, llama.cpp %s", got, g.Dequantize.SHA256)
	}
}

// TestMXFP4QuantizeRule: QuantizeMXFP4 against the rule stated
// independently, on random blocks whose largest magnitude is not within
// 256 ulps below a power of two: the scale s = 2^(e−127) is the power of two
// with max|x|/s in [4, 8) (e = ⌊log₂ max|x|⌋ + 125), and each weight gets
// the E2M1 value v minimizing |x − v·s| in exact arithmetic — ties to the
// smaller |v|, 0 as code 0 (+0) — beyond ±6·s that is ±6.
func TestMXFP4QuantizeRule(t *testing.T) {
	r := rand.New(rand.NewPCG(39, 4))
	blocks, ties := 0, 0
	for blocks < 2000 {
		x := make([]float32, 32)
		sc := math.Ldexp(1, r.IntN(60)-30)
		for i := range x {
			switch r.IntN(4) {
			case 0: // on a level or halfway between two, at the block's step
				x[i] = float32(float64(r.IntN(33)-16) / 4 * sc)
			default:
				x[i] = float32(r.NormFloat64() * sc)
			}
		}
		var amax float64
		for _, v := range x {
			amax = max(amax, math.Abs(float64(v)))
		}
		frac, exp := math.Frexp(amax) // amax = frac·2^exp, frac in [0.5, 1)
		if amax == 0 || frac > 1-256*math.Ldexp(1, -24) {
			continue // near a power of two: log2f's rounding decides (TestMXFP4ExponentLlamaCpp)
		}
		blocks++
		e := exp - 1 + 125 // ⌊log₂ amax⌋ = exp − 1
		s := math.Ldexp(1, e-127)
		q := QuantizeMXFP4(nil, x)
		if int(q[0]) != e {
			t.Fatalf("max|x| %v: e = %d, want %d", amax, q[0], e)
		}
		for i, v := range x {
			best, bestErr := 0, math.Inf(1)
			for c, l := range e2m1 {
				if c == 8 {
					continue // −0: never chosen over +0
				}
				err := math.Abs(float64(v) - l*s)
				if err == bestErr {
					ties++
				}
				if err < bestErr || (err == bestErr && math.Abs(l) < math.Abs(e2m1[best])) {
					best, bestErr = c, err
				}
			}
			code := q[1+i%16]
			if i >= 16 {
				code >>= 4
			}
			if int(code&0xF) != best {
				t.Fatalf("x = %v (step %v): code %d (%v), want %d (%v)", v, s, code&0xF, e2m1[code&0xF], best, e2m1[best])
			}
		}
	}
	t.Logf("%d blocks, %d ties", blocks, ties)
}

// TestMXFP4RoundTrip: a block of E2M1 values times a power of two whose
// largest is 4 or 6 steps comes back exactly; otherwise each weight comes
// back within a quarter of the block's max|x| (half the widest gap, 4 → 6,
// or the distance beyond 6 steps, both at most max|x|/4 when
// max|x|/s is in [4, 8)); zeros and NaNs come back as +0.
func TestMXFP4RoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(39, 39))
	exact := make([]float32, 64)
	for i := range exact {
		exact[i] = float32(e2m1[r.IntN(16)] * math.Ldexp(1, -9))
	}
	exact[5], exact[40] = float32(-6*math.Ldexp(1, -9)), float32(4*math.Ldexp(1, -9))
	y := make([]float32, 64)
	DecodeRow(y, EncodeRow(nil, exact, MXFP4), MXFP4)
	if !slices.Equal(y, exact) {
		t.Errorf("E2M1 values: %v\n\tcame back as %v", exact, y)
	}
	x := make([]float32, 32*64)
	for i := range x {
		x[i] = float32(r.NormFloat64() * math.Ldexp(1, i/32-32))
	}
	x[7], x[100] = float32(math.NaN()), 0
	y = make([]float32, len(x))
	DecodeRow(y, QuantizeMXFP4(nil, x), MXFP4)
	var worstRel float64
	for b := 0; b < len(x); b += 32 {
		var amax float64
		for _, v := range x[b : b+32] {
			if !math.IsNaN(float64(v)) {
				amax = max(amax, math.Abs(float64(v)))
			}
		}
		for i := b; i < b+32; i++ {
			if math.IsNaN(float64(x[i])) || x[i] == 0 {
				if math.Float32bits(y[i]) != 0 {
					t.Errorf("x[%d] = %v comes back as %v, want +0", i, x[i], y[i])
				}
				continue
			}
			err := math.Abs(float64(y[i] - x[i]))
			if err > amax/4 {
				t.Errorf("x[%d] = %v comes back as %v: error %.3g > max|x|/4 = %.3g", i, x[i], y[i], err, amax/4)
			}
			worstRel = max(worstRel, err/amax)
		}
	}
	t.Logf("worst error %.3f·max|x| (bound 0.25)", worstRel)
}
