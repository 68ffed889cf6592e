//go:build linux && (amd64 || arm64)

// Opening a library and calling into it, through purego (dlopen, no cgo).

package cpu

import "github.com/ebitengine/purego"

func dlopen(l *library) error {
	h, err := purego.Dlopen(l.path, purego.RTLD_NOW|purego.RTLD_LOCAL)
	if err != nil {
		return err
	}
	for name, p := range l.fast.symbols() {
		if *p, err = purego.Dlsym(h, "toy_"+name); err != nil {
			return err
		}
	}
	for name, p := range l.ref.symbols() {
		if *p, err = purego.Dlsym(h, "toy_"+name+"_ref"); err != nil {
			return err
		}
	}
	l.fast.packMin = int(min(callInt(l.fast.packThreshold), 1<<30))
	l.ref.packMin = int(min(callInt(l.ref.packThreshold), 1<<30))
	return nil
}

func callInt(fn uintptr) uintptr {
	r, _, _ := purego.SyscallN(fn)
	return r
}

// variantName asks the library which variant it is (toy_variant).
func (l *library) variantName() string {
	h, err := purego.Dlopen(l.path, purego.RTLD_NOW|purego.RTLD_LOCAL)
	if err != nil {
		return ""
	}
	fn, err := purego.Dlsym(h, "toy_variant")
	if err != nil {
		return ""
	}
	code, _, _ := purego.SyscallN(fn)
	return variantCodes[code]
}

// call calls the C function at fn. Pointer arguments must point into memory
// the caller keeps alive (runtime.KeepAlive) until call returns; Go's heap
// does not move.
func call(fn uintptr, args ...uintptr) { purego.SyscallN(fn, args...) }

// callRet is call for a function with an integer result.
func callRet(fn uintptr, args ...uintptr) uintptr {
	r, _, _ := purego.SyscallN(fn, args...)
	return r
}
