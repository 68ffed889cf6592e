// The CUDA gates (see device.sh): every op against the pure-Go backend on
// random shapes, greedy decoding of every reference model identical to the
// CPU and to llama.cpp's goldens, logits within logitTolerance of the
// CPU's, residency (per decoded token one download, and one upload per
// embedding gather), and prefill/decode speed.
//
// On a machine with an NVIDIA GPU they run on it. Without one they run on
// the emulated device of kernels/cuda/emu (built with g++; the same kernel
// sources and launch code, executed on the CPU), shortened to the op gates
// and a smoke set of models in go test ./... (.ci/run then passes
// -cuda.emu.full, which runs all of it); without g++
// either they report "skipped". -cuda.emu=on forces the emulator, =off the
// GPU (device.sh uses off, so that a GPU that fails to load is not
// mistaken for a pass).
package cudatest

import (
	"cmp"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/toyml/toy/internal/testmodel"
	"github.com/toyml/toy/kernels/cuda"
	"github.com/toyml/toy/kernels/cuda/emu"
	"github.com/toyml/toy/toy"
	"github.com/toyml/toy/toy/engine"
	"github.com/toyml/toy/toy/gguf"
	"github.com/toyml/toy/toy/models/llama"
	"github.com/toyml/toy/toy/nn"
	"github.com/toyml/toy/toy/tensor"
	"github.com/toyml/toy/toy/tensor/quant"
)

var (
	bench   = flag.Bool("cuda.bench", false, "run the prefill/decode speed test (SmolLM2-135M- and 7B-shaped random Q8_0 models, and a 7B Q4_K)")
	big     = flag.Bool("cuda.7b", true, "include the 7B-shaped model in -cuda.bench")
	profile = flag.Bool("cuda.profile", false, "with -cuda.bench, also print each kernel's share of the GPU's time in prefill and decode")
	benchTo = flag.String("cuda.bench.dir", "", "also write -cuda.bench's models to this directory as GGUF files, for llama.cpp to run the same weights (tests/cuda/llamacpp.sh)")
	goldens = flag.String("goldens", "../reference/testdata", "directory of the llama.cpp golden files")
	emuMode = flag.String("cuda.emu", "auto", "run on the emulated device (kernels/cuda/emu, needs g++): auto (when there is no GPU), on, off")
	emuFull = flag.Bool("cuda.emu.full", false, "on the emulator, run every gate in full (minutes) rather than the shortened set")
)

var (
	emuOnce    sync.Once
	emuBackend *cuda.Backend
	emuErr     error
	emuDir     string
)

func TestMain(m *testing.M) {
	flag.Parse()
	code := m.Run()
	if emuDir != "" {
		os.RemoveAll(emuDir)
	}
	os.Exit(code)
}

// gpu returns the GPU's backend or, without one (or with -cuda.emu=on),
// the emulated device's; it skips the test when there is neither.
func gpu(t testing.TB) *cuda.Backend {
	t.Helper()
	if *emuMode != "on" {
		b, err := cuda.Load()
		if err == nil {
			return b
		}
		if *emuMode == "off" {
			t.Skipf("skipped: no CUDA driver: %v", err)
		}
	}
	emuOnce.Do(func() {
		var lib string
		emuDir, emuErr = os.MkdirTemp("", "toy-cuda-emu-")
		if emuErr == nil {
			lib, emuErr = emu.Build(emuDir)
		}
		if emuErr == nil {
			emuBackend, emuErr = cuda.LoadLibrary(lib, lib)
		}
	})
	if errors.Is(emuErr, emu.ErrNoCompiler) || errors.Is(emuErr, emu.ErrUnsupported) {
		t.Skipf("skipped: no CUDA driver, and no emulator: %v", emuErr)
	}
	if emuErr != nil {
		t.Fatal(emuErr)
	}
	return emuBackend
}

// emulating reports whether b is the emulated device.
func emulating(b *cuda.Backend) bool { return b == emuBackend || b == emuNoBlas }

