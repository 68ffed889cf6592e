// The backend on the emulated device (kernels/cuda/emu): the self-test and
// every op against tensor.Go{} with the launch code, the argument
// marshalling, the kernels and the cuBLAS calls all executing; and checks
// of the emulator itself — BLAS semantics of its cuBLAS, fp16 rounding of
// its intrinsics, and the faults it must report rather than hide.

package cuda

import (
	"errors"
	"maps"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"unsafe"

	"github.com/toyml/toy/kernels/cuda/emu"
	"github.com/toyml/toy/toy/tensor"
	"github.com/toyml/toy/toy/tensor/quant"
)

var (
	emuOnce    sync.Once
	emuBackend *Backend
	emuLib     string
	emuDir     string
	emuErr     error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if emuDir != "" {
		os.RemoveAll(emuDir)
	}
	os.Exit(code)
}

// emulated returns a backend on the emulated driver, built once per test
// binary; it skips the test when there is no g++.
func emulated(t testing.TB) *Backend {
	t.Helper()
	emuOnce.Do(func() {
		emuDir, emuErr = os.MkdirTemp("", "toy-cuda-emu-")
		if emuErr == nil {
			emuLib, emuErr = emu.Build(emuDir)
		}
		if emuErr == nil {
			emuBackend, emuErr = LoadLibrary(emuLib, emuLib)
		}
	})
	if errors.Is(emuErr, emu.ErrNoCompiler) || errors.Is(emuErr, emu.ErrUnsupported) {
		t.Skipf("skipped: no CUDA emulator: %v", emuErr)
	}
	if emuErr != nil {
		t.Fatal(emuErr)
	}
	return emuBackend
}

// freshEmulated returns a backend on a private copy of the emulator (its
// own driver state), for tests that leave the device faulted.
func freshEmulated(t *testing.T) *Backend {
	emulated(t)
	lib := filepath.Join(t.TempDir(), emu.Name)
	src, err := os.ReadFile(emuLib)
	if err == nil {
		err = os.WriteFile(lib, src, 0o755)
	}
	if err != nil {
		t.Fatal(err)
	}
	b, err := LoadLibrary(lib, lib)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestEmuSelfTest(t *testing.T) {
	b := emulated(t)
	t.Logf("device: %s", b.Info())
	if err := SelfTest(b); err != nil {
		t.Fatal(err)
	}
}

// TestEmuOps: every op case at two sizes, against tensor.Go{}.
func TestEmuOps(t *testing.T) {
	b := emulated(t)
	r := rand.New(rand.NewPCG(3, 3))
	for _, size := range []int{1, 2} {
		for _, c := range OpCases(r, size) {
			want, got := c.Run(tensor.Go{}), c.Run(b)
			if err := c.Check(got, want); err != nil {
				t.Errorf("size %d: %v", size, err)
			}
		}
	}
}

// TestEmuPreAmpere: on a GPU older than the tensor-core kernel (the
// emulator as compute 7.0, where PTX for sm_80 fails to load), the backend
// loads without mma.ptx and every op case passes on the kernels every GPU
// has. The emulator reads its compute capability from the environment the
// process starts with, so the check runs in a child process.
func TestEmuPreAmpere(t *testing.T) {
	if os.Getenv("TOY_CUDA_EMU_CC") == "7.0" {
		b := emulated(t)
		if i := b.Info(); i.Major != 7 || i.Minor != 0 || b.fn["toy_matmul_q8_mma"] != 0 {
			t.Fatalf("emulated GPU %d.%d, tensor-core kernel loaded: %v", i.Major, i.Minor, b.fn["toy_matmul_q8_mma"] != 0)
		}
		r := rand.New(rand.NewPCG(4, 4))
		for _, c := range OpCases(r, 1) {
			if err := c.Check(c.Run(b), c.Run(tensor.Go{})); err != nil {
				t.Error(err)
			}
		}
		return
	}
	if b := emulated(t); b.fn["toy_matmul_q8_mma"] == 0 {
		t.Fatalf("the emulator (compute %d.%d) did not load the tensor-core kernel", b.Info().Major, b.Info().Minor)
	}
	cmd := exec.Command(os.Args[0], "-test.run", "^TestEmuPreAmpere$", "-test.v")
	cmd.Env = append(os.Environ(), "TOY_CUDA_EMU_CC=7.0")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: TestEmuPreAmpere") {
		t.Fatalf("as compute 7.0: %v\n%s", err, out)
	}
}

