//go:build !(linux && (amd64 || arm64))

// Platforms without an NVIDIA driver toy can load.

package cuda

import "runtime"

func openLibs() (*libs, error) { return openLibsFrom(nil, nil, false) }

func openLibsFrom(cuNames, blasNames []string, required bool) (*libs, error) {
	return nil, loadError("an NVIDIA driver toy can load on "+runtime.GOOS+"/"+runtime.GOARCH,
		"the CUDA backend runs on linux/amd64 and linux/arm64; use --device cpu", nil)
}

//go:uintptrescapes
func (l *libs) call(name string, fn uintptr, args ...uintptr) error {
	panic("cuda: no driver on this platform")
}

//go:uintptrescapes
func (l *libs) blasCall(name string, fn uintptr, args ...uintptr) error {
	panic("cuda: no driver on this platform")
}