var (
	noBlasOnce sync.Once
	noBlas     *cuda.Backend
	emuNoBlas  *cuda.Backend
	noBlasErr  error
)

// gemmVariants returns the device's backend and, when that one uses cuBLAS,
// a second one on the same device without it (toy's GEMM kernels, as on a
// machine with only the NVIDIA driver), named for subtests.
func gemmVariants(t *testing.T) []struct {
	name string
	b    *cuda.Backend
} {
	b := gpu(t)
	v := []struct {
		name string
		b    *cuda.Backend
	}{{"cublas", b}}
	if b.Info().Cublas == "" {
		v[0].name = "toy-gemm"
		return v
	}
	noBlasOnce.Do(func() {
		driver := cmp.Or(os.Getenv("TOY_CUDA_DRIVER"), "libcuda.so.1")
		if emulating(b) {
			driver = b.Info().Cublas // the emulator is one library
		}
		noBlas, noBlasErr = cuda.LoadLibrary(driver, "")
		if emulating(b) {
			emuNoBlas = noBlas
		}
	})
	if noBlasErr != nil {
		t.Fatalf("the device without cuBLAS: %v", noBlasErr)
	}
	return append(v, struct {
		name string
		b    *cuda.Backend
	}{"toy-gemm", noBlas})
}

// on runs fn with backend b active.
func on(b tensor.Backend, fn func()) {
	old := tensor.ActiveBackend()
	tensor.SetBackend(b)
	defer tensor.SetBackend(old)
	fn()
}

// TestOps checks every op against tensor.Go{} on random shapes (including
// ragged tiles and the cuBLAS GemmEx path), at three sizes, with cuBLAS and
// with toy's GEMM kernels.
func TestOps(t *testing.T) {
	for _, v := range gemmVariants(t) {
		t.Run(v.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(7, 7))
			for _, size := range []int{1, 4, 16} {
				for _, c := range cuda.OpCases(r, size) {
					want, got := c.Run(tensor.Go{}), c.Run(v.b)
					if err := c.Check(got, want); err != nil {
						t.Errorf("size %d: %v", size, err)
					}
				}
			}
		})
	}
}