// TestEmuOddShapes: ops on tiny and odd shapes (one row, one column, rows
// and columns that fill no tile or warp), against tensor.Go{}.
func TestEmuOddShapes(t *testing.T) {
	b := emulated(t)
	r := rand.New(rand.NewPCG(9, 9))
	randT := func(shape ...int) *tensor.Tensor {
		x := tensor.New(shape...)
		for i := range x.Data() {
			x.Data()[i] = float32(r.NormFloat64())
		}
		return x
	}
	fresh := func(x *tensor.Tensor) *tensor.Tensor {
		y, err := tensor.FromBytes(x.DType(), append([]byte(nil), x.Bytes()...), x.Shape()...)
		if err != nil {
			t.Fatal(err)
		}
		return y
	}
	run := func(name string, shape []int, tol float64, f func(be tensor.Backend, out *tensor.Tensor)) {
		var res [2][]float32
		for i, be := range []tensor.Backend{tensor.Go{}, b} {
			out := tensor.New(shape...)
			f(be, out)
			res[i] = out.Float32s()
		}
		if err := Compare(name, res[1], res[0], tol); err != nil {
			t.Error(err)
		}
	}
	for _, s := range [][3]int{{1, 32, 1}, {1, 32, 5}, {2, 96, 3}, {7, 160, 9}, {8, 32, 4}, {9, 64, 1}, {17, 32, 31}} {
		M, K, N := s[0], s[1], s[2]
		x, wf := randT(M, K), randT(N, K)
		for _, dt := range []tensor.DType{tensor.F32, tensor.F16, tensor.BF16, tensor.Q8_0} {
			w, err := tensor.FromBytes(dt, tensor.EncodeRow(nil, wf.Data(), dt), N, K)
			if err != nil {
				t.Fatal(err)
			}
			c := OpCase{Name: "MatMul " + dt.String(), Tol: 1e-4, Slack: productSlack(x.Data(), wf.Data(), M, K, N)}
			var res [2][]float32
			for i, be := range []tensor.Backend{tensor.Go{}, b} {
				out := tensor.New(M, N)
				be.MatMul(out, fresh(x), fresh(w))
				res[i] = out.Float32s()
			}
			if err := c.Check(res[1], res[0]); err != nil {
				t.Errorf("%v: %v", s, err)
			}
		}
	}
	for _, D := range []int{1, 3, 31, 33, 257, 1025} {
		x, y, w := randT(3, D), randT(3, D), randT(D)
		shape := []int{3, D}
		run("RMSNorm D="+itoa(D), shape, 1e-5, func(be tensor.Backend, o *tensor.Tensor) { be.RMSNorm(o, fresh(x), fresh(w), 1e-5) })
		run("LayerNorm D="+itoa(D), shape, 1e-5, func(be tensor.Backend, o *tensor.Tensor) { be.LayerNorm(o, fresh(x), fresh(w), nil, 1e-5) })
		run("Softmax D="+itoa(D), shape, 1e-5, func(be tensor.Backend, o *tensor.Tensor) { be.Softmax(o, fresh(x), -1) })
		run("Softmax causal D="+itoa(D), shape, 1e-5, func(be tensor.Backend, o *tensor.Tensor) { be.Softmax(o, fresh(x), 0) })
		run("Add D="+itoa(D), shape, 0, func(be tensor.Backend, o *tensor.Tensor) { be.Add(o, fresh(x), fresh(y)) })
		run("GELU D="+itoa(D), shape, 0, func(be tensor.Backend, o *tensor.Tensor) { be.GELU(o, fresh(x)) })
	}
	for _, a := range []struct{ T, H, KV, dh, past int }{{1, 1, 1, 1, 0}, {2, 3, 1, 5, 1}, {5, 6, 3, 7, 200}} {
		S := a.past + a.T
		q, k, v := randT(a.T, a.H*a.dh), randT(S, a.KV*a.dh), randT(S, a.KV*a.dh)
		run("Attention", []int{a.T, a.H * a.dh}, 1e-5, func(be tensor.Backend, o *tensor.Tensor) {
			be.Attention(o, fresh(q), fresh(k), fresh(v), a.H, a.KV, a.past, tensor.AttentionOptions{Scale: 0.3})
		})
	}
}

