// Choosing the compute backend: native CPU kernels when they load, pure Go
// otherwise, or an NVIDIA GPU when asked for — by name, from the backends
// registered with package tensor.

package toy

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"

	_ "github.com/toyml/toy/kernels/all" // the native backends register themselves, as toy/models/all's architectures do
	"github.com/toyml/toy/toy/tensor"
)

// NativeCallError is returned when a native backend is asked for but its
// kernel library cannot be used; it says what is missing and what to do.
type NativeCallError = tensor.NativeCallError

var (
	backendMu  sync.Mutex
	backendErr error // the NativeCallError of a TOY_BACKEND=native that failed
	warnOnce   sync.Once
)

// toy picks its backend from TOY_BACKEND at init, after the backends it
// links (kernels/all) have registered: Go runs an imported package's init
// first.
func init() { backendFromEnv() }

// backendFromEnv applies TOY_BACKEND: go forces pure Go, native the native
// CPU kernels, cuda the first NVIDIA GPU; unset (or "auto") uses native when
// it loads and otherwise pure Go, saying so once on stderr. A native or cuda
// backend that cannot be used is reported by BackendError, and Load fails
// with it.
func backendFromEnv() {
	switch env := os.Getenv("TOY_BACKEND"); env {
	case "go":
		tensor.SetBackend(tensor.Go{})
	case "native", "cuda":
		if err := useBackend(env); err != nil {
			setBackendErr(err)
			warn(err)
		}
	case "", "auto":
		if err := useBackend("native"); err != nil {
			warn(err)
		}
	default:
		err := fmt.Errorf("TOY_BACKEND=%q: want go, native, cuda or auto", env)
		setBackendErr(err)
		warn(err)
	}
}

func warn(err error) {
	warnOnce.Do(func() { fmt.Fprintf(os.Stderr, "toy: running on pure Go: %v\n", err) })
}

func setBackendErr(err error) {
	backendMu.Lock()
	backendErr = err
	backendMu.Unlock()
}

// UseBackend makes name ("go", "native", "cuda", or another registered with
// tensor.RegisterBackend) the backend every op runs on. For "native" it
// loads the CPU kernels, for "cuda" it opens the GPU (the NVIDIA driver's
// libcuda.so.1 and cuBLAS, see kernels/cuda); either fails with a
// *NativeCallError saying what is missing when it cannot be used, leaving
// the backend as it was. On cuda, tensors live in GPU memory and
// Go code reading them (Data, Row) copies them back.
func UseBackend(name string) error {
	return useBackend(name)
}

func useBackend(name string) error {
	backendMu.Lock()
	defer backendMu.Unlock()
	b, err := tensor.OpenBackend(name)
	switch {
	case errors.Is(err, tensor.ErrNoBackend) && (name == "native" || name == "cuda"):
		return &NativeCallError{Backend: name, Missing: "its kernels in this program", Err: err,
			Hint: `import _ "github.com/toyml/toy/kernels/all" (or kernels/cpu, kernels/cuda), or use TOY_BACKEND=go`}
	case errors.Is(err, tensor.ErrNoBackend):
		return fmt.Errorf("backend %q: want %s", name, backendNames())
	case err != nil:
		return err
	}
	tensor.SetBackend(b)
	backendErr = nil
	return nil
}

// backendNames lists the names UseBackend takes: "go, native or cuda", and
// any other registered backend.
func backendNames() string {
	names := []string{"go", "native", "cuda"}
	for _, n := range tensor.Backends() {
		if !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
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