// TestTensorCores: on a GPU with int8 tensor cores (compute capability
// 8.0 on) Q8_0, Q4_0, Q5_0, IQ4_NL, MXFP4, Q4_K, Q5_K and Q6_K products
// of mmaMin (8) rows or more
// take the _mma kernels (the profile says which ran), which add each
// block's exact int32 dots in Go's order and rounding, so their results
// must be Go's to the bit: shapes ragged in M and N, K of one block to 34
// blocks, a 4096-square one as in a 7B model's prompt.
func TestTensorCores(t *testing.T) {
	b := gpu(t)
	if b.Info().Major < 8 {
		t.Skipf("skipped: %s is compute %d.%d; the tensor-core kernel needs 8.0", b.Device(), b.Info().Major, b.Info().Minor)
	}
	r := rand.New(rand.NewPCG(8, 8))
	shapes := [][3]int{{8, 32, 8}, {16, 64, 8}, {17, 96, 9}, {64, 256, 64}, {65, 1088, 70}, {130, 512, 129}, {200, 4096, 4096}}
	if emulating(b) {
		shapes = shapes[:len(shapes)-1]
	}
	type tcCase struct {
		dt      tensor.DType
		M, K, N int
	}
	var cases []tcCase
	for _, s := range shapes {
		for _, dt := range []tensor.DType{tensor.Q8_0, tensor.Q4_0, tensor.Q5_0, tensor.IQ4_NL, tensor.MXFP4} {
			if dt == tensor.Q8_0 || s[2] < 4096 {
				cases = append(cases, tcCase{dt, s[0], s[1], s[2]})
			}
		}
		if s[1]%256 == 0 {
			for _, dt := range []tensor.DType{tensor.Q4_K, tensor.Q5_K, tensor.Q6_K} {
				cases = append(cases, tcCase{dt, s[0], s[1], s[2]})
			}
		}
	}
	cases = append(cases, tcCase{tensor.Q4_K, 33, 768, 40}, tcCase{tensor.Q4_K, 9, 256, 31},
		tcCase{tensor.Q5_K, 33, 768, 40}, tcCase{tensor.Q5_K, 9, 256, 31}, tcCase{tensor.Q6_K, 33, 768, 40}, tcCase{tensor.Q6_K, 9, 256, 31})
	for _, tc := range cases {
		M, K, N := tc.M, tc.K, tc.N
		s := fmt.Sprintf("%v %v", tc.dt, [3]int{M, K, N})
		x, wf := tensor.New(M, K), tensor.New(N, K)
		for _, d := range [][]float32{x.Data(), wf.Data()} {
			for i := range d {
				d[i] = float32(r.NormFloat64())
			}
		}
		w, err := tensor.FromBytes(tc.dt, tensor.EncodeRow(nil, wf.Data(), tc.dt), N, K)
		if err != nil {
			t.Fatal(err)
		}
		want, got := tensor.New(M, N), tensor.New(M, N)
		tensor.Go{}.MatMul(want, x, w)
		xc, _ := tensor.FromBytes(tensor.F32, append([]byte(nil), x.Bytes()...), M, K)
		b.SetProfile(true)
		b.MatMul(got, xc, w)
		ran := b.Profile()
		b.SetProfile(false)
		if kernel := map[tensor.DType]string{tensor.Q8_0: "toy_matmul_q8_mma", tensor.Q4_0: "toy_matmul_q32_mma",
			tensor.Q5_0: "toy_matmul_q32_mma", tensor.IQ4_NL: "toy_matmul_q32_mma", tensor.MXFP4: "toy_matmul_q32_mma",
			tensor.Q4_K: "toy_matmul_q4k_mma", tensor.Q5_K: "toy_matmul_q5k_mma", tensor.Q6_K: "toy_matmul_q6k_mma"}[tc.dt]; !slices.ContainsFunc(ran,
			func(k cuda.KernelTime) bool { return k.Name == kernel }) {
			t.Errorf("%s: ran %v, not %s", s, ran, kernel)
		}
		g, wa := got.Float32s(), want.Float32s()
		bad := 0
		for i := range wa {
			if math.Float32bits(g[i]) != math.Float32bits(wa[i]) {
				if bad < 3 {
					t.Errorf("%s: out[%d, %d] = %v, Go gives %v", s, i/N, i%N, g[i], wa[i])
				}
				bad++
			}
		}
		if bad > 0 {
			t.Errorf("%s: %d of %d outputs differ from Go's", s, bad, M*N)
		}
	}
}

type golden struct {
	PromptIDs []int32 `json:"prompt_ids"`
	Greedy    []int32 `json:"greedy"`
}

// decode runs prompt then n greedy steps, returning the tokens, every
// step's logits and, with b, the host→device and device→host copies the n
// steps after the prompt made.
func decode(m engine.Model, prompt []int32, n int, b *cuda.Backend) (ids []int32, all [][]float32, up, down int64, err error) {
	s := engine.NewSession(m, len(prompt)+n)
	logits, err := s.Next(prompt)
	var up0, down0 int64
	if b != nil {
		up0, down0 = b.Transfers()
	}
	for err == nil && len(ids) < n {
		all = append(all, slices.Clone(logits))
		best := 0
		for i, v := range logits {
			if v > logits[best] {
				best = i
			}
		}
		ids = append(ids, int32(best))
		logits, err = s.Next(ids[len(ids)-1:])
	}
	if b != nil {
		up, down = b.Transfers()
		up, down = up-up0, down-down0
	}
	return ids, all, up, down, err
}