func itoa(n int) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}

// dev is device memory holding a copy of host bytes, for raw calls.
func dev(b *Backend, host []byte) uintptr {
	p := b.memAlloc(len(host))
	b.upload(p, host)
	return p
}

func download(t *testing.T, b *Backend, p uintptr, n int) []byte {
	out := make([]byte, n)
	if err := b.l.call("cuMemcpyDtoH", b.l.cu.memcpyDtoH, uintptr(unsafe.Pointer(&out[0])), p, uintptr(n)); err != nil {
		t.Fatal(err)
	}
	return out
}

func f32Bytes(v []float32) []byte { return unsafe.Slice((*byte)(unsafe.Pointer(&v[0])), 4*len(v)) }

func bytesF32(b []byte) []float32 { return unsafe.Slice((*float32)(unsafe.Pointer(&b[0])), len(b)/4) }

// TestEmuGemmSemantics: the emulated cublasSgemm and cublasGemmEx compute
// C = α·op(A)·op(B) + β·C in column-major order for every transpose pair,
// with leading dimensions larger than the rows (padding that must be
// skipped), F32/F16/BF16 operands, and reject a leading dimension smaller
// than the rows with CUBLAS_STATUS_INVALID_VALUE — the BLAS contract the
// backend's calls are written against.
func TestEmuGemmSemantics(t *testing.T) {
	b := emulated(t)
	defer b.enter()()
	r := rand.New(rand.NewPCG(5, 5))
	const m, n, k = 5, 3, 7
	alpha, beta := float32(0.5), float32(-2)
	for _, dt := range []int{cudaR32F, cudaR16F, cudaR16BF} {
		for _, ta := range []int{cublasOpN, cublasOpT} {
			for _, tb := range []int{cublasOpN, cublasOpT} {
				ar, ac, br, bc := m, k, k, n
				if ta == cublasOpT {
					ar, ac = k, m
				}
				if tb == cublasOpT {
					br, bc = n, k
				}
				lda, ldb, ldc := ar+2, br+1, m+3
				rnd := func(size int) []float32 {
					v := make([]float32, size)
					for i := range v {
						v[i] = float32(r.NormFloat64())
						switch dt { // values the operand type holds exactly
						case cudaR16F:
							v[i] = quant.RoundFP16(v[i])
						case cudaR16BF:
							v[i] = quant.BF16ToF32(quant.F32ToBF16(v[i]))
						}
					}
					return v
				}
				A, B, C := rnd(lda*ac), rnd(ldb*bc), rnd(ldc*n)
				enc := func(v []float32) []byte {
					switch dt {
					case cudaR16F, cudaR16BF:
						out := make([]byte, 2*len(v))
						for i, f := range v {
							h := quant.F32ToFP16(f)
							if dt == cudaR16BF {
								h = quant.F32ToBF16(f)
							}
							out[2*i], out[2*i+1] = byte(h), byte(h>>8)
						}
						return out
					}
					return append([]byte(nil), f32Bytes(v)...)
				}
				pa, pb, pc := dev(b, enc(A)), dev(b, enc(B)), dev(b, append([]byte(nil), f32Bytes(C)...))
				var err error
				if dt == cudaR32F && ta == tb { // Sgemm for two of the pairs, GemmEx for the rest
					err = b.l.blasCall("cublasSgemm", b.l.blas.sgemm, b.blas, uintptr(ta), uintptr(tb), m, n, k,
						uintptr(unsafe.Pointer(&alpha)), pa, uintptr(lda), pb, uintptr(ldb), uintptr(unsafe.Pointer(&beta)), pc, uintptr(ldc))
				} else {
					err = b.l.blasCall("cublasGemmEx", b.l.blas.gemmEx, b.blas, uintptr(ta), uintptr(tb), m, n, k,
						uintptr(unsafe.Pointer(&alpha)), pa, uintptr(dt), uintptr(lda), pb, uintptr(dt), uintptr(ldb),
						uintptr(unsafe.Pointer(&beta)), pc, cudaR32F, uintptr(ldc), cublasCompute32F, uintptr(gemmDefault))
				}
				if err != nil {
					t.Fatal(err)
				}
				got := bytesF32(download(t, b, pc, 4*ldc*n))
				for j := 0; j < n; j++ {
					for i := 0; i < ldc; i++ {
						want := float64(C[i+j*ldc])
						if i < m { // rows past m are padding: untouched
							s := 0.0
							for l := 0; l < k; l++ {
								var a, bv float32
								if ta == cublasOpN {
									a = A[i+l*lda]
								} else {
									a = A[l+i*lda]
								}
								if tb == cublasOpN {
									bv = B[l+j*ldb]
								} else {
									bv = B[j+l*ldb]
								}
								s += float64(a) * float64(bv)
							}
							want = float64(alpha)*s + float64(beta)*want
						}
						if g := float64(got[i+j*ldc]); math.Abs(g-want) > 1e-5*(1+math.Abs(want)) {
							t.Errorf("type %d trans %d,%d: C[%d,%d] = %v, want %v", dt, ta, tb, i, j, g, want)
						}
					}
				}
			}
		}
	}
	one, zero := float32(1), float32(0)
	p := b.memAlloc(4 * m * k)
	err := b.l.blasCall("cublasSgemm", b.l.blas.sgemm, b.blas, cublasOpN, cublasOpN, m, m, k,
		uintptr(unsafe.Pointer(&one)), p, m-1, p, k, uintptr(unsafe.Pointer(&zero)), p, m)
	var bs *blasStatus
	if !errors.As(err, &bs) || bs.code != 7 {
		t.Errorf("Sgemm with lda < m: %v, want CUBLAS_STATUS_INVALID_VALUE", err)
	}
}

