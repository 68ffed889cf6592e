// Tests that need no GPU: the committed PTX is current, the symbol tables are
// well-formed, and loading without a driver or GPU fails with a named
// NativeCallError.

package cuda

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/toyml/toy/kernels"
	"github.com/toyml/toy/toy/tensor"
)

// TestPTXCurrent fails when csrc/ or build.sh changed after the PTX was
// built (run go generate ./kernels/cuda, which needs nvcc), or when an
// embedded module differs from the checksum build.sh recorded.
func TestPTXCurrent(t *testing.T) {
	h := sha256.New()
	for _, f := range sourceFiles {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		h.Write(b)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != sourcesSHA256 {
		t.Fatalf("the CUDA sources changed since the PTX was built (SHA-256 %s, built from %s): run go generate ./kernels/cuda", got, sourcesSHA256)
	}
	files, _ := fs.Glob(ptxFS, "ptx/*.ptx")
	if len(files) != len(ptxSHA256) || len(files) != len(kernelNames) {
		t.Fatalf("ptx/ holds %d modules, zptx.go records %d, ptx.go lists %d", len(files), len(ptxSHA256), len(kernelNames))
	}
	for _, f := range files {
		b, _ := ptxFS.ReadFile(f)
		sum := sha256.Sum256(b)
		name := strings.TrimPrefix(f, "ptx/")
		if got := hex.EncodeToString(sum[:]); got != ptxSHA256[name] {
			t.Errorf("%s has SHA-256 %s, build.sh recorded %s", f, got, ptxSHA256[name])
		}
	}
}

// TestPTXKernels: every kernel the backend looks up is an entry point of
// its module, compiled for compute_70 or older (or for the compute
// capability moduleMinMajor gives the module, which the backend loads only
// there), and every entry point is one the backend uses.
func TestPTXKernels(t *testing.T) {
	entry := regexp.MustCompile(`(?m)^\.visible \.entry (\w+)\(`)
	target := regexp.MustCompile(`(?m)^\.target sm_(\d+)`)
	for file, names := range kernelNames {
		b, err := ptxFS.ReadFile("ptx/" + file)
		if err != nil {
			t.Fatal(err)
		}
		want := "70"
		if v := moduleMinMajor[file]; v > 0 {
			want = fmt.Sprintf("%d0", v)
		}
		if m := target.FindSubmatch(b); m == nil || string(m[1]) != want {
			t.Errorf("%s: target %q, want sm_%s so that every GPU it is loaded on can JIT it", file, m, want)
		}
		var got []string
		for _, m := range entry.FindAllSubmatch(b, -1) {
			got = append(got, string(m[1]))
		}
		listed := map[string]bool{}
		for _, n := range names {
			listed[n] = true
		}
		for _, g := range got {
			if !listed[g] {
				t.Errorf("%s: kernel %s is not listed in kernelNames", file, g)
			}
			delete(listed, g)
		}
		for n := range listed {
			t.Errorf("%s: kernelNames lists %s, which the module does not define", file, n)
		}
	}
}

// TestSymbolTables: the driver and cuBLAS names are C identifiers, each
// mapped to its own address slot, with the _v2 names cuda.h uses for the
// 64-bit APIs.
func TestSymbolTables(t *testing.T) {
	ident := regexp.MustCompile(`^(cu|cublas)[A-Z]\w*$`)
	for lib, syms := range map[string]map[string]*uintptr{"libcuda": (&driverAPI{}).symbols(), "libcublas": (&blasAPI{}).symbols()} {
		seen := map[*uintptr]string{}
		for name, p := range syms {
			if !ident.MatchString(name) {
				t.Errorf("%s: %q is not a CUDA symbol name", lib, name)
			}
			if other, dup := seen[p]; dup {
				t.Errorf("%s: %s and %s share an address slot", lib, name, other)
			}
			seen[p] = name
		}
	}
	d := (&driverAPI{}).symbols()
	for _, v2 := range []string{"cuMemAlloc_v2", "cuMemFree_v2", "cuMemcpyHtoD_v2", "cuMemcpyDtoH_v2", "cuDeviceTotalMem_v2"} {
		if d[v2] == nil {
			t.Errorf("the driver table lacks %s", v2)
		}
	}
	if n, f := len(d), reflect.TypeFor[driverAPI]().NumField(); n != f {
		t.Errorf("the driver table has %d symbols; driverAPI has %d fields", n, f)
	}
	if n, f := len((&blasAPI{}).symbols()), reflect.TypeFor[blasAPI]().NumField(); n != f {
		t.Errorf("the cuBLAS table has %d symbols; blasAPI has %d fields", n, f)
	}
	for _, n := range append(libcudaNames, libcublasNames...) {
		if !strings.HasPrefix(n, "lib") || !strings.Contains(n, ".so") {
			t.Errorf("library name %q is not a soname", n)
		}
	}
}

// TestLoadWithoutGPU runs where Load fails (no driver library, or a driver
// without a GPU, as on CI): the error is a NativeCallError for "cuda" that
// names what is missing and what to do.
func TestLoadWithoutGPU(t *testing.T) {
	b, err := Load()
	if err == nil {
		t.Skipf("a GPU is present (%s): the no-driver path cannot be tested here", b.Info())
	}
	var nce *kernels.NativeCallError
	if !errors.As(err, &nce) {
		t.Fatalf("Load: %T %v, want a *kernels.NativeCallError", err, err)
	}
	if nce.Backend != "cuda" || nce.Missing == "" || nce.Hint == "" {
		t.Errorf("NativeCallError %+v: want backend cuda, what is missing and a hint", nce)
	}
	t.Logf("Load: %v", err)
	if _, again := Load(); again != err {
		t.Error("a second Load did not return the first one's error")
	}
}

// TestNoDriverLibrary: with no library of the driver's names, the error
// says libcuda.so.1 is missing and to install the NVIDIA driver.
func TestNoDriverLibrary(t *testing.T) {
	saved := libcudaNames
	libcudaNames = []string{"libcuda-toy-test-missing.so.1"}
	defer func() { libcudaNames = saved }()
	_, err := openLibs()
	var nce *kernels.NativeCallError
	if !errors.As(err, &nce) {
		t.Fatalf("openLibs: %v, want a *kernels.NativeCallError", err)
	}
	if !strings.Contains(nce.Missing, "libcuda.so.1") || !strings.Contains(nce.Hint, "NVIDIA driver") {
		t.Errorf("error %q: want it to name libcuda.so.1 and the NVIDIA driver", err)
	}
}

func TestSizeClass(t *testing.T) {
	for _, c := range []struct{ n, want int }{{0, 256}, {1, 256}, {256, 256}, {257, 512}, {4096, 4096}, {4097, 5120}, {1 << 20, 1 << 20}, {1<<20 + 1, 1<<20 + 1<<18}} {
		if got := sizeClass(c.n); got != c.want {
			t.Errorf("sizeClass(%d) = %d, want %d", c.n, got, c.want)
		}
	}
}

// TestOpCasesOnGo: the self-test's cases are well-formed (every shape valid,
// every op runnable) and deterministic on the pure-Go backend.
func TestOpCasesOnGo(t *testing.T) {
	for _, size := range []int{1, 2} {
		for _, c := range OpCases(rand.New(rand.NewPCG(1, 1)), size) {
			a, b := c.Run(tensor.Go{}), c.Run(tensor.Go{})
			if err := Compare(c.Name, a, b, 0); err != nil {
				t.Error(err)
			}
		}
	}
}

// TestOpCasesCoverBackend: the self-test has a case for every method of
// tensor.Backend and of the fused interfaces the backend implements (a
// case is named by its method), so that a primitive added to the seam
// fails here until the device runs it and a case checks it.
func TestOpCasesCoverBackend(t *testing.T) {
	named := map[string]bool{}
	for _, c := range OpCases(rand.New(rand.NewPCG(1, 1)), 1) {
		named[strings.Fields(c.Name)[0]] = true
	}
	for _, iface := range []reflect.Type{
		reflect.TypeFor[tensor.Backend](), reflect.TypeFor[tensor.ExpertsBackend](), reflect.TypeFor[tensor.GatedDeltaNetBackend](),
	} {
		for i := range iface.NumMethod() {
			if m := iface.Method(i).Name; m != "Name" && !named[m] {
				t.Errorf("no self-test case runs %s.%s", iface.Name(), m)
			}
		}
	}
}
