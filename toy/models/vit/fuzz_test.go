package vit

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/toyml/toy/toy/tensor"
)

// FuzzSafetensors: any bytes are read as a safetensors file, or refused with
// an error, and every tensor it names converts or is refused — never a
// panic, never an allocation larger than the file.
//
//	go test -fuzz=FuzzSafetensors ./toy/models/vit
func FuzzSafetensors(f *testing.F) {
	path := filepath.Join(f.TempDir(), "model.safetensors")
	writeSafetensors(f, path, map[string]*tensor.Tensor{
		"a": tensor.FromFloat32([]float32{1, 2, 3, 4, 5, 6}, 2, 3), "b": tensor.FromFloat32([]float32{7, 8}, 2),
	}, map[string]bool{"b": true})
	if b, err := os.ReadFile(path); err == nil {
		f.Add(b)
	}
	f.Add([]byte("\x10\x00\x00\x00\x00\x00\x00\x00{\"x\":{\"dtype\":\"F32\",\"shape\":[-1,-1],\"data_offsets\":[0,4]}}"))
	f.Fuzz(func(t *testing.T, b []byte) {
		st := &safetensors{where: map[string]stEntry{}}
		if st.add(b) != nil {
			return
		}
		for name := range st.where {
			st.get(name)
		}
	})
}