// TestEmuHalfRounding: the emulated __float2half_rn (toy_round_half) gives
// the bits of quant.F32ToFP16 — round to nearest even, subnormals,
// overflow to infinity — and f32_to_bf16 those of quant.F32ToBF16.
func TestEmuHalfRounding(t *testing.T) {
	b := emulated(t)
	r := rand.New(rand.NewPCG(11, 11))
	var xs []float32
	for _, f := range []float32{0, 1, -1, 65504, 65519.99, 65520, 1e6, 5.96e-8, 2.98e-8, 2.99e-8, 6.1e-5, 6.09e-5, 1.0009765625, 1.00048828125} {
		xs = append(xs, f, -f)
	}
	xs = append(xs, float32(math.Inf(1)), float32(math.Inf(-1)))
	for range 1 << 16 { // exponents from 2^−27 (below fp16's subnormals) to 2^23 (above its range)
		e := uint32(100 + r.IntN(51))
		xs = append(xs, math.Float32frombits(r.Uint32()&0x807fffff|e<<23), float32(r.NormFloat64()*100))
	}
	x, _ := tensor.FromBytes(tensor.F32, append([]byte(nil), f32Bytes(xs)...), len(xs))
	for _, bf := range []bool{false, true} {
		func() {
			defer b.enter()()
			xp := b.in(x)
			hp := b.memAlloc(2 * len(xs))
			b.launch("toy_round_half", (len(xs)+255)/256, 1, 256, pArg(xp), pArg(hp), iArg(len(xs)), bArg(bf))
			got := download(t, b, hp, 2*len(xs))
			bad := 0
			for i, f := range xs {
				want := quant.F32ToFP16(f)
				if bf {
					want = quant.F32ToBF16(f)
				}
				if g := uint16(got[2*i]) | uint16(got[2*i+1])<<8; g != want && bad < 5 {
					bad++
					t.Errorf("bf16=%v: %g (%#08x) rounds to %#04x, toy gives %#04x", bf, f, math.Float32bits(f), g, want)
				}
			}
		}()
	}
}

