// Choosing the compute backend: native CPU kernels when they load, pure Go
// otherwise, or an NVIDIA GPU when asked for.

package toy

import (
	"fmt"
	"os"
	"sync"

	"github.com/toyml/toy/kernels"
	"github.com/toyml/toy/kernels/cpu"
	"github.com/toyml/toy/kernels/cuda"
	"github.com/toyml/toy/toy/tensor"
)

// NativeCallError is returned when a native backend is asked for but its
// kernel library cannot be used; it says what is missing and what to do.
type NativeCallError = kernels.NativeCallError

var (
	backendMu  sync.Mutex
	backendErr error // the NativeCallError of a TOY_BACKEND=native that failed
	warnOnce   sync.Once
)

// At init toy picks its backend: TOY_BACKEND=go forces pure Go,
// TOY_BACKEND=native the native CPU kernels, TOY_BACKEND=cuda the first
// NVIDIA GPU; unset (or "auto") uses native when it loads and otherwise pure
// Go, saying so once on stderr. A native or cuda backend that cannot be used
// is reported by BackendError, and Load fails with it.
func init() {
	switch env := os.Getenv("TOY_BACKEND"); env {
	case "go":
		tensor.SetBackend(tensor.Go{})
	case "native", "cuda":
		if err := UseBackend(env); err != nil {
			backendErr = err
			warn(err)
		}
	case "", "auto":
		if err := UseBackend("native"); err != nil {
			warn(err)
		}
	default:
		backendErr = fmt.Errorf("TOY_BACKEND=%q: want go, native, cuda or auto", env)
		warn(backendErr)
	}
}

func warn(err error) {
	warnOnce.Do(func() { fmt.Fprintf(os.Stderr, "toy: running on pure Go: %v\n", err) })
}

// UseBackend makes name ("go", "native" or "cuda") the backend every op runs
// on. For "native" it loads the CPU kernels, for "cuda" it opens the GPU
// (the NVIDIA driver's libcuda.so.1 and cuBLAS, see kernels/cuda); either
// fails with a *NativeCallError saying what is missing when it cannot be
// used, leaving the backend as it was. On cuda, tensors live in GPU memory
// and Go code reading them (Data, Row) copies them back.
func UseBackend(name string) error {
	backendMu.Lock()
	defer backendMu.Unlock()
	switch name {
	case "go":
		tensor.SetBackend(tensor.Go{})
	case "native":
		b, err := cpu.Load()
		if err != nil {
			return err
		}
		tensor.SetBackend(b)
	case "cuda":
		b, err := cuda.Load()
		if err != nil {
			return err
		}
		tensor.SetBackend(b)
	default:
		return fmt.Errorf("backend %q: want go, native or cuda", name)
	}
	backendErr = nil
	return nil
}

// BackendName returns the name of the active backend ("go", "native", "cuda").
func BackendName() string { return tensor.ActiveBackend().Name() }

// BackendError returns the error of a backend that was asked for with
// TOY_BACKEND but could not be used (a *NativeCallError for native and
// cuda), or nil.
// toy runs on pure Go meanwhile; callers that must not, stop here.
func BackendError() error {
	backendMu.Lock()
	defer backendMu.Unlock()
	return backendErr
}
