// Benchmarks of the kernels against the pure-Go reference, on SmolLM2-135M's
// shapes (MXFP4 on gpt-oss-20b's): go test -bench . ./kernels/cpu

package cpu

import (
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/toyml/toy/toy/tensor"
	"github.com/toyml/toy/toy/tensor/quant"
)

var benchThreads = flag.Int("threads", 1, "threads for the benchmarks")

func benchBackends(b *testing.B) []tensor.Backend {
	bes := []tensor.Backend{tensor.Go{}}
	if nb, err := Load(); err == nil {
		bes = append(bes, nb.Exact())
	}
	return bes
}

func benchName(be tensor.Backend) string {
	if nb, ok := be.(*Backend); ok && nb.fma {
		return "native-" + nb.Variant() + "-fma"
	} else if ok {
		return "native-" + nb.Variant()
	}
	return be.Name()
}

// BenchmarkMatMul: decode (M=1) and prefill (M=128) projections; for M=1 the
// weight bytes read per second are reported (the decode roofline).
func BenchmarkMatMul(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 1))
	for _, dt := range []tensor.DType{tensor.F32, tensor.F16, tensor.Q8_0, tensor.Q4_K, tensor.Q6_K, tensor.Q5_K, tensor.Q3_K,
		tensor.Q2_K, tensor.Q4_0, tensor.Q5_0, tensor.Q4_1, tensor.Q5_1, tensor.IQ4_NL, tensor.IQ4_XS, tensor.MXFP4} {
		shapes := [][3]int{{1, 576, 1536}, {1, 1536, 576}, {1, 576, 49152}, {128, 576, 1536}, {128, 1536, 576}}
		if dt.BlockSize() == quant.QK { // whole super-blocks: the shapes of a SmolLM2-depth Q4_K_M model of width 512
			shapes = [][3]int{{1, 512, 1536}, {1, 1536, 512}, {1, 512, 49152}, {128, 512, 1536}, {128, 1536, 512}}
		}
		if dt == tensor.MXFP4 { // gpt-oss-20b's experts: width 2880, decode and a batch of 32 rows
			shapes = [][3]int{{1, 2880, 2880}, {32, 2880, 2880}}
		}
		for _, s := range shapes {
			M, K, N := s[0], s[1], s[2]
			x, w := randTensor(r, M, K), encode(b, randTensor(r, N, K), dt)
			wbytes, _ := dt.RowBytes(N * K)
			bes := benchBackends(b)
			if nb, ok := bes[len(bes)-1].(*Backend); ok && M > 1 && (dt == tensor.F32 || dt == tensor.F16) {
				bes = append(bes, nb.Fused()) // TOY_FMA=1's prefill kernels
			}
			for _, be := range bes {
				b.Run(fmt.Sprintf("%v/M%d_K%d_N%d/%s", dt, M, K, N, benchName(be)), func(b *testing.B) {
					defer tensor.SetThreads(tensor.Threads())
					tensor.SetThreads(*benchThreads)
					out := tensor.New(M, N)
					for b.Loop() {
						be.MatMul(out, x, w)
					}
					sec := b.Elapsed().Seconds() / float64(b.N)
					b.ReportMetric(float64(wbytes)/sec/1e9, "GB/s")
					b.ReportMetric(2*float64(M*N*K)/sec/1e9, "GFLOP/s")
				})
			}
		}
	}
}

// BenchmarkAttention: SmolLM2-135M's heads (9 query heads of size 64, 3 KV
// heads), decode and prefill; the same with scores spread over hundreds
// (wide: most softmax terms below float32's normal range, flushed to 0);
// and gpt-oss-20b's (64 query heads of size 64, 8 KV heads, a sink per
// head), decode and prefill after 512 positions.
func BenchmarkAttention(b *testing.B) {
	r := rand.New(rand.NewPCG(2, 2))
	for _, c := range []struct {
		name      string
		T, past   int
		H, KV, Dh int
		sinks     bool
		spread    float32 // on the scale: the scores' standard deviation
	}{
		{"", 1, 255, 9, 3, 64, false, 1}, {"", 128, 0, 9, 3, 64, false, 1},
		{"wide_", 1, 255, 9, 3, 64, false, 24}, {"wide_", 128, 0, 9, 3, 64, false, 24},
		{"gptoss_sinks_", 1, 512, 64, 8, 64, true, 1}, {"gptoss_sinks_", 128, 512, 64, 8, 64, true, 1},
	} {
		S := c.past + c.T
		q, k, v := randTensor(r, c.T, c.H*c.Dh), randTensor(r, S, c.KV*c.Dh), randTensor(r, S, c.KV*c.Dh)
		o := tensor.AttentionOptions{Scale: c.spread * float32(1/math.Sqrt(float64(c.Dh)))}
		if c.sinks {
			o.Sinks = randTensor(r, c.H)
		}
		for _, be := range benchBackends(b) {
			b.Run(fmt.Sprintf("%sT%d_past%d/%s", c.name, c.T, c.past, benchName(be)), func(b *testing.B) {
				defer tensor.SetThreads(tensor.Threads())
				tensor.SetThreads(*benchThreads)
				out := tensor.New(c.T, c.H*c.Dh)
				for b.Loop() {
					be.Attention(out, q, k, v, c.H, c.KV, c.past, o)
				}
			})
		}
	}
}

