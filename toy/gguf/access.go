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

// typed returns the value of key if it is a T, what names T in the error
// if it is not.
func typed[T any](f *File, key, what string) (T, error) {
	var zero T
	v, err := f.get(key)
	if err != nil {
		return zero, err
	}
	x, ok := v.V.(T)
	if !ok {
		return zero, wrongType(key, v, what)
	}
	return x, nil
}

// String returns a string value.
func (f *File) String(key string) (string, error) { return typed[string](f, key, "string") }

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
func (f *File) Bool(key string) (bool, error) { return typed[bool](f, key, "bool") }

// Strings returns an array of strings.
func (f *File) Strings(key string) ([]string, error) {
	return typed[[]string](f, key, "array of string")
}

// Float32s returns an array of float32.
func (f *File) Float32s(key string) ([]float32, error) {
	return typed[[]float32](f, key, "array of float32")
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
	if !ti.Type.Known() {
		return nil, unsupported(ti)
	}
	return tensor.FromBytes(ti.Type, b, ti.Shape()...)
}

func unsupported(ti TensorInfo) error {
	return fmt.Errorf("%w: tensor %s is %v; toy computes with F32, F16, BF16, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, the k-quants Q2_K, Q3_K, Q4_K, Q5_K and Q6_K (as in Q2_K … Q6_K files), IQ4_NL, IQ4_XS and MXFP4 (convert others, e.g. to Q8_0)", ErrUnsupportedType, ti.Name, ti.Type)
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
	if !ti.Type.Known() {
		return nil, unsupported(ti)
	}
	out := make([]float32, ti.Elements())
	tensor.DecodeRow(out, b, ti.Type)
	return out, nil
}

// ParamCount is the number of elements in all tensors.
func (f *File) ParamCount() int64 {
	var n int64
	for _, t := range f.Tensors {
		n += int64(t.Elements())
	}
	return n
}

// Quant names the file's quantization: general.file_type when it is set and
// known (llama.cpp's names: Q4_K_M, Q8_0, F16, …), else the type holding the
// most elements among the weight matrices.
func (f *File) Quant() string {
	if ft, err := f.Uint32("general.file_type"); err == nil {
		if s, ok := fileTypes[ft]; ok {
			return s
		}
	}
	count := map[tensor.DType]uint64{}
	var best tensor.DType
	for _, t := range f.Tensors {
		if len(t.Dims) < 2 {
			continue
		}
		count[t.Type] += t.Elements()
		if count[t.Type] > count[best] || count[best] == 0 {
			best = t.Type
		}
	}
	if len(count) == 0 {
		return ""
	}
	return best.String()
}

// fileTypes are llama.cpp's general.file_type values (llama_ftype).
var fileTypes = map[uint32]string{
	0: "F32", 1: "F16", 2: "Q4_0", 3: "Q4_1", 7: "Q8_0", 8: "Q5_0", 9: "Q5_1",
	10: "Q2_K", 11: "Q3_K_S", 12: "Q3_K_M", 13: "Q3_K_L", 14: "Q4_K_S", 15: "Q4_K_M",
	16: "Q5_K_S", 17: "Q5_K_M", 18: "Q6_K", 19: "IQ2_XXS", 20: "IQ2_XS", 21: "Q2_K_S",
	22: "IQ3_XS", 23: "IQ3_XXS", 24: "IQ1_S", 25: "IQ4_NL", 26: "IQ3_S", 27: "IQ3_M",
	28: "IQ2_S", 29: "IQ2_M", 30: "IQ4_XS", 31: "IQ1_M", 32: "BF16", 36: "TQ1_0", 37: "TQ2_0",
	38: "MXFP4_MOE",
}