// TestEmuFaults: what a GPU would fault on, the emulator reports as a
// failed launch (CUDA_ERROR_LAUNCH_FAILED, or ILLEGAL_ADDRESS), with the
// detail in the error text, and the context stays failed afterwards.
func TestEmuFaults(t *testing.T) {
	ptx := func(entries string) []byte {
		return []byte(".version 7.8\n.target sm_70\n.address_size 64\n" + entries + "\x00")
	}
	load := func(b *Backend, src []byte) (uintptr, error) {
		var mod uintptr
		err := b.l.call("cuModuleLoadData", b.l.cu.moduleLoadData, uintptr(unsafe.Pointer(&mod)), uintptr(unsafe.Pointer(&src[0])))
		return mod, err
	}
	launch := func(b *Backend, src []byte, name string, block int, args ...uint64) (err error) {
		defer b.enter()()
		mod, err := load(b, src)
		if err != nil {
			t.Fatal(err)
		}
		cname := append([]byte(name), 0)
		var fn uintptr
		if err := b.l.call("cuModuleGetFunction", b.l.cu.moduleGetFunction, uintptr(unsafe.Pointer(&fn)), mod, uintptr(unsafe.Pointer(&cname[0]))); err != nil {
			t.Fatal(err)
		}
		b.fn[name] = fn
		defer func() {
			if r := recover(); r != nil {
				err = errors.New(r.(string))
			}
		}()
		b.launch(name, 1, 1, block, args...)
		return nil
	}
	check := func(name string, err error, want ...string) {
		t.Helper()
		if err == nil {
			t.Errorf("%s: the launch succeeded", name)
			return
		}
		for _, w := range want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %v, want it to say %q", name, err, w)
			}
		}
		t.Logf("%s: %v", name, err)
	}
	divergePTX := ptx(".visible .entry emu_test_diverge(\n\t.param .u64 p0,\n\t.param .u32 p1\n)\n")
	shflPTX := ptx(".visible .entry emu_test_shfl(\n\t.param .u64 p0\n)\n")

	b := freshEmulated(t)
	var out uintptr
	func() { defer b.enter()(); out = b.memAlloc(4096) }()
	if err := launch(b, divergePTX, "emu_test_diverge", 64, pArg(out), iArg(64)); err != nil {
		t.Fatalf("no divergence: %v", err)
	}
	check("barrier divergence", launch(b, divergePTX, "emu_test_diverge", 64, pArg(out), iArg(40)), "error 719", "deadlock", "exited")
	func() {
		defer b.enter()()
		var p uintptr
		check("call after a fault", b.l.call("cuMemAlloc", b.l.cu.memAlloc, uintptr(unsafe.Pointer(&p)), 256), "error 719")
	}()

	b = freshEmulated(t)
	func() { defer b.enter()(); out = b.memAlloc(4096) }()
	if err := launch(b, shflPTX, "emu_test_shfl", 64, pArg(out)); err != nil {
		t.Fatal(err)
	}
	check("partial warp", launch(b, shflPTX, "emu_test_shfl", 48, pArg(out)), "error 719", "not a multiple of 32")

	b = freshEmulated(t)
	host := make([]float32, 64)
	check("host pointer", launch(b, shflPTX, "emu_test_shfl", 64, pArg(uintptr(unsafe.Pointer(&host[0])))), "error 700", "not in any device allocation")

	b = freshEmulated(t)
	func() {
		defer b.enter()()
		_, err := load(b, ptx(".visible .entry toy_add(\n\t.param .u64 a,\n\t.param .u64 b,\n\t.param .u32 n\n)\n"))
		check("PTX parameters", err, "error 218", "toy_add")
	}()
}

