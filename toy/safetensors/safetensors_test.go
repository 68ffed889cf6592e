package safetensors

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// file encodes a safetensors file from a header and its data section.
func file(header map[string]any, data []byte) []byte {
	h, _ := json.Marshal(header)
	return append(append(binary.LittleEndian.AppendUint64(nil, uint64(len(h))), h...), data...)
}

// By hand: 1.5 is 0x3FC00000 in F32, 0x3E00 in F16 and 0x3FC0 in BF16;
// −2 is 0xC0000000, 0xC000 and 0xC000.
func TestTensorByHand(t *testing.T) {
	var data []byte
	data = binary.LittleEndian.AppendUint32(data, 0x3FC00000)
	data = binary.LittleEndian.AppendUint32(data, 0xC0000000)
	data = binary.LittleEndian.AppendUint16(data, 0x3E00)
	data = binary.LittleEndian.AppendUint16(data, 0xC000)
	data = binary.LittleEndian.AppendUint16(data, 0x3FC0)
	data = binary.LittleEndian.AppendUint16(data, 0xC000)
	dir := t.TempDir()
	b := file(map[string]any{
		"__metadata__": map[string]string{"format": "pt"},
		"f32":          map[string]any{"dtype": "F32", "shape": []int{1, 2}, "data_offsets": []int{0, 8}},
		"f16":          map[string]any{"dtype": "F16", "shape": []int{2}, "data_offsets": []int{8, 12}},
		"bf16":         map[string]any{"dtype": "BF16", "shape": []int{2, 1}, "data_offsets": []int{12, 16}},
		"i64":          map[string]any{"dtype": "I64", "shape": []int{1}, "data_offsets": []int{0, 8}},
	}, data)
	if err := os.WriteFile(filepath.Join(dir, "model.safetensors"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	st, err := ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for name, shape := range map[string][]int{"f32": {1, 2}, "f16": {2}, "bf16": {2, 1}} {
		x, err := st.Tensor(name)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(x.Shape(), shape) || !slices.Equal(x.Float32s(), []float32{1.5, -2}) {
			t.Errorf("%s: %v %v, want %v [1.5 -2]", name, x.Shape(), x.Float32s(), shape)
		}
	}
	if _, err := st.Tensor("i64"); !errors.Is(err, ErrUnsupported) {
		t.Errorf("I64: err = %v, want ErrUnsupported", err)
	}
	if st.Has("missing") || !st.Has("f16") {
		t.Error("Has")
	}
	if _, err := ReadDir(t.TempDir()); !errors.Is(err, ErrUnsupported) {
		t.Errorf("an empty directory: err = %v, want ErrUnsupported", err)
	}
}

// FuzzSafetensors: any bytes are read as a safetensors file, or refused with
// an error, and every tensor it names converts or is refused — never a
// panic, never an allocation larger than the file.
//
//	go test -fuzz=FuzzSafetensors ./toy/safetensors
func FuzzSafetensors(f *testing.F) {
	f.Add(file(map[string]any{
		"__metadata__": map[string]string{"format": "pt"},
		"a":            map[string]any{"dtype": "F32", "shape": []int{2, 1}, "data_offsets": []int{0, 8}},
		"b":            map[string]any{"dtype": "BF16", "shape": []int{2}, "data_offsets": []int{8, 12}},
	}, make([]byte, 12)))
	f.Add([]byte("\x10\x00\x00\x00\x00\x00\x00\x00{\"x\":{\"dtype\":\"F32\",\"shape\":[-1,-1],\"data_offsets\":[0,4]}}"))
	f.Fuzz(func(t *testing.T, b []byte) {
		st := &Files{where: map[string]entry{}}
		if st.add(b) != nil {
			return
		}
		for name := range st.where {
			st.Tensor(name)
		}
	})
}