// logitTolerance is the largest |Δ logit| allowed against the CPU: 1e-3,
// except where an fp16 rounding inside the model turns a summation-order
// difference into a jump of one fp16 ulp (about 1e-3 relative):
//   - F16 weights take activations rounded to fp16 (as in llama.cpp), so
//     an activation within float32 rounding of an fp16 boundary may round
//     the other way: 1e-2, the tolerance the llama.cpp gate gives F16
//     (tests/reference). The emulator shows up to 3.6e-3 (llama-f16).
//   - GPT-2's GELU goes through fp16 as well: 3e-3 (the llama.cpp gate
//     allows GPT-2 the same slack). The emulator shows 1.0e-3 on gpt2-f32.
//     Gemma's GeGLU reads the same table: 3e-3 too; the emulator shows
//     2.5e-4 on gemma2-f32 and 1.2e-3 on the seven layers of gemma3-f32
//     with cuBLAS's summation order, 2.3e-5 with toy's GEMM. StarCoder2's
//     MLP is GPT-2's: 1.9e-3 on starcoder2-f32 with cuBLAS. Phi-2's MLP
//     too: 5.0e-4 on phi2-f32 with cuBLAS, 5.7e-6 with toy's GEMM.
//
// And where Q8_0's activation rounding does the same to an F32 product's
// summation order: qwen3next-q8_0's shared experts are gated by σ(x·w_s),
// an F32 product the device sums in another order than the CPU (2.4e-7
// apart after layer 0, 6e-7 after layer 3); in layer 4 an activation that
// close to a Q8_0 rounding boundary rounds the other way (2.2e-3 there),
// and the delta rule's state carries it to every later position: 0.27 on
// the emulator, every greedy token still the CPU's. Without the shared
// experts the same model is bit-identical on the emulator (0.0), so: 0.5.
func logitTolerance(arch string, dt tensor.DType) float64 {
	switch {
	case dt == tensor.F16:
		return 1e-2
	case arch == "gpt2" || arch == "gemma" || arch == "gemma2" || arch == "gemma3" || arch == "phi2" || arch == "starcoder2":
		return 3e-3
	case arch == "qwen3next" && dt == tensor.Q8_0:
		return 0.5
	}
	return 1e-3
}

// TestReferenceModels: for each of the llama.cpp gate models, greedy
// tokens on the GPU equal the CPU's and llama.cpp's, the logits of every
// greedy step and of one batched forward pass over the prompt and the
// greedy tokens (48 rows: the GEMM paths from gemmMin rows on) stay within
// logitTolerance of the CPU's, and a decode step copies one tensor each way
// (token ids up, logits down; GPT-2 also uploads its position ids).
//
// Each runs with cuBLAS and with toy's GEMM kernels (subtests cublas/ and
// toy-gemm/).
//
// On the emulator, unless -cuda.emu.full, models whose vocabulary projection
// runs toy's kernels (1.6M emulated threads a row, about 1.4 s) decode 2
// greedy tokens instead of 32 and skip the batched pass (TestOps covers the
// multi-row tiles): F16 and Q8_0, and F32 in toy-gemm. The F32 models with
// cuBLAS run in full. toy-gemm skips the models whose products then take
// the same kernels as with cuBLAS: Q8_0 always, F16 without the batched
// pass.
//
// Without -cuda.emu.full the emulator runs only the smoke set below (one
// model of each kernel family), so that go test ./... stays within minutes
// on two cores; .ci/run then runs every model in full.
func TestReferenceModels(t *testing.T) {
	for _, v := range gemmVariants(t) {
		t.Run(v.name, func(t *testing.T) { referenceModels(t, v.b, v.name == "toy-gemm") })
	}
}

// smoke are the gate models the emulator runs without -cuda.emu.full: a
// dense F32 Llama, the same in Q8_0 (the quantized products), and the
// recurrent layers; TestOps covers every kernel on its own.
var smoke = map[string]bool{"llama-f32": true, "llama-q8_0": true, "qwen35-f32": true}

// cudaTypes are the weight types the CUDA backend multiplies.
var cudaTypes = map[tensor.DType]bool{tensor.F32: true, tensor.F16: true, tensor.BF16: true, tensor.Q8_0: true,
	tensor.Q4_0: true, tensor.Q5_0: true, tensor.Q4_K: true, tensor.Q5_K: true, tensor.Q3_K: true, tensor.Q2_K: true,
	tensor.Q4_1: true, tensor.Q5_1: true, tensor.IQ4_NL: true, tensor.IQ4_XS: true, tensor.MXFP4: true}