// TestEmuNoCublas: a backend opened without cuBLAS (as on a machine with
// only the NVIDIA driver) multiplies with toy's own kernels — the row
// kernel for short inputs, the tiled GEMM from gemmMin rows on — and
// matches tensor.Go{} on every op case and on products whose sides fill
// no tile.
func TestEmuNoCublas(t *testing.T) {
	emulated(t)
	b, err := LoadLibrary(emuLib, "")
	if err != nil {
		t.Fatal(err)
	}
	if b.blas != 0 || b.Info().Cublas != "" || !strings.Contains(b.Info().GEMM(), "toy's GEMM kernels") {
		t.Fatalf("LoadLibrary(driver, \"\"): Info %+v, handle %#x: want no cuBLAS", b.Info(), b.blas)
	}
	t.Logf("device: %s", b.Info())
	r := rand.New(rand.NewPCG(5, 5))
	for _, size := range []int{1, 2} {
		for _, c := range OpCases(r, size) {
			want, got := c.Run(tensor.Go{}), c.Run(b)
			if err := c.Check(got, want); err != nil {
				t.Errorf("size %d: %v", size, err)
			}
		}
	}
	for _, s := range [][3]int{{32, 16, 64}, {33, 17, 65}, {64, 64, 1}, {100, 32, 3}, {1, 5, 130}, {130, 160, 70}} {
		M, K, N := s[0], s[1], s[2]
		x := tensor.New(M, K)
		wf := tensor.New(N, K)
		for _, v := range [][]float32{x.Data(), wf.Data()} {
			for i := range v {
				v[i] = float32(r.NormFloat64())
			}
		}
		for _, dt := range []tensor.DType{tensor.F32, tensor.F16, tensor.BF16} {
			w, err := tensor.FromBytes(dt, tensor.EncodeRow(nil, wf.Data(), dt), N, K)
			if err != nil {
				t.Fatal(err)
			}
			c := OpCase{Name: "MatMul " + dt.String(), Tol: 1e-5, Slack: productSlack(x.Data(), wf.Data(), M, K, N)}
			var res [2][]float32
			for i, be := range []tensor.Backend{tensor.Go{}, b} {
				out := tensor.New(M, N)
				xi, _ := tensor.FromBytes(tensor.F32, append([]byte(nil), x.Bytes()...), M, K)
				wi, _ := tensor.FromBytes(dt, append([]byte(nil), w.Bytes()...), N, K)
				be.MatMul(out, xi, wi)
				res[i] = out.Float32s()
			}
			if err := c.Check(res[1], res[0]); err != nil {
				t.Errorf("%v: %v", s, err)
			}
		}
	}
}

// TestCublasOptional: cuBLAS that cannot be found is no error (toy's
// kernels take over, and Info says why), but one named by TOY_CUBLAS that
// does not load is; cublasCandidates finds copies outside the loader's
// path, as the toolkit and PyTorch's wheels install them.
func TestCublasOptional(t *testing.T) {
	emulated(t)
	l, err := openLibsFrom([]string{emuLib}, []string{"/nonexistent/libcublas.so.12"}, false)
	if err != nil || l.blasLib != "" || !strings.Contains(l.noBlas, "not found") {
		t.Errorf("cuBLAS missing: libs %+v, err %v: want no error and a reason", l, err)
	}
	_, err = openLibsFrom([]string{emuLib}, []string{"/nonexistent/libcublas.so.12"}, true)
	if err == nil || !strings.Contains(err.Error(), "TOY_CUBLAS") {
		t.Errorf("a named cuBLAS that does not load: %v, want an error naming TOY_CUBLAS", err)
	}
	dir := t.TempDir()
	lib := filepath.Join(dir, "lib64", "libcublas.so.12")
	os.MkdirAll(filepath.Dir(lib), 0o755)
	os.WriteFile(lib, nil, 0o644)
	t.Setenv("CUDA_HOME", dir)
	if c := cublasCandidates(); !slices.Contains(c, lib) || c[0] != libcublasNames[0] {
		t.Errorf("cublasCandidates with CUDA_HOME=%s: %v, want the sonames first, then %s", dir, c, lib)
	}
	// CUDA 13's wheel (nvidia-cublas) in a virtual environment, and the
	// driver's version deciding between it and cuBLAS 12.
	venv := t.TempDir()
	lib13 := filepath.Join(venv, "lib", "python3.12", "site-packages", "nvidia", "cu13", "lib", "libcublas.so.13")
	os.MkdirAll(filepath.Dir(lib13), 0o755)
	os.WriteFile(lib13, nil, 0o644)
	t.Setenv("VIRTUAL_ENV", venv)
	if c := cublasCandidates(); !slices.Contains(c, lib13) {
		t.Errorf("cublasCandidates with VIRTUAL_ENV=%s: %v, want %s", venv, c, lib13)
	}
	if got, want := forDriver(l, []string{lib13, lib, "libcublas.so"}), []string{lib, "libcublas.so"}; !slices.Equal(got, want) {
		t.Errorf("forDriver on the emulator's CUDA 12.2 driver: %v, want %v", got, want)
	}
	l13, err := openLibsFrom([]string{emuLib}, []string{lib13}, false)
	if err != nil || l13.blasLib != "" || !strings.Contains(l13.noBlas, "not found") {
		t.Errorf("only a cuBLAS newer than the driver: libs %+v, err %v: want no cuBLAS and a reason", l13, err)
	}
	for name, want := range map[string]int{"libcublas.so.13": 13, "/a/b/libcublas.so.12.4.5": 12, "libcublas.so": 0, "cublas.so.x": 0} {
		if got := cublasMajor(name); got != want {
			t.Errorf("cublasMajor(%q) = %d, want %d", name, got, want)
		}
	}
	t.Setenv("TOY_CUDA_DRIVER", emuLib)
	t.Setenv("TOY_CUBLAS", "none")
	l, err = openLibs()
	if err != nil || l.blasLib != "" || !strings.Contains(l.noBlas, "TOY_CUBLAS=none") {
		t.Errorf("TOY_CUBLAS=none: libs %+v, err %v", l, err)
	}
}

