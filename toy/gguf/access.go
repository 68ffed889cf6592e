// Typed access to metadata and tensor data.

package gguf

import (
	"fmt"
	"math"

	"github.com/toyml/toy/toy/tensor"
)

// Has reports whether the metadata holds key.
func (f *File) Has(key string) bool {
	_, ok := f.kvIndex[key]
	return ok
}

// Value returns the metadata value for key.
func (f *File) Value(key string) (Value, bool) {
	i, ok := f.kvIndex[key]
	if !ok {
		return Value{}, false
	}
	return f.KV[i].Value, true
}

func (f *File) get(key string) (Value, error) {
	v, ok := f.Value(key)
	if !ok {
		return v, fmt.Errorf("%w: %s", ErrMissingKey, key)
	}
	return v, nil
}

func wrongType(key string, v Value, want string) error {
	t := v.Type.String()
	if v.Type == TypeArray {
		t = "array of " + v.ElemType.String()
	}
	return fmt.Errorf("%w: %s is %s, want %s", ErrWrongType, key, t, want)
}

// String returns a string value.
func (f *File) String(key string) (string, error) {
	v, err := f.get(key)
	if err != nil {
		return "", err
	}
	s, ok := v.V.(string)
	if !ok {
		return "", wrongType(key, v, "string")
	}
	return s, nil
}

// Uint32 returns an integer value that fits in a uint32 (any integer type is
// accepted, as llama.cpp's loader does).
func (f *File) Uint32(key string) (uint32, error) {
	v, err := f.get(key)
	if err != nil {
		return 0, err
	}
	x, ok := v.asInt64()
	if !ok || x < 0 || x > math.MaxUint32 {
		return 0, wrongType(key, v, "uint32")
	}
	return uint32(x), nil
}

// Int returns an integer value as an int.
func (f *File) Int(key string) (int, error) {
	v, err := f.get(key)
	if err != nil {
		return 0, err
	}
	x, ok := v.asInt64()
	if !ok || x < math.MinInt32 || x > math.MaxInt32 {
		return 0, wrongType(key, v, "integer")
	}
	return int(x), nil
}

// Float32 returns a float value (float32, or float64 converted).
func (f *File) Float32(key string) (float32, error) {
	v, err := f.get(key)
	if err != nil {
		return 0, err
	}
	switch x := v.V.(type) {
	case float32:
		return x, nil
	case float64:
		return float32(x), nil
	}
	return 0, wrongType(key, v, "float32")
}

// Bool returns a bool value.
func (f *File) Bool(key string) (bool, error) {
	v, err := f.get(key)
	if err != nil {
		return false, err
	}
	b, ok := v.V.(bool)
	if !ok {
		return false, wrongType(key, v, "bool")
	}
	return b, nil
}

// Strings returns an array of strings.
func (f *File) Strings(key string) ([]string, error) {
	v, err := f.get(key)
	if err != nil {
		return nil, err
	}
	s, ok := v.V.([]string)
	if !ok {
		return nil, wrongType(key, v, "array of string")
	}
	return s, nil
}

// Float32s returns an array of float32.
func (f *File) Float32s(key string) ([]float32, error) {
	v, err := f.get(key)
	if err != nil {
		return nil, err
	}
	s, ok := v.V.([]float32)
	if !ok {
		return nil, wrongType(key, v, "array of float32")
	}
	return s, nil
}

// Int32s returns an array of integers as int32 (any integer element type whose
// values fit is accepted).
func (f *File) Int32s(key string) ([]int32, error) {
	v, err := f.get(key)
	if err != nil {
		return nil, err
	}
	if s, ok := v.V.([]int32); ok {
		return s, nil
	}
	if v.Type != TypeArray {
		return nil, wrongType(key, v, "array of int32")
	}
	n := arrayLen(v.V)
	out := make([]int32, n)
	for i := 0; i < n; i++ {
		var x int64
		switch s := v.V.(type) {
		case []uint8:
			x = int64(s[i])
		case []int8:
			x = int64(s[i])
		case []uint16:
			x = int64(s[i])
		case []int16:
			x = int64(s[i])
		case []uint32:
			x = int64(s[i])
		case []int64:
			x = s[i]
		case []uint64:
			x = int64(min(s[i], math.MaxInt64))
		default:
			return nil, wrongType(key, v, "array of int32")
		}
		if x < math.MinInt32 || x > math.MaxInt32 {
			return nil, wrongType(key, v, "array of int32")
		}
		out[i] = int32(x)
	}
	return out, nil
}

// Architecture returns general.architecture.
func (f *File) Architecture() (string, error) { return f.String("general.architecture") }

// Info returns the descriptor of the named tensor.
func (f *File) Info(name string) (TensorInfo, error) {
	i, ok := f.tIndex[name]
	if !ok {
		return TensorInfo{}, fmt.Errorf("%w: %s", ErrNoTensor, name)
	}
	return f.Tensors[i], nil
}

// Data returns the bytes of the named tensor, a view into the file.
func (f *File) Data(name string) ([]byte, TensorInfo, error) {
	ti, err := f.Info(name)
	if err != nil {
		return nil, ti, err
	}
	start := f.DataStart + ti.Offset
	return f.data[start : start+ti.Size : start+ti.Size], ti, nil
}

// Tensor returns the named tensor as a host tensor that views the file's
// memory (no copy). The tensor is read-only and valid until Close.
func (f *File) Tensor(name string) (*tensor.Tensor, error) {
	b, ti, err := f.Data(name)
	if err != nil {
		return nil, err
	}
	return tensor.FromBytes(ti.Type, b, ti.Shape()...)
}

// Dequantize returns the named tensor's elements as float32 (a copy).
func (f *File) Dequantize(name string) ([]float32, error) {
	b, ti, err := f.Data(name)
	if err != nil {
		return nil, err
	}
	if ti.Type == tensor.I32 {
		return nil, fmt.Errorf("%w: tensor %s is I32, not a float type", ErrWrongType, name)
	}
	out := make([]float32, ti.Elements())
	tensor.DecodeRow(out, b, ti.Type)
	return out, nil
}
