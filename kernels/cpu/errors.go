// The error a failed load returns.

package cpu

import "github.com/toyml/toy/kernels"

func loadError(missing, hint string, err error) error {
	return &kernels.NativeCallError{Backend: "native", Missing: missing, Hint: hint, Err: err}
}
