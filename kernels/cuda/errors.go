// The error a failed load returns.

package cuda

import "github.com/toyml/toy/kernels"

func loadError(missing, hint string, err error) error {
	return &kernels.NativeCallError{Backend: "cuda", Missing: missing, Hint: hint, Err: err}
}
