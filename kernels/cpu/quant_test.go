// The 2- to 6-bit weight types (Q4_K, Q6_K, Q5_K, Q3_K, Q2_K, Q4_0, Q5_0,
// Q4_1, Q5_1, IQ4_NL, IQ4_XS, MXFP4) against the pure-Go backend, bit for bit, on every variant and its C reference. On an amd64
// host with qemu-user and the aarch64 C library, the arm64 variants (and Go's
// arm64 arithmetic, whose fused multiply-adds they follow) run with
//
//	GOARCH=arm64 go test -c -o /tmp/cpu-arm64.test ./kernels/cpu
//	cd kernels/cpu && qemu-aarch64 -L /usr/aarch64-linux-gnu /tmp/cpu-arm64.test -test.run 'Quant4|Q8K|Q8_1'

package cpu

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/toyml/toy/toy/tensor"
	"github.com/toyml/toy/toy/tensor/quant"
)

var quant4Types = []tensor.DType{tensor.Q4_K, tensor.Q6_K, tensor.Q5_K, tensor.Q3_K, tensor.Q2_K,
	tensor.Q4_0, tensor.Q5_0, tensor.Q4_1, tensor.Q5_1, tensor.IQ4_NL, tensor.IQ4_XS, tensor.MXFP4}

// quant4Ks are the row lengths tried for each type: whole k-quant
// super-blocks, or 32-weight blocks.
func quant4Ks(dt tensor.DType) []int {
	if dt.BlockSize() == quant.QK {
		return []int{256, 512, 1024}
	}
	return []int{32, 96, 256}
}

// quant4Ms cover decode (1-3 rows: the GEMV, in pairs and alone) and prefill
// (from 4: packed tiles, four activation rows at a time and the rest).
var quant4Ms = []int{1, 2, 3, 4, 5, 7, 16, 33}

// quant4Ns are not multiples of the tiles (4, 8, 16 rows) but for one, and
// 100 spans several worker chunks and the GEMVs' prefetches.
var quant4Ns = []int{1, 3, 16, 17, 33, 100}

// quant4Activations returns x [M, K] of random rows at scales 1e-3 … 1e3;
// row 0's first 32 values are ties for the quantizers (the block maximum
// 127 makes the scale exactly ±1, and k+0.5 rounds to even), and row 1 has
// two elements of largest magnitude with opposite signs (Q8_K keeps the
// first one's sign).
func quant4Activations(r *rand.Rand, M, K int) *tensor.Tensor {
	x := tensor.New(M, K)
	d := x.Data()
	for m := range M {
		scale := math.Pow(10, float64(r.IntN(7))-3)
		for k := range K {
			d[m*K+k] = float32(r.NormFloat64() * scale)
		}
	}
	for i := 0; i < 32; i++ {
		d[i] = float32(i%16) - 7.5
	}
	d[5] = -127
	if M > 1 {
		d[K+3], d[K+9] = 1000, -1000
		if K > 256 {
			d[K+256+7], d[K+256+200] = -50, 50
		}
	}
	return x
}

// randomBytesWeights returns w [N, K] of type dt with random bytes for every
// quant, scale and min (Q6_K scales negative too), and small finite fp16
// block scales (MXFP4's exponent bytes stay random, 0 … 255): the whole
// range the kernels must take, not only what toy's quantizers write.
func randomBytesWeights(t *testing.T, r *rand.Rand, dt tensor.DType, N, K int) *tensor.Tensor {
	rowBytes, ok := dt.RowBytes(K)
	if !ok {
		t.Fatalf("%v rows of %d", dt, K)
	}
	raw := make([]byte, N*rowBytes)
	for i := range raw {
		raw[i] = byte(r.Uint32())
	}
	var block int
	var dOffs []int
	switch dt {
	case tensor.Q4_K:
		block, dOffs = 144, []int{0, 2}
	case tensor.Q6_K:
		block, dOffs = 210, []int{208}
	case tensor.Q4_0:
		block, dOffs = 18, []int{0}
	case tensor.Q5_0:
		block, dOffs = 22, []int{0}
	case tensor.Q5_K:
		block, dOffs = 176, []int{0, 2}
	case tensor.Q3_K:
		block, dOffs = 110, []int{108}
	case tensor.Q2_K:
		block, dOffs = 84, []int{80, 82}
	case tensor.Q4_1:
		block, dOffs = 20, []int{0, 2}
	case tensor.Q5_1:
		block, dOffs = 24, []int{0, 2}
	case tensor.IQ4_NL:
		block, dOffs = 18, []int{0}
	case tensor.IQ4_XS:
		block, dOffs = 136, []int{0}
	case tensor.MXFP4:
		block = 17
	}
	for b := 0; b < len(raw); b += block {
		for _, o := range dOffs {
			binary.LittleEndian.PutUint16(raw[b+o:], quant.F32ToFP16(float32(r.NormFloat64()*0.01)))
		}
	}
	w, err := tensor.FromBytes(dt, raw, N, K)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// TestMatMulQuant4: Q4_K, Q6_K, Q5_K, Q3_K, Q2_K, Q4_0, Q5_0, Q4_1, Q5_1,
// IQ4_NL, IQ4_XS and MXFP4 products are bit-identical to tensor.Go{} on every variant (and its C references), for weights written
// by toy's quantizers and for random bytes.
func TestMatMulQuant4(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 32))
	bes := backends(t)
	for _, dt := range quant4Types {
		for _, K := range quant4Ks(dt) {
			for _, M := range quant4Ms {
				for _, N := range quant4Ns {
					x := quant4Activations(r, M, K)
					for _, raw := range []bool{false, true} {
						var w *tensor.Tensor
						if raw {
							w = randomBytesWeights(t, r, dt, N, K)
						} else {
							w = encode(t, randTensor(r, N, K), dt)
						}
						want := tensor.New(M, N)
						tensor.Go{}.MatMul(want, x, w)
						for name, b := range bes {
							got := tensor.New(M, N)
							b.MatMul(got, x, w)
							if i, ok := identical(got.Data(), want.Data()); !ok {
								t.Fatalf("%s %v [%d %d]·[%d %d]ᵀ (random bytes %v): element %d = %v, Go %v (want bit-identical)",
									name, dt, M, K, N, K, raw, i, got.Data()[i], want.Data()[i])
							}
						}
					}
				}
			}
		}
	}
}

