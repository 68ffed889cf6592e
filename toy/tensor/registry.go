// The backend registry: backends register by name from their package's init,
// as architectures do with package models, so that nothing below them has to
// import them; and the error a native backend returns when it cannot run.

package tensor

import (
	"errors"
	"fmt"
	"slices"
	"sync"
)

// ErrNoBackend is the error OpenBackend wraps for a name nothing in the
// program registered.
var ErrNoBackend = errors.New("no such backend registered")

var (
	registryMu sync.RWMutex
	registry   = map[string]func() (Backend, error){
		"go": func() (Backend, error) { return Go{}, nil },
	}
)

// RegisterBackend makes a backend available under name: OpenBackend(name)
// calls open, which returns the backend or says why it cannot run (a
// *NativeCallError for a missing kernel library). toy's native CPU and CUDA
// backends register "native" and "cuda" from the init functions of
// kernels/cpu and kernels/cuda; a program has them when it imports those
// packages (or kernels/all). "go", the pure-Go reference, is always there.
//
// RegisterBackend panics on an empty name, a nil open or a name already
// taken: it runs from init, where a mistake is a programming error.
func RegisterBackend(name string, open func() (Backend, error)) {
	registryMu.Lock()
	defer registryMu.Unlock()
	switch {
	case name == "":
		panic("tensor.RegisterBackend: empty name")
	case open == nil:
		panic(fmt.Sprintf("tensor.RegisterBackend(%q): nil open", name))
	case registry[name] != nil:
		panic(fmt.Sprintf("tensor.RegisterBackend(%q): registered twice", name))
	}
	registry[name] = open
}

// OpenBackend opens the backend registered under name; it does not make it
// active (SetBackend does). A name nothing registered gives an error
// wrapping ErrNoBackend.
func OpenBackend(name string) (Backend, error) {
	registryMu.RLock()
	open := registry[name]
	registryMu.RUnlock()
	if open == nil {
		return nil, fmt.Errorf("backend %q: %w", name, ErrNoBackend)
	}
	return open()
}

// Backends returns the names of the registered backends, sorted.
func Backends() []string {
	registryMu.RLock()
	defer registryMu.RUnlock()
	names := make([]string, 0, len(registry))
	for name := range registry {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// NativeCallError reports that a native backend was asked for but its kernel
// library cannot be used: the platform has none, the cache directory is not
// writable, the library is damaged, or the program does not link the
// backend at all. Missing says what is missing, Hint what to do about it; Err
// is the underlying cause, if any (errors.Is/As see it). The backends in
// kernels/ return it; toy.NativeCallError and kernels.NativeCallError are
// this type.
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
