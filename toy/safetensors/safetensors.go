// Package safetensors reads Hugging Face's safetensors checkpoints, the
// format converters start from (toy convert: vit.FromHF).
//
// A safetensors file is an 8-byte little-endian header length, a JSON header
// naming every tensor's dtype, shape and byte range, then the raw
// little-endian data. A large checkpoint is split into shards that
// model.safetensors.index.json lists. Tensors are read into memory and
// converted to F32 (from F32, F16 or BF16), in row-major order as PyTorch
// stores them.
//
// # Error Handling
//
// Every problem with a file is an error, never a panic; byte ranges and
// shapes are checked against the file before anything is allocated. Types
// toy does not convert, and directories holding only pytorch_model.bin, wrap
// ErrUnsupported.
package safetensors

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"

	"github.com/toyml/toy/toy/tensor"
	"github.com/toyml/toy/toy/tensor/quant"
)

// ErrUnsupported is returned for checkpoints this package cannot read.
var ErrUnsupported = errors.New("safetensors: unsupported checkpoint")

// Files is a set of safetensors files read into memory, their tensors by name.
type Files struct {
	where map[string]entry
}

type entry struct {
	DType   string `json:"dtype"`
	Shape   []int  `json:"shape"`
	Offsets [2]int `json:"data_offsets"`
	data    []byte // the file's data section
}

// ReadDir reads dir/model.safetensors, or the shards that
// dir/model.safetensors.index.json lists.
func ReadDir(dir string) (*Files, error) {
	files := []string{"model.safetensors"}
	var index struct {
		WeightMap map[string]string `json:"weight_map"`
	}
	if b, err := os.ReadFile(filepath.Join(dir, "model.safetensors.index.json")); err == nil {
		if err := json.Unmarshal(b, &index); err != nil {
			return nil, fmt.Errorf("read %s: %w", filepath.Join(dir, "model.safetensors.index.json"), err)
		}
		seen := map[string]bool{}
		files = files[:0]
		for _, f := range index.WeightMap {
			if f != filepath.Base(f) || f == "." || f == ".." {
				return nil, fmt.Errorf("model.safetensors.index.json names shard %q outside %s", f, dir)
			}
			if !seen[f] {
				seen[f] = true
				files = append(files, f)
			}
		}
		sort.Strings(files)
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	st := &Files{where: map[string]entry{}}
	for _, name := range files {
		path := filepath.Join(dir, name)
		b, err := os.ReadFile(path)
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("%w: %s not found (toy reads safetensors, not pytorch_model.bin)", ErrUnsupported, path)
		}
		if err != nil {
			return nil, err
		}
		if err := st.add(b); err != nil {
			return nil, fmt.Errorf("read %s: %w", path, err)
		}
	}
	return st, nil
}

// add reads the header of one file's bytes b and adds its tensors, which
// view b.
func (st *Files) add(b []byte) error {
	if len(b) < 8 {
		return errors.New("safetensors: truncated header")
	}
	n := binary.LittleEndian.Uint64(b)
	if n > uint64(len(b)-8) {
		return fmt.Errorf("safetensors: header of %d bytes in a file of %d", n, len(b))
	}
	var header map[string]json.RawMessage
	if err := json.Unmarshal(b[8:8+n], &header); err != nil {
		return fmt.Errorf("safetensors header: %w", err)
	}
	data := b[8+n:]
	for name, raw := range header {
		if name == "__metadata__" {
			continue
		}
		var e entry
		if err := json.Unmarshal(raw, &e); err != nil {
			return fmt.Errorf("safetensors: tensor %s: %w", name, err)
		}
		if e.Offsets[0] < 0 || e.Offsets[0] > e.Offsets[1] || e.Offsets[1] > len(data) {
			return fmt.Errorf("safetensors: tensor %s: bytes %v of %d", name, e.Offsets, len(data))
		}
		e.data = data
		st.where[name] = e
	}
	return nil
}

// Has reports whether the files hold the named tensor.
func (st *Files) Has(name string) bool {
	_, ok := st.where[name]
	return ok
}

// Tensor returns the named tensor as F32, converted from F32, F16 or BF16.
func (st *Files) Tensor(name string) (*tensor.Tensor, error) {
	e, ok := st.where[name]
	if !ok {
		return nil, fmt.Errorf("tensor %s is missing", name)
	}
	raw := e.data[e.Offsets[0]:e.Offsets[1]]
	n := 1
	for _, d := range e.Shape {
		if d <= 0 || n > len(raw)/d {
			return nil, fmt.Errorf("safetensors: tensor %s has shape %v for %d bytes", name, e.Shape, len(raw))
		}
		n *= d
	}
	size := map[string]int{"F32": 4, "F16": 2, "BF16": 2}[e.DType]
	if size == 0 {
		return nil, fmt.Errorf("%w: tensor %s is %s (F32, F16 or BF16)", ErrUnsupported, name, e.DType)
	}
	if len(raw) != n*size || n == 0 {
		return nil, fmt.Errorf("safetensors: tensor %s %v %s has %d bytes", name, e.Shape, e.DType, len(raw))
	}
	out := make([]float32, n)
	for i := range out {
		switch e.DType {
		case "F32":
			out[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
		case "F16":
			out[i] = quant.FP16ToF32(binary.LittleEndian.Uint16(raw[2*i:]))
		case "BF16":
			out[i] = math.Float32frombits(uint32(binary.LittleEndian.Uint16(raw[2*i:])) << 16)
		}
	}
	return tensor.FromFloat32(out, e.Shape...), nil
}
