// Choosing the compute backend: native CPU kernels when they load, pure Go
// otherwise.

package toy

import (
	"fmt"
	"os"
	"sync"

	"github.com/toyml/toy/kernels"
	"github.com/toyml/toy/kernels/cpu"
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
// TOY_BACKEND=native the native CPU kernels; unset (or "auto") uses native
// when it loads and otherwise pure Go, saying so once on stderr.
func init() {
	switch env := os.Getenv("TOY_BACKEND"); env {
	case "go":
		tensor.SetBackend(tensor.Go{})
	case "native":
		if err := UseBackend("native"); err != nil {
			backendErr = err
			warn(err)
		}
	case "", "auto":
		if err := UseBackend("native"); err != nil {
			warn(err)
		}
	default:
		backendErr = fmt.Errorf("TOY_BACKEND=%q: want go, native or auto", env)
		warn(backendErr)
	}
}

func warn(err error) {
	warnOnce.Do(func() { fmt.Fprintf(os.Stderr, "toy: running on pure Go: %v\n", err) })
}

// UseBackend makes name ("go" or "native") the backend every op runs on. For
// "native" it loads the CPU kernels and fails with a *NativeCallError when
// they cannot be used, leaving the backend as it was.
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
	default:
		return fmt.Errorf("backend %q: want go or native", name)
	}
	backendErr = nil
	return nil
}

// BackendName returns the name of the active backend ("go", "native").
func BackendName() string { return tensor.ActiveBackend().Name() }

// BackendError returns the error of a backend that was asked for with
// TOY_BACKEND but could not be used (a *NativeCallError for native), or nil.
// toy runs on pure Go meanwhile; callers that must not, stop here.
func BackendError() error {
	backendMu.Lock()
	defer backendMu.Unlock()
	return backendErr
}