// TestEmuProfile: with SetProfile on, every kernel an op launches is
// counted by name, Profile starts a new count, and off ends it.
func TestEmuProfile(t *testing.T) {
	b := emulated(t)
	defer b.SetProfile(false)
	b.SetProfile(true)
	x, wf := tensor.New(16, 64), tensor.New(8, 64)
	for i := range x.Data() {
		x.Data()[i] = float32(i%7) - 3
	}
	w, err := tensor.FromBytes(tensor.Q8_0, tensor.EncodeRow(nil, wf.Data(), tensor.Q8_0), 8, 64)
	if err != nil {
		t.Fatal(err)
	}
	out := tensor.New(16, 8)
	b.MatMul(out, x, w)
	b.MatMul(out, x, w)
	b.Add(out, out, out)
	got := map[string]int{}
	for _, k := range b.Profile() {
		if k.Total < 0 {
			t.Errorf("%s: negative time %v", k.Name, k.Total)
		}
		got[k.Name] = k.Calls
	}
	want := map[string]int{"toy_quantize_q8": 2, "toy_matmul_q8_mma": 2, "toy_add": 1}
	if !maps.Equal(got, want) {
		t.Errorf("profile counted %v, want %v", got, want)
	}
	if p := b.Profile(); len(p) != 0 {
		t.Errorf("a second Profile gave %v, want nothing", p)
	}
	b.SetProfile(false)
	b.Add(out, out, out)
	if p := b.Profile(); p != nil {
		t.Errorf("after SetProfile(false): %v", p)
	}
}

// TestEmuAttentionSlices: with a scratch of 4 KiB a prompt's split-K
// attention runs a few query rows per launch (one, for the widest), and
// every attention case still matches tensor.Go{}.
func TestEmuAttentionSlices(t *testing.T) {
	b := emulated(t)
	defer func(n int) { attnScratch = n }(attnScratch)
	attnScratch = 4 << 10
	if rows := attnSplit(130, 4, 130, 32, false); rows < 1 || rows >= 130 {
		t.Fatalf("attnSplit gives %d rows a slice for 130 rows; the test needs slices", rows)
	}
	r := rand.New(rand.NewPCG(5, 5))
	n := 0
	for _, c := range OpCases(r, 1) {
		if !strings.HasPrefix(c.Name, "Attention") {
			continue
		}
		n++
		if err := c.Check(c.Run(b), c.Run(tensor.Go{})); err != nil {
			t.Error(err)
		}
	}
	if n < 20 {
		t.Errorf("only %d attention cases", n)
	}
}

// TestEmuZeros: a tensor.Zeros made under the backend is cleared on the
// device, not uploaded: storing rows into it moves only those rows, and it
// reads back as zeros around them.
func TestEmuZeros(t *testing.T) {
	b := emulated(t)
	old := tensor.ActiveBackend()
	tensor.SetBackend(b)
	defer tensor.SetBackend(old)
	cache := tensor.Zeros(1000, 64)
	rows := tensor.New(2, 64)
	for i := range rows.Data() {
		rows.Data()[i] = float32(i + 1)
	}
	up0, _ := b.Transfers()
	tensor.SetRows(cache, 5, rows)
	if up, _ := b.Transfers(); up-up0 != 1 {
		t.Errorf("storing 2 rows into a Zeros tensor made %d uploads, want 1 (the rows)", up-up0)
	}
	got := cache.Data()
	for i, v := range got {
		want := float32(0)
		if i >= 5*64 && i < 7*64 {
			want = float32(i - 5*64 + 1)
		}
		if v != want {
			t.Fatalf("element %d = %v, want %v", i, v, want)
		}
	}
}