func BenchmarkSwiGLU(b *testing.B) {
	r := rand.New(rand.NewPCG(3, 3))
	g, u := randTensor(r, 128, 1536), randTensor(r, 128, 1536)
	for _, be := range benchBackends(b) {
		b.Run(benchName(be), func(b *testing.B) {
			defer tensor.SetThreads(tensor.Threads())
			tensor.SetThreads(*benchThreads)
			out := tensor.New(128, 1536)
			for b.Loop() {
				be.SwiGLU(out, g, u)
			}
		})
	}
}

// BenchmarkMemoryRead measures the read bandwidth over buffers the size of
// the SmolLM2-135M-shaped benchmark models (Q8_0 ≈ 145 MB, F32 ≈ 540 MB),
// which bounds decoding: tok/s ≤ GB/s ÷ model GB.
func BenchmarkMemoryRead(b *testing.B) {
	nb, err := Load()
	if err != nil {
		b.Skip(err)
	}
	for _, mb := range []int{145, 540} {
		buf := make([]byte, mb<<20)
		for i := range buf {
			buf[i] = byte(i)
		}
		for _, th := range []int{1, 2} {
			b.Run(fmt.Sprintf("MB%d/threads%d", mb, th), func(b *testing.B) {
				defer tensor.SetThreads(tensor.Threads())
				tensor.SetThreads(th)
				n := len(buf) / 64
				for b.Loop() {
					workers.run(n, (n+th-1)/th, func(lo, hi int) { call(nb.ks.read, ptr(buf[lo*64:]), u((hi-lo)*64)) })
				}
				b.ReportMetric(float64(len(buf))/(b.Elapsed().Seconds()/float64(b.N))/1e9, "GB/s")
			})
		}
	}
}

// BenchmarkPoolRun is the cost of handing an op to the workers: eight empty
// chunks on two threads.
func BenchmarkPoolRun(b *testing.B) {
	defer tensor.SetThreads(tensor.Threads())
	tensor.SetThreads(2)
	for b.Loop() {
		workers.run(8, 1, func(lo, hi int) {})
	}
}

// BenchmarkDecodeLayer is one decode step of a SmolLM2-135M layer (F32, its
// 14 MB of weights in cache): eleven ops handed to the workers back to back,
// the hand-off cost the pool's idle spin saves (spin0: workers park at once).
func BenchmarkDecodeLayer(b *testing.B) {
	nb, err := Load()
	if err != nil {
		b.Skip(err)
	}
	r := rand.New(rand.NewPCG(4, 4))
	const D, F, KV = 576, 1536, 192
	q, k, v, o := randTensor(r, D, D), randTensor(r, KV, D), randTensor(r, KV, D), randTensor(r, D, D)
	gate, up, down := randTensor(r, F, D), randTensor(r, F, D), randTensor(r, D, F)
	x, norm := randTensor(r, 1, D), randTensor(r, D)
	keys, values := randTensor(r, 256, KV), randTensor(r, 256, KV)
	h, qo, ko, vo, att := tensor.New(1, D), tensor.New(1, D), tensor.New(1, KV), tensor.New(1, KV), tensor.New(1, D)
	g, u, a, y := tensor.New(1, F), tensor.New(1, F), tensor.New(1, F), tensor.New(1, D)
	for _, spin := range []time.Duration{0, idleSpin} {
		b.Run(fmt.Sprintf("threads%d/spin%v", *benchThreads, spin), func(b *testing.B) {
			defer func(s time.Duration) { idleSpin = s }(idleSpin)
			idleSpin = spin
			defer tensor.SetThreads(tensor.Threads())
			tensor.SetThreads(*benchThreads)
			for b.Loop() {
				nb.RMSNorm(h, x, norm, 1e-5)
				nb.MatMul(qo, h, q)
				nb.MatMul(ko, h, k)
				nb.MatMul(vo, h, v)
				nb.Attention(att, qo, keys, values, 9, 3, 255, tensor.AttentionOptions{Scale: 0.125})
				nb.MatMul(y, att, o)
				nb.RMSNorm(h, y, norm, 1e-5)
				nb.MatMul(g, h, gate)
				nb.MatMul(u, h, up)
				nb.SwiGLU(a, g, u)
				nb.MatMul(y, a, down)
			}
		})
	}
}