func referenceModels(t *testing.T, b *cuda.Backend, toyGemm bool) {
	dir := t.TempDir()
	for _, spec := range testmodel.Specs() {
		t.Run(spec.Name, func(t *testing.T) {
			if !cudaTypes[spec.DType] {
				t.Skipf("skipped: the CUDA backend has no kernels for %v weights yet", spec.DType)
			}
			if toyGemm && emulating(b) && !(spec.DType == tensor.F32 || spec.DType == tensor.F16 && *emuFull) {
				t.Skip("emulated: this model's products take the same kernels with and without cuBLAS here")
			}
			if emulating(b) && !*emuFull && !smoke[spec.Name] {
				t.Skip("emulated: in go test ./... only the smoke set runs; .ci/run runs every model in full (-cuda.emu.full)")
			}
			raw, err := os.ReadFile(filepath.Join(*goldens, spec.Name+".golden.json"))
			if err != nil {
				t.Fatal(err)
			}
			var g golden
			if err := json.Unmarshal(raw, &g); err != nil {
				t.Fatal(err)
			}
			steps, batched := len(g.Greedy), true
			if emulating(b) && !*emuFull && (spec.DType != tensor.F32 || toyGemm) {
				steps, batched = 2, false
			}
			path := filepath.Join(dir, spec.File())
			if _, err := testmodel.Write(spec, path); err != nil {
				t.Fatal(err)
			}
			m, err := toy.Load(path)
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			var cpuIDs, gpuIDs []int32
			var cpuLogits, gpuLogits [][]float32
			var cpuAll, gpuAll []float32
			var up, down int64
			on(tensor.Go{}, func() {
				cpuIDs, cpuLogits, _, _, err = decode(m.Net, g.PromptIDs, steps, nil)
				if err == nil && batched {
					var l *tensor.Tensor
					l, err = m.Forward(append(slices.Clone(g.PromptIDs), cpuIDs...))
					cpuAll = l.Float32s()
				}
			})
			if err != nil {
				t.Fatal(err)
			}
			on(b, func() {
				gpuIDs, gpuLogits, up, down, err = decode(m.Net, g.PromptIDs, steps, b)
				if err == nil && batched {
					var l *tensor.Tensor
					l, err = m.Forward(append(slices.Clone(g.PromptIDs), cpuIDs...))
					gpuAll = l.Float32s()
				}
			})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(gpuIDs, cpuIDs) || !slices.Equal(gpuIDs, g.Greedy[:steps]) {
				t.Errorf("greedy tokens\n cuda:      %v\n cpu:       %v\n llama.cpp: %v", gpuIDs, cpuIDs, g.Greedy[:steps])
			}
			worst := maxDiff(gpuAll, cpuAll)
			for i := range cpuLogits {
				worst = max(worst, maxDiff(gpuLogits[i], cpuLogits[i]))
			}
			if tol := logitTolerance(spec.Arch, spec.DType); worst > tol {
				t.Errorf("logits differ from the CPU's by up to %.2e (> %.0e)", worst, tol)
			}
			t.Logf("%s on %s: max |Δ logit| vs CPU %.2e, %d greedy tokens identical", spec.Name, b.Device(), worst, steps)
			perStep, perStepDown := int64(1), int64(1) // the token id up, the logits down
			if spec.Arch == "gpt2" {
				perStep = 2 // and the position id
			}
			if spec.Arch == "mistral3" || spec.Arch == "llama4" {
				perStep++ // the step's query temperatures (nn.Temperature), shared by every layer
			}
			if spec.Arch == "deepseek2" {
				perStep, perStepDown = deepseekTransfers(spec)
			}
			once := int64(0) // constants the first decode step uploads, resident after
			if spec.Arch == "gpt-oss" {
				once = gptossOnce(spec)
			}
			// A mixture of experts routes a decode step on the device
			// (nn.MoE's routed products): nothing more moves.
			if up != perStep*int64(steps)+once || down != perStepDown*int64(steps) {
				t.Errorf("%d decode steps made %d uploads and %d downloads, want %d and %d (ids up, logits down)",
					steps, up, down, perStep*int64(steps)+once, perStepDown*int64(steps))
			}
		})
	}
}

