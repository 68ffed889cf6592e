//go:build !linux || !(amd64 || arm64)

// Platforms without native CPU kernels: Load reports a NativeCallError.

package cpu

import (
	"embed"
	"errors"
)

var libFS embed.FS

func variants() []variant { return nil }

// Features lists the CPU features the variants look at: none here.
func Features() []string { return nil }

func dlopen(l *library) error { return errors.New("no dynamic loader for this platform") }

func (l *library) variantName() string { return "" }

func call(fn uintptr, args ...uintptr) { panic("cpu: native call on a platform without kernels") }

func callRet(fn uintptr, args ...uintptr) uintptr {
	panic("cpu: native call on a platform without kernels")
}