// mxfp4Stack returns E experts' [N, K] matrices in MXFP4, stacked [E, N, K]:
// random index bytes under exponents 118 … 125 (scales 2⁻⁹ … 2⁻²), which
// the products run through as fast as any.
func mxfp4Stack(r *rand.Rand, E, N, K int) *tensor.Tensor {
	raw := make([]byte, E*N*K/32*17)
	for i := range raw {
		raw[i] = byte(r.Uint32())
		if i%17 == 0 {
			raw[i] = byte(118 + r.IntN(8))
		}
	}
	w, err := tensor.FromBytes(tensor.MXFP4, raw, E, N, K)
	if err != nil {
		panic(err)
	}
	return w
}

// BenchmarkMatMulID: the routed products of gpt-oss-20b's experts (32 of
// them, 4 chosen per token, [2880, 2880] in MXFP4) for one token (decode),
// 8 (the most nn.MoE routes) and 128 (a prefill batch), each token's row
// through its 4 experts.
func BenchmarkMatMulID(b *testing.B) {
	r := rand.New(rand.NewPCG(6, 6))
	const E, k, K, N = 32, 4, 2880, 2880
	w := mxfp4Stack(r, E, N, K)
	for _, T := range []int{1, 8, 128} {
		x := randTensor(r, T, K)
		ids := tensor.TopK(randTensor(r, T, E), k, 1, 1) // [T, k]
		for _, be := range benchBackends(b) {
			b.Run(fmt.Sprintf("MXFP4/T%d_E%d_k%d_K%d_N%d/%s", T, E, k, K, N, benchName(be)), func(b *testing.B) {
				defer tensor.SetBackend(tensor.ActiveBackend())
				tensor.SetBackend(be)
				defer tensor.SetThreads(tensor.Threads())
				tensor.SetThreads(*benchThreads)
				for b.Loop() {
					tensor.MatMulID(x, w, ids)
				}
				b.ReportMetric(2*float64(T*k*N*K)/(b.Elapsed().Seconds()/float64(b.N))/1e9, "GFLOP/s")
			})
		}
	}
}

// BenchmarkMatMulSmallM: the few-row products of speculative decoding (a
// token and its draft's guesses) and of batched sampling, against one row:
// the "x1row" metric is the time over that of M=1 on the same weights.
func BenchmarkMatMulSmallM(b *testing.B) {
	r := rand.New(rand.NewPCG(3, 3))
	nb, err := Load()
	if err != nil {
		b.Skip(err)
	}
	be := nb.Exact()
	for _, dt := range []tensor.DType{tensor.F32, tensor.F16, tensor.Q8_0, tensor.Q4_K, tensor.Q6_K} {
		// a block's projection (in cache) and the output head (from memory)
		for _, N := range []int{1536, 49152} {
			K := 576
			if dt.BlockSize() == quant.QK {
				K = 512
			}
			w := encode(b, randTensor(r, N, K), dt)
			var one float64
			for _, M := range []int{1, 2, 3, 4, 5, 8, 9, 12, 16} {
				x := randTensor(r, M, K)
				b.Run(fmt.Sprintf("%v/M%d_K%d_N%d", dt, M, K, N), func(b *testing.B) {
					defer tensor.SetThreads(tensor.Threads())
					tensor.SetThreads(*benchThreads)
					out := tensor.New(M, N)
					for b.Loop() {
						be.MatMul(out, x, w)
					}
					sec := b.Elapsed().Seconds() / float64(b.N)
					if M == 1 {
						one = sec
					}
					b.ReportMetric(sec/one, "x1row")
				})
			}
		}
	}
}
