// The kernel library: choosing a variant, writing it to the cache, and the
// addresses of its C functions.

package cpu

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
)

// kernelSet holds the addresses of one family of C functions: the fast ones
// or their references (same signatures, see csrc/toy.h).
type kernelSet struct {
	matmulF32, matmulF16, matmulQ8 uintptr
	matmulF32FMA, matmulF16FMA     uintptr // fused multiply-adds: inference only (doc.go)
	roundF16, quantizeQ8, q8XSum   uintptr
	packX, packThreshold           uintptr
	rmsnorm, silu, swiglu          uintptr
	attention, deltaRule           uintptr
	read                           uintptr // the bandwidth probe

	// 2- to 6-bit weights: Q4_K and Q6_K against Q8_K activations (kq.c),
	// Q5_K, Q3_K and Q2_K too (kq2.c), Q4_0 and Q5_0 against Q8_0 ones
	// (q45.c), Q4_1 and Q5_1 against Q8_1 ones (q41.c), IQ4_NL and MXFP4
	// against Q8_0 and IQ4_XS against Q8_K (iq4.c), and the scratch bytes
	// each family's prefill kernels want for a given K.
	matmulQ4K, matmulQ6K, quantizeQ8K, kqScratch uintptr
	matmulQ5K, matmulQ3K, matmulQ2K, kq2Scratch  uintptr
	matmulQ4_0, matmulQ5_0, q45Scratch           uintptr
	matmulQ4_1, matmulQ5_1, quantizeQ8_1         uintptr
	q41Scratch                                   uintptr
	matmulIQ4NL, matmulIQ4XS, matmulMXFP4        uintptr
	iq4NLScratch, iq4XSScratch, mxfp4Scratch     uintptr

	packMin int // toy_pack_threshold(): from this many rows on, F32/F16 matmuls take packed x
}

// symbols lists each function's C name, without the toy_ prefix and the
// _ref suffix of the references.
func (k *kernelSet) symbols() map[string]*uintptr {
	return map[string]*uintptr{
		"matmul_f32": &k.matmulF32, "matmul_f16": &k.matmulF16, "matmul_q8": &k.matmulQ8,
		"matmul_f32_fma": &k.matmulF32FMA, "matmul_f16_fma": &k.matmulF16FMA,
		"round_f16": &k.roundF16, "quantize_q8": &k.quantizeQ8, "q8_xsum": &k.q8XSum,
		"pack_x": &k.packX, "pack_threshold": &k.packThreshold,
		"rmsnorm": &k.rmsnorm, "silu": &k.silu, "swiglu": &k.swiglu, "attention": &k.attention, "delta_rule": &k.deltaRule, "read": &k.read,
		"matmul_q4k": &k.matmulQ4K, "matmul_q6k": &k.matmulQ6K, "quantize_q8k": &k.quantizeQ8K,
		"kq_scratch": &k.kqScratch, "matmul_q4_0": &k.matmulQ4_0, "matmul_q5_0": &k.matmulQ5_0,
		"q45_scratch": &k.q45Scratch,
		"matmul_q5k":  &k.matmulQ5K, "matmul_q3k": &k.matmulQ3K, "matmul_q2k": &k.matmulQ2K, "kq2_scratch": &k.kq2Scratch,
		"matmul_q4_1": &k.matmulQ4_1, "matmul_q5_1": &k.matmulQ5_1, "quantize_q8_1": &k.quantizeQ8_1,
		"q41_scratch":   &k.q41Scratch,
		"matmul_iq4_nl": &k.matmulIQ4NL, "matmul_iq4_xs": &k.matmulIQ4XS,
		"iq4nl_scratch": &k.iq4NLScratch, "iq4xs_scratch": &k.iq4XSScratch,
		"matmul_mxfp4": &k.matmulMXFP4, "mxfp4_scratch": &k.mxfp4Scratch,
	}
}

// library is one loaded variant.
type library struct {
	variant string // "avx512", "avx2", "neon", …
	path    string // the file in the cache directory
	fast    kernelSet
	ref     kernelSet
}

// variant is a library the CPU may run: its name and whether the CPU has
// what it was compiled for.
type variant struct {
	name string
	ok   bool
}

