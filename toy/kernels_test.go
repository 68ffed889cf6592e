// The surface chooses backends by name, from those registered with package
// tensor.

package toy_test

import (
	"slices"
	"testing"

	"github.com/toyml/toy/toy"
	"github.com/toyml/toy/toy/tensor"
)

// TestKernelsRegister: the surface links both native backends.
func TestKernelsRegister(t *testing.T) {
	for _, name := range []string{"go", "native", "cuda"} {
		if !slices.Contains(tensor.Backends(), name) {
			t.Errorf("tensor.Backends() = %v, lacks %s", tensor.Backends(), name)
		}
	}
}

// TestUseBackendUnknown checks the message for a name nothing registered.
func TestUseBackendUnknown(t *testing.T) {
	err := toy.UseBackend("metal")
	if err == nil || err.Error() != `backend "metal": want go, native or cuda` {
		t.Errorf("UseBackend(metal) = %v", err)
	}
}
