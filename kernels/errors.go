// Package kernels holds toy's precompiled native kernels (cpu/, C for the
// CPU; cuda/, the CUDA backend) and what they share: the error a native call returns
// when its kernel library cannot be used.
package kernels

import "fmt"

// NativeCallError reports that a native backend was asked for but its kernel
// library cannot be used: the platform has none, the cache directory is not
// writable, or the library is damaged. Missing says what is missing, Hint what
// to do about it; Err is the underlying cause, if any (errors.Is/As see it).
type NativeCallError struct {
	Backend string // "native" (CPU) or "cuda"
	Missing string // e.g. "a native CPU kernel library for windows/amd64"
	Hint    string // e.g. "run on pure Go with TOY_BACKEND=go"
	Err     error
}

func (e *NativeCallError) Error() string {
	s := fmt.Sprintf("%s backend: missing %s", e.Backend, e.Missing)
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	if e.Hint != "" {
		s += " (" + e.Hint + ")"
	}
	return s
}

func (e *NativeCallError) Unwrap() error { return e.Err }