func maxDiff(a, b []float32) float64 {
	if len(a) != len(b) {
		return math.Inf(1)
	}
	d := 0.0
	for i := range a {
		d = max(d, math.Abs(float64(a[i]-b[i])))
	}
	return d
}

// quantModel returns a Llama of shape c with random weights of type dt,
// Q8_0 or Q4_K (quants and scales drawn directly, so a 7B model takes
// seconds, not minutes).
func quantModel(c llama.Config, seed uint64, dt tensor.DType) *llama.Model {
	r := rand.New(rand.NewPCG(seed, seed))
	q8 := func(n, k int) *tensor.Tensor {
		size, _ := dt.RowBytes(n * k)
		b := make([]byte, size)
		for i := 0; i < len(b); i += 8 {
			v := r.Uint64()
			for j := 0; j < 8 && i+j < len(b); j++ {
				b[i+j] = byte(v >> (8 * j))
			}
		}
		d := quant.F32ToFP16(0.02 / 64) // the block scale (Q4_K: d, then dmin)
		for i := 0; i < len(b); i += dt.TypeSize() {
			b[i], b[i+1] = byte(d), byte(d>>8)
			if dt == tensor.Q4_K {
				b[i+2], b[i+3] = byte(d), byte(d>>8)
			}
		}
		t, err := tensor.FromBytes(dt, b, n, k)
		if err != nil {
			panic(err)
		}
		return t
	}
	ones := func(n int) *tensor.Tensor {
		t := tensor.New(n)
		for i := range t.Data() {
			t.Data()[i] = 1
		}
		return t
	}
	D, F, q, kv := c.Embed, c.FFN, c.Heads*c.HeadDim, c.KVHeads*c.HeadDim
	m := llama.New(c)
	m.Embed = &nn.Embedding{W: q8(c.VocabSize, D)}
	for _, bl := range m.Blocks {
		bl := bl.(*nn.Block)
		bl.AttnNorm.(*nn.RMSNorm).W, bl.FFNNorm.(*nn.RMSNorm).W = ones(D), ones(D)
		bl.Attn.Q, bl.Attn.K, bl.Attn.V, bl.Attn.O = &nn.Linear{W: q8(q, D)}, &nn.Linear{W: q8(kv, D)}, &nn.Linear{W: q8(kv, D)}, &nn.Linear{W: q8(D, q)}
		f := bl.FFN.(*nn.SwiGLU)
		f.Gate, f.Up, f.Down = &nn.Linear{W: q8(F, D)}, &nn.Linear{W: q8(F, D)}, &nn.Linear{W: q8(D, F)}
	}
	m.OutputNorm.(*nn.RMSNorm).W = ones(D)
	m.Output = &nn.Linear{W: q8(c.VocabSize, D)}
	return m
}