// TestMatMulQuant4Threads: the same products split over several workers
// (chunks of 16 weight rows and a ragged last one) agree bit for bit.
func TestMatMulQuant4Threads(t *testing.T) {
	defer tensor.SetThreads(tensor.Threads())
	tensor.SetThreads(3)
	r := rand.New(rand.NewPCG(33, 34))
	b := backends(t)[Variants()[0]]
	for _, dt := range quant4Types {
		K := quant4Ks(dt)[1]
		for _, s := range [][2]int{{1, 203}, {2, 77}, {9, 130}, {40, 61}} {
			M, N := s[0], s[1]
			x, w := quant4Activations(r, M, K), randomBytesWeights(t, r, dt, N, K)
			want, got := tensor.New(M, N), tensor.New(M, N)
			tensor.Go{}.MatMul(want, x, w)
			b.MatMul(got, x, w)
			if i, ok := identical(got.Data(), want.Data()); !ok {
				t.Fatalf("%v [%d %d]·[%d %d]ᵀ on 3 threads: element %d = %v, Go %v", dt, M, K, N, K, i, got.Data()[i], want.Data()[i])
			}
		}
	}
}

// TestQuantizeQ8KRef: each variant's Q8_K quantizer writes its reference's
// bytes (whose products TestMatMulQuant4 holds to Go's), on ties, all-zero
// blocks and maxima of either sign.
func TestQuantizeQ8KRef(t *testing.T) {
	r := rand.New(rand.NewPCG(35, 36))
	const nb = 40
	x := make([]float32, 256*nb)
	for i := range x {
		x[i] = float32(r.NormFloat64() * math.Pow(10, float64(i/256%9-4)))
	}
	for i := 0; i < 256; i++ { // block 0: ties, maximum −127 (scale exactly 1)
		x[i] = float32(i%32) - 15.5
	}
	x[77] = -127
	for i := 256; i < 512; i++ { // block 1: zero
		x[i] = 0
	}
	x[512+3], x[512+100] = 9, -9 // block 2: the first of two maxima sets the sign
	x[768+250], x[768+10] = -3e4, 3e4
	for name, b := range backends(t) {
		if len(name) > 4 && name[len(name)-4:] == "-ref" {
			continue
		}
		got, want := make([]byte, nb*q8KBytes), make([]byte, nb*q8KBytes)
		call(b.ks.quantizeQ8K, ptr(got), ptr(x), u(nb))
		call(b.lib.ref.quantizeQ8K, ptr(want), ptr(x), u(nb))
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("%s: byte %d (block %d, offset %d) = %d, reference %d", name, i, i/q8KBytes, i%q8KBytes, got[i], want[i])
			}
		}
	}
}

// TestQuantizeQ8_1: each variant's Q8_1 quantizer (Q4_1 and Q5_1
// activations) writes its reference's bytes: d and q as Q8_0's, s =
// fp16(d·Σq), on ties, all-zero blocks and maxima of either sign.
func TestQuantizeQ8_1(t *testing.T) {
	r := rand.New(rand.NewPCG(37, 38))
	const nb = 40
	x := make([]float32, 32*nb)
	for i := range x {
		x[i] = float32(r.NormFloat64() * math.Pow(10, float64(i/32%9-4)))
	}
	for i := 0; i < 32; i++ { // block 0: ties
		x[i] = float32(i%16) - 7.5
	}
	x[5] = -127
	for i := 32; i < 64; i++ { // block 1: zero
		x[i] = 0
	}
	x[64+3], x[64+20] = 9, -9
	for name, b := range backends(t) {
		if len(name) > 4 && name[len(name)-4:] == "-ref" {
			continue
		}
		got, want := make([]byte, nb*q8_1Bytes), make([]byte, nb*q8_1Bytes)
		call(b.ks.quantizeQ8_1, ptr(got), ptr(x), u(nb))
		call(b.lib.ref.quantizeQ8_1, ptr(want), ptr(x), u(nb))
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("%s: byte %d (block %d, offset %d) = %d, reference %d", name, i, i/q8_1Bytes, i%q8_1Bytes, got[i], want[i])
			}
		}
	}
}
