// MXFP4 weights (gpt-oss's experts) against the pure-Go backend: the
// kernels of csrc/iq4.c, on every variant and its C reference, for every
// exponent byte.

package cpu

import (
	"encoding/binary"
	"math/rand/v2"
	"testing"

	"github.com/toyml/toy/toy/tensor"
	"github.com/toyml/toy/toy/tensor/quant"
)

// mxfp4Weights returns w [N, K] in MXFP4 with random index bytes, and as
// exponent byte of every block of row n exp(n): a row's dot products then
// take one scale throughout, so that each of them shows what the kernels
// make of that exponent alone.
func mxfp4Weights(t *testing.T, r *rand.Rand, N, K int, exp func(n int) uint8) *tensor.Tensor {
	raw := make([]byte, N*K/32*17)
	for i := range raw {
		raw[i] = byte(r.Uint32())
		if i%17 == 0 {
			raw[i] = exp(i / (K / 32 * 17))
		}
	}
	w, err := tensor.FromBytes(tensor.MXFP4, raw, N, K)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// mxfp4Activations returns quant4Activations with, from three rows on, the
// last one of magnitude 10⁻⁴: Q8_0 scales among fp16's subnormals, whose
// products with the smallest exponents are float32 subnormals.
func mxfp4Activations(r *rand.Rand, M, K int) *tensor.Tensor {
	x := quant4Activations(r, M, K)
	if M >= 3 {
		last := x.Data()[(M-1)*K:]
		for i := range last {
			last[i] = float32(r.NormFloat64() * 1e-4)
		}
	}
	return x
}

// TestMXFP4MatchesGo: MatMul with MXFP4 weights is tensor.Go{}'s bit for
// bit on every variant and its reference, decode (1-3 rows) and prefill
// (from 4: packed tiles), on one and three threads, for ragged shapes and
// weights of three kinds: quantized by toy; random bytes under exponents
// 100 … 149 (2⁻²⁸ … 2²¹, where the sums are sensitive to every block);
// and one row per exponent byte e = 0 … 255 — 0 and 1 the subnormal
// scales 2⁻¹²⁸ and 2⁻¹²⁷ (products that underflow gradually or to zero),
// 255 the scale 2¹²⁷ (products that overflow to ±Inf, and NaN where a
// block's integer dot is 0). Embedding of an MXFP4 table (tensor.Go{}'s
// code on the native backend) gives Go's rows too.
func TestMXFP4MatchesGo(t *testing.T) {
	r := rand.New(rand.NewPCG(39, 39))
	defer tensor.SetThreads(tensor.Threads())
	bes := backends(t)
	for _, threads := range []int{1, 3} {
		tensor.SetThreads(threads)
		for _, s := range [][3]int{{1, 96, 33}, {2, 32, 17}, {3, 320, 259}, {4, 64, 9}, {7, 96, 256}, {9, 256, 40}, {33, 160, 61}} {
			M, K, N := s[0], s[1], s[2]
			x := mxfp4Activations(r, M, K)
			weights := map[string]*tensor.Tensor{
				"quantized":       encode(t, randTensor(r, N, K), tensor.MXFP4),
				"e 100…149":       mxfp4Weights(t, r, N, K, func(int) uint8 { return uint8(100 + r.IntN(50)) }),
				"e = row mod 256": mxfp4Weights(t, r, N, K, func(n int) uint8 { return uint8(n) }),
			}
			if N < 256 { // every exponent byte still: the rows take 0, 1, 254, 255 and the rest
				weights["e = 0, 1, 254, 255, …"] = mxfp4Weights(t, r, N, K, func(n int) uint8 { return []uint8{0, 1, 254, 255}[n%4] + uint8(n/4*4) })
			}
			for kind, w := range weights {
				want := tensor.New(M, N)
				tensor.Go{}.MatMul(want, x, w)
				for name, b := range bes {
					got := tensor.New(M, N)
					b.MatMul(got, x, w)
					if i, ok := identical(got.Data(), want.Data()); !ok {
						t.Fatalf("%s, %d threads, MXFP4 [%d %d]·[%d %d]ᵀ (%s): element %d = %v, Go %v (want bit-identical)",
							name, threads, M, K, N, K, kind, i, got.Data()[i], want.Data()[i])
					}
				}
			}
			table := weights["e 100…149"]
			ids := []int32{int32(N - 1), 0, int32(N - 1)}
			want, got := tensor.New(len(ids), K), tensor.New(len(ids), K)
			tensor.Go{}.Embedding(want, table, ids)
			bes[Variants()[0]].Embedding(got, table, ids)
			if i, ok := identical(got.Data(), want.Data()); !ok {
				t.Fatalf("Embedding of MXFP4 rows: element %d = %v, Go %v", i, got.Data()[i], want.Data()[i])
			}
		}
	}
}

// TestMXFP4EveryExponentReachesTheEdges guards the test above: with e = row mod
// 256 the products do reach the edges (some outputs infinite or NaN, some
// nonzero and below 2⁻¹²⁶), so bit-identical results there mean something.
func TestMXFP4EveryExponentReachesTheEdges(t *testing.T) {
	r := rand.New(rand.NewPCG(40, 40))
	const M, K, N = 3, 96, 256
	x := mxfp4Activations(r, M, K)
	w := mxfp4Weights(t, r, N, K, func(n int) uint8 { return uint8(n) })
	out := tensor.New(M, N)
	tensor.Go{}.MatMul(out, x, w)
	var inf, nan, tiny bool
	for _, v := range out.Data() {
		a := float64(v)
		switch {
		case a != a:
			nan = true
		case a > 3.4e38 || a < -3.4e38:
			inf = true
		case a != 0 && a < 1.2e-38 && a > -1.2e-38:
			tiny = true
		}
	}
	if !inf || !nan || !tiny {
		t.Fatalf("outputs: infinite %v, NaN %v, subnormal %v; want all three", inf, nan, tiny)
	}
}

// TestMatMulIDGrouped: tensor.MatMulID on the native backend, which runs
// each chosen expert once on the rows routed to it, gives for every row
// what tensor.Go{} gives for that row and expert alone, bit for bit: MXFP4
// stacks (gpt-oss's experts) and the other block types, x one row per
// token and one per chosen expert. Experts 0, 1 and 4 take 7 to 9 rows (the
// prefill kernels), expert 2 three (decode's), expert 3 none.
func TestMatMulIDGrouped(t *testing.T) {
	r := rand.New(rand.NewPCG(41, 41))
	const E, T, k, N = 5, 9, 3, 40
	ids := []int32{ // [T, k], ascending per token (TopK's order)
		0, 1, 2,
		1, 2, 4, 1, 2, 4,
		0, 1, 4, 0, 1, 4, 0, 1, 4, 0, 1, 4, 0, 1, 4, 0, 1, 4,
	}
	idsT, err := tensor.FromBytes(tensor.I32, int32Bytes(ids), T, k)
	if err != nil {
		t.Fatal(err)
	}
	defer tensor.SetBackend(tensor.ActiveBackend())
	for _, dt := range []tensor.DType{tensor.MXFP4, tensor.Q8_0, tensor.Q4_0, tensor.Q4_K, tensor.F32} {
		K := 96
		if dt.BlockSize() == quant.QK {
			K = 256
		}
		w := encode(t, randTensor(r, E*N, K), dt)
		w = tensor.Reshape(w, E, N, K)
		for _, rows := range []int{T, T * k} {
			x := mxfp4Activations(r, rows, K)
			want := tensor.New(T*k, N)
			for s, e := range ids {
				xr := s
				if rows == T {
					xr = s / k
				}
				row := tensor.New(1, N)
				tensor.Go{}.MatMul(row, x.Slice(xr, xr+1), tensor.Select(w, int(e)))
				copy(want.Data()[s*N:], row.Data())
			}
			for name, b := range backends(t) {
				tensor.SetBackend(b)
				got := tensor.MatMulID(x, w, idsT)
				if i, ok := identical(got.Data(), want.Data()); !ok {
					t.Fatalf("%s, %v, %d rows of x: element %d (row %d, expert %d) = %v, Go %v", name, dt, rows,
						i, i/N, ids[i/N], got.Data()[i], want.Data()[i])
				}
			}
		}
	}
}

// int32Bytes returns v's little-endian bytes (an I32 tensor's storage).
func int32Bytes(v []int32) []byte {
	b := make([]byte, 0, 4*len(v))
	for _, x := range v {
		b = binary.LittleEndian.AppendUint32(b, uint32(x))
	}
	return b
}
