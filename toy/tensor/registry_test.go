// Tests of the backend registry and of the deferred backend choice.

package tensor

import (
	"errors"
	"slices"
	"testing"
)

// other is a backend under another name: the Go reference renamed.
type other struct{ Go }

func (other) Name() string { return "test-other" }

func TestRegisterBackendOpensByName(t *testing.T) {
	if !slices.Contains(Backends(), "test-other") { // -count=2 runs this twice
		RegisterBackend("test-other", func() (Backend, error) { return other{}, nil })
	}
	if !slices.Contains(Backends(), "test-other") || !slices.Contains(Backends(), "go") {
		t.Fatalf("Backends() = %v, want go and test-other among them", Backends())
	}
	b, err := OpenBackend("test-other")
	if err != nil || b.Name() != "test-other" {
		t.Errorf("OpenBackend(test-other) = %v, %v", b, err)
	}
	if b, err := OpenBackend("go"); err != nil || b.Name() != (Go{}).Name() {
		t.Errorf("OpenBackend(go) = %v, %v", b, err)
	}
	if _, err := OpenBackend("metal"); !errors.Is(err, ErrNoBackend) {
		t.Errorf("OpenBackend(metal) = %v, want ErrNoBackend", err)
	}
	defer func() {
		if recover() == nil {
			t.Error("registering test-other twice did not panic")
		}
	}()
	RegisterBackend("test-other", func() (Backend, error) { return other{}, nil })
}

func TestNativeCallErrorMessage(t *testing.T) {
	cause := errors.New("dlopen failed")
	err := &NativeCallError{Backend: "native", Missing: "a kernel library", Hint: "use TOY_BACKEND=go", Err: cause}
	if got, want := err.Error(), "native backend: missing a kernel library: dlopen failed (use TOY_BACKEND=go)"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	if !errors.Is(err, cause) {
		t.Error("errors.Is does not see the cause")
	}
}