// TestSpeed prints prefill and decode tokens/s (-cuda.bench): a 512-token
// prompt, then 128 greedy tokens, after one warm-up pass that uploads the
// weights.
func TestSpeed(t *testing.T) {
	b := gpu(t)
	if !*bench {
		t.Skip("speed test: run with -cuda.bench")
	}
	if emulating(b) {
		t.Skip("speed test: the emulated device's speed means nothing")
	}
	type shape struct {
		name string
		c    llama.Config
		dt   tensor.DType
		file string // its name under -cuda.bench.dir
	}
	smol := llama.Config{Arch: "llama", VocabSize: 49152, ContextLength: 2048, Embed: 576, Layers: 30, FFN: 1536,
		Heads: 9, KVHeads: 3, HeadDim: 64, RopeDim: 64, RopeBase: 100000, NormEps: 1e-5}
	llama7B := llama.Config{Arch: "llama", VocabSize: 32000, ContextLength: 4096, Embed: 4096, Layers: 32, FFN: 11008,
		Heads: 32, KVHeads: 32, HeadDim: 128, RopeDim: 128, RopeBase: 10000, NormEps: 1e-5}
	shapes := []shape{{"SmolLM2-135M-shaped", smol, tensor.Q8_0, "smollm2-135m-shape-q8_0.gguf"}}
	if *big {
		shapes = append(shapes, shape{"7B-shaped (Llama 2)", llama7B, tensor.Q8_0, "llama2-7b-shape-q8_0.gguf"},
			shape{"7B-shaped (Llama 2)", llama7B, tensor.Q4_K, "llama2-7b-shape-q4_k.gguf"})
	}
	for _, s := range shapes {
		m := quantModel(s.c, 1, s.dt)
		if *benchTo != "" {
			path := filepath.Join(*benchTo, s.file)
			if err := writeModel(m, s.c, path); err != nil {
				t.Fatal(err)
			}
			t.Logf("wrote %s", path)
		}
		prompt := make([]int32, 512)
		for i := range prompt {
			prompt[i] = int32(i*7919) % int32(s.c.VocabSize)
		}
		on(b, func() {
			decode(m, prompt[:8], 2, nil) // warm-up: uploads the weights, JITs nothing more
			b.Synchronize()
			start := time.Now()
			sess := engine.NewSession(m, 512+129)
			logits, err := sess.Next(prompt)
			if err != nil {
				t.Fatal(err)
			}
			prefill := time.Since(start)
			start = time.Now()
			const n = 128
			var ids []int32
			for i := 0; i < n; i++ {
				best := 0
				for j, v := range logits {
					if v > logits[best] {
						best = j
					}
				}
				ids = append(ids, int32(best))
				if logits, err = sess.Next([]int32{int32(best)}); err != nil {
					t.Fatal(err)
				}
			}
			dec := time.Since(start)
			t.Logf("%s %v on %s: prefill %.0f tok/s (512 tokens in %v), decode %.1f tok/s (%d tokens); greedy ids %v…",
				s.name, s.dt, b.Device(), 512/prefill.Seconds(), prefill.Round(time.Millisecond), n/dec.Seconds(), n, ids[:16])
			if *profile {
				profileRun(t, b, m, prompt, s.name+" "+s.dt.String())
			}
		})
	}
}

// profileRun prints where the GPU's time goes in the speed test's prefill
// and in 32 decode steps after it: each kernel's share, and the kernels'
// total next to the wall-clock time (the rest is the host's: launching,
// synchronising, Go).
func profileRun(t *testing.T, b *cuda.Backend, m engine.Model, prompt []int32, name string) {
	b.SetProfile(true)
	defer b.SetProfile(false)
	report := func(what string, wall time.Duration, tokens int, per string) {
		ks := b.Profile()
		var gpu time.Duration
		launches := 0
		for _, k := range ks {
			gpu += k.Total
			launches += k.Calls
		}
		t.Logf("profile %s, %s: wall %v %s, kernels %v (%d launches)", name, what,
			(wall / time.Duration(tokens)).Round(time.Microsecond), per, (gpu / time.Duration(tokens)).Round(time.Microsecond), launches/tokens)
		for _, k := range ks[:min(len(ks), 10)] {
			t.Logf("    %-22s %6d calls %9.1f µs each %5.1f%%", k.Name, k.Calls,
				float64(k.Total.Microseconds())/float64(k.Calls), 100*float64(k.Total)/float64(max(gpu, 1)))
		}
	}
	sess := engine.NewSession(m, len(prompt)+33)
	b.Synchronize()
	b.Profile()
	start := time.Now()
	logits, err := sess.Next(prompt)
	if err != nil {
		t.Fatal(err)
	}
	b.Synchronize()
	report(fmt.Sprintf("prefill of %d", len(prompt)), time.Since(start), 1, "in all")
	start = time.Now()
	const n = 32
	for i := 0; i < n; i++ {
		if logits, err = sess.Next([]int32{int32(slices.Index(logits, slices.Max(logits)))}); err != nil {
			t.Fatal(err)
		}
	}
	report("decode", time.Since(start), n, "a token")
}

