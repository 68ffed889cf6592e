// MXFP4 weights in MatMul, MatMulID and Embedding (the format is package
// quant's).

package tensor

import (
	"encoding/hex"
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"testing"

	"github.com/toyml/toy/toy/tensor/quant"
)

// TestMXFP4DotLlamaCpp: MatMul of activations x [3, 320] with MXFP4 weights
// [8, 320] (quantized rows, and random bytes with exponents from 0 to 180)
// is llama.cpp's ggml_vec_dot_mxfp4_q8_0_generic bit for bit, after the
// activations quantize to llama.cpp's Q8_0 bytes (its AVX2 quantize_row_q8_0);
// llama.cpp's AVX2 and AVX-512 kernels, which add the blocks in eight lanes
// with fused multiply-adds, differ by float32 roundings: within
// (nb + 2)·2⁻²⁴·Σ|w·x|.
func TestMXFP4DotLlamaCpp(t *testing.T) {
	var g struct { // the dot part of quant's golden file (written by its testdata/mxfp4_llamacpp.py)
		Dot struct {
			M, N, K               int
			X, Q8, W              string
			Generic, AVX2, AVX512 []uint32
		}
	}
	b, err := os.ReadFile("quant/testdata/mxfp4.golden.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatal(err)
	}
	d := g.Dot
	unhex := func(s string) []byte {
		b, err := hex.DecodeString(s)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	x, q8, wb := bytesAsFloat32(unhex(d.X)), unhex(d.Q8), unhex(d.W)
	if got := quant.QuantizeQ8_0(nil, x); !slices.Equal(got, q8) {
		t.Fatalf("Q8_0 of the activations differs from llama.cpp's")
	}
	w, err := FromBytes(MXFP4, wb, d.N, d.K)
	if err != nil {
		t.Fatal(err)
	}
	wd, xd := w.Float32s(), make([]float32, len(x))
	quant.DequantizeQ8_0(xd, q8)
	bound := float64(d.K/32+2) * math.Ldexp(1, -24)
	defer SetThreads(Threads())
	for _, threads := range []int{1, 3} {
		SetThreads(threads)
		out := MatMul(FromFloat32(x, d.M, d.K), w).Data()
		var worst float64
		for i, v := range out {
			if math.Float32bits(v) != d.Generic[i] {
				t.Errorf("%d threads: out[%d] = %v, llama.cpp %v", threads, i, v, math.Float32frombits(d.Generic[i]))
			}
			m, n := i/d.N, i%d.N
			var mag float64
			for k := 0; k < d.K; k++ {
				mag += math.Abs(float64(wd[n*d.K+k]) * float64(xd[m*d.K+k]))
			}
			for _, simd := range []uint32{d.AVX2[i], d.AVX512[i]} {
				worst = max(worst, math.Abs(float64(v)-float64(math.Float32frombits(simd)))/mag)
			}
		}
		if worst > bound {
			t.Errorf("difference from llama.cpp's AVX2/AVX-512 kernels %.2g·Σ|w·x|, bound %.2g", worst, bound)
		}
		if threads == 1 {
			t.Logf("%d dots bit for bit; AVX2/AVX-512 kernels within %.2g·Σ|w·x| (bound %.2g)", len(out), worst, bound)
		}
	}
}

// TestMXFP4MatMul: MatMul with MXFP4 weights equals the float64 product of
// the dequantized weights with the Q8_0-dequantized activations, to the
// float32 roundings of the dot — each block's d_x·d_w and its product with
// the exact integer sum, then nb additions: within (nb + 2)·2⁻²⁴·Σ|w·x| —
// for quantized and random weights, one and several threads, and through
// MatMulID's expert stacks.
func TestMXFP4MatMul(t *testing.T) {
	r := rand.New(rand.NewPCG(39, 40))
	const M, K, N = 5, 320, 37
	xf := make([]float32, M*K)
	for i := range xf {
		xf[i] = float32(r.NormFloat64())
	}
	wf := make([]float32, N*K)
	for i := range wf {
		wf[i] = float32(r.NormFloat64() * 0.05)
	}
	random := make([]byte, N*K/32*MXFP4.TypeSize())
	for i := range random {
		random[i] = byte(r.Uint32())
		if i%MXFP4.TypeSize() == 0 {
			random[i] = byte(100 + r.IntN(40))
		}
	}
	x8 := quant.QuantizeQ8_0(nil, xf)
	xd := make([]float32, M*K)
	quant.DequantizeQ8_0(xd, x8)
	nb := K / 32
	defer SetThreads(Threads())
	for name, wb := range map[string][]byte{"quantized": quant.QuantizeMXFP4(nil, wf), "random": random} {
		w, err := FromBytes(MXFP4, wb, N, K)
		if err != nil {
			t.Fatal(err)
		}
		wd := w.Float32s()
		var worst float64
		var one []float32
		for _, threads := range []int{1, 4} {
			SetThreads(threads)
			got := MatMul(FromFloat32(xf, M, K), w).Data()
			if one == nil {
				one = got
			} else if !slices.Equal(one, got) {
				t.Errorf("%s: 1 and %d threads differ", name, threads)
			}
			for m := 0; m < M; m++ {
				for n := 0; n < N; n++ {
					var want, mag float64
					for k := 0; k < K; k++ {
						p := float64(wd[n*K+k]) * float64(xd[m*K+k])
						want, mag = want+p, mag+math.Abs(p)
					}
					d := math.Abs(float64(got[m*N+n]) - want)
					if d > float64(nb+2)*math.Ldexp(mag, -24) {
						t.Errorf("%s: out[%d,%d] = %v, float64 %v (Σ|w·x| %v)", name, m, n, got[m*N+n], want, mag)
					}
					if mag > 0 {
						worst = max(worst, d/mag)
					}
				}
			}
		}
		t.Logf("%s: worst |Δ|/Σ|w·x| = %.2g (bound %.2g)", name, worst, float64(nb+2)*math.Ldexp(1, -24))
	}
	// Expert stacks [E, N, K]: each chosen row is MatMul's.
	stack, err := FromBytes(MXFP4, quant.QuantizeMXFP4(nil, wf[:3*8*K]), 3, 8, K)
	if err != nil {
		t.Fatal(err)
	}
	ids := idsOf(2, 2, 2, 0, 1, 2)
	x := FromFloat32(xf[:2*K], 2, K)
	got := MatMulID(x, stack, ids)
	for s, e := range ids.Int32s() {
		if want := MatMul(x.Slice(s/2, s/2+1), Select(stack, int(e))).Data(); !slices.Equal(got.Row(s), want) {
			t.Errorf("MatMulID row %d (expert %d) differs from MatMul", s, e)
		}
	}
}

// TestMXFP4Embedding: an MXFP4 table's rows gather as their dequantized
// values.
func TestMXFP4Embedding(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 39))
	tf := make([]float32, 6*64)
	for i := range tf {
		tf[i] = float32(r.NormFloat64())
	}
	table, err := FromBytes(MXFP4, quant.QuantizeMXFP4(nil, tf), 6, 64)
	if err != nil {
		t.Fatal(err)
	}
	all := table.Float32s()
	got := Embedding(table, []int32{5, 0, 5}).Data()
	if want := slices.Concat(all[5*64:6*64], all[:64], all[5*64:6*64]); !slices.Equal(got, want) {
		t.Error("Embedding of an MXFP4 table differs from its dequantized rows")
	}
}

// TestMXFP4Type: the type's name, block, size and id.
func TestMXFP4Type(t *testing.T) {
	if MXFP4.String() != "MXFP4" || MXFP4.BlockSize() != 32 || MXFP4.TypeSize() != 17 || !MXFP4.Known() || uint32(MXFP4) != 39 {
		t.Errorf("MXFP4: %v, block %d, %d bytes, known %v", MXFP4, MXFP4.BlockSize(), MXFP4.TypeSize(), MXFP4.Known())
	}
	if _, err := FromBytes(MXFP4, make([]byte, 16), 1, 32); err == nil {
		t.Error("FromBytes accepted 16 bytes for an MXFP4 block")
	}
}