var (
	libMu   sync.Mutex
	libs    = map[string]*library{}
	libErrs = map[string]error{}
)

// bestVariant returns the name of the best variant this CPU supports, or
// TOY_CPU_VARIANT when set.
func bestVariant() (string, error) {
	vs := variants()
	if len(vs) == 0 {
		return "", loadError(fmt.Sprintf("a native CPU kernel library for %s/%s", runtime.GOOS, runtime.GOARCH),
			"toy ships them for linux/amd64 and linux/arm64; use the pure-Go backend (TOY_BACKEND=go)", nil)
	}
	if v := os.Getenv("TOY_CPU_VARIANT"); v != "" {
		for _, c := range vs {
			if c.name == v {
				return v, nil
			}
		}
		return "", loadError(fmt.Sprintf("the kernel variant %q asked for by TOY_CPU_VARIANT", v),
			fmt.Sprintf("choose one of %s, or unset it", variantNames()), nil)
	}
	for _, c := range vs {
		if c.ok {
			return c.name, nil
		}
	}
	return "", loadError("a kernel variant this CPU can run", "use TOY_BACKEND=go", nil)
}

func variantNames() []string {
	var names []string
	for _, v := range variants() {
		names = append(names, v.name)
	}
	return names
}

// loadLibrary writes the named variant to the cache (once) and opens it.
func loadLibrary(name string) (*library, error) {
	libMu.Lock()
	defer libMu.Unlock()
	if l := libs[name]; l != nil {
		return l, nil
	}
	if err := libErrs[name]; err != nil {
		return nil, err
	}
	l, err := openLibrary(name)
	if err != nil {
		libErrs[name] = err
		return nil, err
	}
	libs[name] = l
	return l, nil
}

func openLibrary(name string) (*library, error) {
	file := libFile(name)
	data, err := libFS.ReadFile("lib/" + file)
	if err != nil {
		return nil, loadError("the kernel library "+file+" in this binary", "rebuild toy", err)
	}
	sum := sha256.Sum256(data)
	if hex.EncodeToString(sum[:]) != libSHA256[file] {
		return nil, loadError("an intact kernel library "+file+" (its checksum does not match zlibs.go)",
			"rebuild the libraries with go generate ./kernels/cpu and toy with them", nil)
	}
	path, err := cacheFile(file, data, sum)
	if err != nil {
		return nil, loadError("a writable cache directory for the kernel library", "set XDG_CACHE_HOME to a writable directory, or use TOY_BACKEND=go", err)
	}
	l := &library{variant: name, path: path}
	if err := dlopen(l); err != nil {
		return nil, loadError("a loadable kernel library", "delete it so that toy writes it again, or use TOY_BACKEND=go", err)
	}
	if got := l.variantName(); got != name {
		return nil, loadError("the kernel library "+path+" for "+name, "delete it so that toy writes it again", fmt.Errorf("it was built for %q", got))
	}
	return l, nil
}

// cacheFile returns the path of the library in the cache directory,
// os.UserCacheDir()/toy/kernels/<sha256 prefix>/<file>, writing it there
// (through a temporary file and a rename, so a reader never sees half of it)
// unless an intact copy is already present.
func cacheFile(file string, data []byte, sum [32]byte) (string, error) {
	base, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(base, "toy", "kernels", hex.EncodeToString(sum[:8]))
	path := filepath.Join(dir, file)
	if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, data) {
		return path, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	tmp, err := os.CreateTemp(dir, file+".tmp*")
	if err != nil {
		return "", err
	}
	_, werr := tmp.Write(data)
	cerr := tmp.Close()
	if err := errors.Join(werr, cerr, os.Chmod(tmp.Name(), 0o755)); err != nil {
		os.Remove(tmp.Name())
		return "", err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name())
		return "", err
	}
	return path, nil
}

// variantCodes maps toy_variant's result to the variant's name.
var variantCodes = map[uintptr]string{1: "x86-64", 2: "avx2", 3: "avxvnni", 4: "avx512", 5: "neon", 6: "neon-dotprod"}

func libFile(variant string) string { return "libtoy-" + runtime.GOARCH + "-" + variant + ".so" }