// writeModel saves a speed-test model as a GGUF file llama.cpp loads: c's
// metadata, a synthetic vocabulary and m's weights, as they are.
func writeModel(m *llama.Model, c llama.Config, path string) error {
	w := gguf.NewWriter()
	c.SetMetadata(w)
	testmodel.SetSyntheticVocab(w, c.VocabSize)
	for _, p := range m.Weights() {
		if err := w.AddTensor(p.Name, p.T.DType(), p.T.Bytes(), p.T.Shape()...); err != nil {
			return err
		}
	}
	return w.WriteFile(path)
}

// TestWriteModel: the file -cuda.bench.dir writes for llama.cpp is the model
// the speed test runs (a small model of each speed-test type, same logits
// on the CPU after loading it back, bit for bit).
func TestWriteModel(t *testing.T) {
	c := llama.Config{Arch: "llama", VocabSize: 300, ContextLength: 64, Embed: 256, Layers: 2, FFN: 512,
		Heads: 4, KVHeads: 2, HeadDim: 64, RopeDim: 64, RopeBase: 10000, NormEps: 1e-5}
	prompt := []int32{1, 17, 42, 299, 5}
	for _, dt := range []tensor.DType{tensor.Q8_0, tensor.Q4_K} {
		m := quantModel(c, 1, dt)
		path := filepath.Join(t.TempDir(), "speed.gguf")
		if err := writeModel(m, c, path); err != nil {
			t.Fatal(err)
		}
		loaded, err := toy.Load(path)
		if err != nil {
			t.Fatal(err)
		}
		var want, got [][]float32
		on(tensor.Go{}, func() {
			_, want, _, _, err = decode(m, prompt, 4, nil)
			if err == nil {
				_, got, _, _, err = decode(loaded.Net, prompt, 4, nil)
			}
		})
		loaded.Close()
		if err != nil {
			t.Fatal(err)
		}
		if !slices.EqualFunc(got, want, slices.Equal) {
			t.Errorf("%v: the written file's logits differ from the model's", dt)
		}
	}
}

// TestGemmSpeed prints the GFLOP/s of prompt-sized products (-cuda.bench):
// F32 and F16 weights of 4096×4096 against 512 activation rows, with cuBLAS
// and with toy's tiled GEMM, so that a machine without cuBLAS knows what it
// gives up.
func TestGemmSpeed(t *testing.T) {
	if !*bench {
		t.Skip("speed test: run with -cuda.bench")
	}
	vs := gemmVariants(t)
	if emulating(vs[0].b) {
		t.Skip("speed test: the emulated device's speed means nothing")
	}
	const M, K, N = 512, 4096, 4096
	r := rand.New(rand.NewPCG(3, 3))
	x, wf := tensor.New(M, K), tensor.New(N, K)
	for _, d := range [][]float32{x.Data(), wf.Data()} {
		for i := range d {
			d[i] = float32(r.NormFloat64())
		}
	}
	for _, dt := range []tensor.DType{tensor.F32, tensor.F16, tensor.Q8_0} {
		w, err := tensor.FromBytes(dt, tensor.EncodeRow(nil, wf.Data(), dt), N, K)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range vs {
			on(v.b, func() {
				out := tensor.New(M, N)
				v.b.MatMul(out, x, w) // uploads x and w
				v.b.Synchronize()
				const reps = 20
				start := time.Now()
				for range reps {
					v.b.MatMul(out, x, w)
				}
				v.b.Synchronize()
				el := time.Since(start) / reps
				t.Logf("MatMul %v [%d×%d]·[%d×%d]ᵀ with %s: %v, %.0f GFLOP/s", dt, M, K, N, K, v.name, el, 2*M*K*N/el.Seconds()/1e9)
			})
		}
	}
}
