// Reading a GGUF file's header (metadata and tensor descriptors) without its data.

package card

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"

	"github.com/toyml/toy/toy/gguf"
	"github.com/toyml/toy/toy/tensor"
)

// Header is the part of a GGUF file before the tensor data: the metadata and
// the tensor descriptors. Unlike gguf.Open it accepts every ggml tensor type
// (Q4_K, IQ2_XS, …), since a card or a listing needs names and shapes only, and
// it reads the header's bytes alone, not the gigabytes of weights after it.
//
// Header has the lookup methods of *gguf.File (Has, String, Uint32, Float32,
// Info, Architecture), with the same errors.
type Header struct {
	Version  uint32
	KV       []gguf.KV
	Tensors  []gguf.TensorInfo // Type may be one toy cannot compute with
	FileSize int64             // bytes in the whole file (0 when unknown)

	kv map[string]int
	t  map[string]int
}

// OpenHeader reads the header of the GGUF file at path.
func OpenHeader(path string) (*Header, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if st.IsDir() {
		return nil, fmt.Errorf("%s is a directory: %w", path, gguf.ErrFormat)
	}
	h, err := ReadHeader(f, st.Size())
	if err != nil {
		return nil, err
	}
	return h, nil
}

// ReadHeader reads a GGUF header from r; size is the file's length, used to
// refuse counts and lengths the file cannot hold (0: unknown).
func ReadHeader(r io.Reader, size int64) (*Header, error) {
	hr := &headerReader{r: bufio.NewReaderSize(r, 1<<16), left: size}
	if size <= 0 {
		hr.left = math.MaxInt64
	}
	h := &Header{FileSize: size, kv: map[string]int{}, t: map[string]int{}}
	m, err := hr.take(4)
	if err != nil {
		return nil, fmt.Errorf("%w: no GGUF header", gguf.ErrTruncated)
	}
	if string(m) != "GGUF" {
		return nil, fmt.Errorf("%w: bad magic %q, not a GGUF file", gguf.ErrFormat, m)
	}
	if h.Version, err = hr.u32(); err != nil {
		return nil, err
	}
	if h.Version != 2 && h.Version != 3 {
		return nil, fmt.Errorf("%w: version %d not supported (only 2 and 3)", gguf.ErrFormat, h.Version)
	}
	nTensors, err := hr.u64()
	if err != nil {
		return nil, err
	}
	nKV, err := hr.u64()
	if err != nil {
		return nil, err
	}
	if nKV > uint64(hr.left)/12 || nTensors > uint64(hr.left)/24 {
		return nil, fmt.Errorf("%w: %d metadata entries and %d tensors in %d bytes", gguf.ErrTruncated, nKV, nTensors, hr.left)
	}
	for i := uint64(0); i < nKV; i++ {
		key, err := hr.str()
		if err != nil {
			return nil, fmt.Errorf("metadata entry %d: %w", i, err)
		}
		t, err := hr.u32()
		if err != nil {
			return nil, fmt.Errorf("metadata %q: %w", key, err)
		}
		v, err := hr.value(gguf.ValueType(t), 0)
		if err != nil {
			return nil, fmt.Errorf("metadata %q: %w", key, err)
		}
		h.kv[key] = len(h.KV)
		h.KV = append(h.KV, gguf.KV{Key: key, Value: v})
	}
	for i := uint64(0); i < nTensors; i++ {
		var ti gguf.TensorInfo
		if ti.Name, err = hr.str(); err != nil {
			return nil, fmt.Errorf("tensor %d: %w", i, err)
		}
		nd, err := hr.u32()
		if err != nil {
			return nil, fmt.Errorf("tensor %q: %w", ti.Name, err)
		}
		if nd == 0 || nd > 4 {
			return nil, fmt.Errorf("%w: tensor %q has %d dimensions", gguf.ErrFormat, ti.Name, nd)
		}
		ti.Dims = make([]uint64, nd)
		for j := range ti.Dims {
			if ti.Dims[j], err = hr.u64(); err != nil {
				return nil, fmt.Errorf("tensor %q: %w", ti.Name, err)
			}
			if ti.Dims[j] == 0 || ti.Dims[j] > math.MaxInt32*4 {
				return nil, fmt.Errorf("%w: tensor %q has absurd dimension %d", gguf.ErrFormat, ti.Name, ti.Dims[j])
			}
		}
		t, err := hr.u32()
		if err != nil {
			return nil, fmt.Errorf("tensor %q: %w", ti.Name, err)
		}
		ti.Type = tensor.DType(t)
		if gt, ok := ggmlTypes[t]; ok {
			ti.Size = ti.Elements() / uint64(gt.block) * uint64(gt.bytes)
		}
		if ti.Offset, err = hr.u64(); err != nil {
			return nil, fmt.Errorf("tensor %q: %w", ti.Name, err)
		}
		h.t[ti.Name] = len(h.Tensors)
		h.Tensors = append(h.Tensors, ti)
	}
	if size > 0 { // a half-written file: its tensors end past its end
		align := uint64(32)
		if a, err := h.Uint32("general.alignment"); err == nil && a > 0 {
			align = uint64(a)
		}
		start := (uint64(size-hr.left) + align - 1) / align * align
		for _, t := range h.Tensors {
			if end := start + t.Offset + t.Size; end > uint64(size) {
				return nil, fmt.Errorf("%w: tensor %q ends at byte %d of a %d-byte file", gguf.ErrTruncated, t.Name, end, size)
			}
		}
	}
	return h, nil
}

// Has reports whether the metadata holds key.
func (h *Header) Has(key string) bool { _, ok := h.kv[key]; return ok }

// Value returns the metadata value for key.
func (h *Header) Value(key string) (gguf.Value, bool) {
	i, ok := h.kv[key]
	if !ok {
		return gguf.Value{}, false
	}
	return h.KV[i].Value, true
}

func (h *Header) get(key string) (gguf.Value, error) {
	v, ok := h.Value(key)
	if !ok {
		return v, fmt.Errorf("%w: %s", gguf.ErrMissingKey, key)
	}
	return v, nil
}

// String returns a string value.
func (h *Header) String(key string) (string, error) {
	v, err := h.get(key)
	if err != nil {
		return "", err
	}
	if s, ok := v.V.(string); ok {
		return s, nil
	}
	return "", fmt.Errorf("%w: %s is %v, want string", gguf.ErrWrongType, key, v.Type)
}

// Uint32 returns an integer value that fits in a uint32.
func (h *Header) Uint32(key string) (uint32, error) {
	v, err := h.get(key)
	if err != nil {
		return 0, err
	}
	x, ok := asInt64(v)
	if !ok || x < 0 || x > math.MaxUint32 {
		return 0, fmt.Errorf("%w: %s is %v, want uint32", gguf.ErrWrongType, key, v.Type)
	}
	return uint32(x), nil
}

// Float32 returns a float value.
func (h *Header) Float32(key string) (float32, error) {
	v, err := h.get(key)
	if err != nil {
		return 0, err
	}
	switch x := v.V.(type) {
	case float32:
		return x, nil
	case float64:
		return float32(x), nil
	}
	return 0, fmt.Errorf("%w: %s is %v, want float32", gguf.ErrWrongType, key, v.Type)
}

// Architecture returns general.architecture.
func (h *Header) Architecture() (string, error) { return h.String("general.architecture") }

// Info returns the descriptor of the named tensor.
func (h *Header) Info(name string) (gguf.TensorInfo, error) {
	i, ok := h.t[name]
	if !ok {
		return gguf.TensorInfo{}, fmt.Errorf("%w: %s", gguf.ErrNoTensor, name)
	}
	return h.Tensors[i], nil
}

// ParamCount is the number of elements in all tensors.
func (h *Header) ParamCount() int64 {
	var n int64
	for _, t := range h.Tensors {
		n += int64(t.Elements())
	}
	return n
}

// Quant names the file's quantization: general.file_type when it is set and
// known (llama.cpp's names: Q4_K_M, Q8_0, F16, …), else the type holding the
// most bytes among the weight matrices.
func (h *Header) Quant() string {
	if ft, err := h.Uint32("general.file_type"); err == nil {
		if s, ok := fileTypes[ft]; ok {
			return s
		}
	}
	bytes := map[uint32]uint64{}
	var best uint32
	for _, t := range h.Tensors {
		if len(t.Dims) < 2 {
			continue
		}
		id := uint32(t.Type)
		bytes[id] += t.Elements()
		if bytes[id] > bytes[best] || bytes[best] == 0 {
			best = id
		}
	}
	if len(bytes) == 0 {
		return ""
	}
	return TypeName(best)
}

// TypeName returns ggml's name of a tensor type id ("Q4_K"), or "type(N)".
func TypeName(id uint32) string {
	if t, ok := ggmlTypes[id]; ok {
		return t.name
	}
	return fmt.Sprintf("type(%d)", id)
}

// ggmlTypes are ggml's tensor types: name, elements per block, bytes per block.
var ggmlTypes = map[uint32]struct {
	name         string
	block, bytes int
}{
	0: {"F32", 1, 4}, 1: {"F16", 1, 2}, 2: {"Q4_0", 32, 18}, 3: {"Q4_1", 32, 20},
	6: {"Q5_0", 32, 22}, 7: {"Q5_1", 32, 24}, 8: {"Q8_0", 32, 34}, 9: {"Q8_1", 32, 36},
	10: {"Q2_K", 256, 84}, 11: {"Q3_K", 256, 110}, 12: {"Q4_K", 256, 144}, 13: {"Q5_K", 256, 176},
	14: {"Q6_K", 256, 210}, 15: {"Q8_K", 256, 292}, 16: {"IQ2_XXS", 256, 66}, 17: {"IQ2_XS", 256, 74},
	18: {"IQ3_XXS", 256, 98}, 19: {"IQ1_S", 256, 50}, 20: {"IQ4_NL", 32, 18}, 21: {"IQ3_S", 256, 110},
	22: {"IQ2_S", 256, 82}, 23: {"IQ4_XS", 256, 136}, 24: {"I8", 1, 1}, 25: {"I16", 1, 2},
	26: {"I32", 1, 4}, 27: {"I64", 1, 8}, 28: {"F64", 1, 8}, 29: {"IQ1_M", 256, 56},
	30: {"BF16", 1, 2}, 34: {"TQ1_0", 256, 54}, 35: {"TQ2_0", 256, 66}, 39: {"MXFP4", 32, 17},
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

func asInt64(v gguf.Value) (int64, bool) {
	switch x := v.V.(type) {
	case uint8:
		return int64(x), true
	case int8:
		return int64(x), true
	case uint16:
		return int64(x), true
	case int16:
		return int64(x), true
	case uint32:
		return int64(x), true
	case int32:
		return int64(x), true
	case uint64:
		return int64(x), x <= math.MaxInt64
	case int64:
		return x, true
	}
	return 0, false
}

// headerReader reads little-endian values, counting the bytes the file has left.
type headerReader struct {
	r    *bufio.Reader
	left int64
	buf  [8]byte
}

func (r *headerReader) take(n int) ([]byte, error) {
	if int64(n) > r.left {
		return nil, fmt.Errorf("%w: need %d bytes, %d left", gguf.ErrTruncated, n, r.left)
	}
	var b []byte
	if n <= len(r.buf) {
		b = r.buf[:n]
	} else {
		b = make([]byte, n)
	}
	if _, err := io.ReadFull(r.r, b); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, fmt.Errorf("%w: header ends early", gguf.ErrTruncated)
		}
		return nil, err
	}
	r.left -= int64(n)
	return b, nil
}

func (r *headerReader) u32() (uint32, error) {
	b, err := r.take(4)
	if err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint32(b), nil
}

func (r *headerReader) u64() (uint64, error) {
	b, err := r.take(8)
	if err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint64(b), nil
}

func (r *headerReader) str() (string, error) {
	n, err := r.u64()
	if err != nil {
		return "", err
	}
	if n > uint64(r.left) || n > 1<<28 {
		return "", fmt.Errorf("%w: string of %d bytes, %d left", gguf.ErrTruncated, n, r.left)
	}
	b, err := r.take(int(n))
	return string(b), err
}

func (r *headerReader) scalar(t gguf.ValueType) (any, error) {
	switch t {
	case gguf.TypeString:
		return r.str()
	case gguf.TypeBool:
		b, err := r.take(1)
		if err != nil {
			return nil, err
		}
		return b[0] != 0, nil
	case gguf.TypeUint8, gguf.TypeInt8:
		b, err := r.take(1)
		if err != nil {
			return nil, err
		}
		if t == gguf.TypeInt8 {
			return int8(b[0]), nil
		}
		return b[0], nil
	case gguf.TypeUint16, gguf.TypeInt16:
		b, err := r.take(2)
		if err != nil {
			return nil, err
		}
		x := binary.LittleEndian.Uint16(b)
		if t == gguf.TypeInt16 {
			return int16(x), nil
		}
		return x, nil
	case gguf.TypeUint32, gguf.TypeInt32, gguf.TypeFloat32:
		x, err := r.u32()
		if err != nil {
			return nil, err
		}
		switch t {
		case gguf.TypeInt32:
			return int32(x), nil
		case gguf.TypeFloat32:
			return math.Float32frombits(x), nil
		}
		return x, nil
	case gguf.TypeUint64, gguf.TypeInt64, gguf.TypeFloat64:
		x, err := r.u64()
		if err != nil {
			return nil, err
		}
		switch t {
		case gguf.TypeInt64:
			return int64(x), nil
		case gguf.TypeFloat64:
			return math.Float64frombits(x), nil
		}
		return x, nil
	}
	return nil, fmt.Errorf("%w: unknown metadata type %d", gguf.ErrFormat, uint32(t))
}

// value reads a metadata value. Arrays of strings and of numbers become typed
// slices as in package gguf; arrays of arrays become []gguf.Value.
func (r *headerReader) value(t gguf.ValueType, depth int) (gguf.Value, error) {
	if t != gguf.TypeArray {
		x, err := r.scalar(t)
		return gguf.Value{Type: t, V: x}, err
	}
	if depth > 4 {
		return gguf.Value{}, fmt.Errorf("%w: arrays nested too deep", gguf.ErrFormat)
	}
	et32, err := r.u32()
	if err != nil {
		return gguf.Value{}, err
	}
	et := gguf.ValueType(et32)
	n, err := r.u64()
	if err != nil {
		return gguf.Value{}, err
	}
	if n > uint64(r.left) {
		return gguf.Value{}, fmt.Errorf("%w: array of %d in %d bytes", gguf.ErrTruncated, n, r.left)
	}
	v := gguf.Value{Type: gguf.TypeArray, ElemType: et}
	var (
		strs []string
		u32s []uint32
		i32s []int32
		f32s []float32
		vals []gguf.Value
	)
	for i := uint64(0); i < n; i++ {
		if et == gguf.TypeArray {
			x, err := r.value(et, depth+1)
			if err != nil {
				return v, err
			}
			vals = append(vals, x)
			continue
		}
		x, err := r.scalar(et)
		if err != nil {
			return v, err
		}
		switch x := x.(type) {
		case string:
			strs = append(strs, x)
		case uint32:
			u32s = append(u32s, x)
		case int32:
			i32s = append(i32s, x)
		case float32:
			f32s = append(f32s, x)
		default:
			vals = append(vals, gguf.Value{Type: et, V: x})
		}
	}
	switch et {
	case gguf.TypeString:
		v.V = strs
	case gguf.TypeUint32:
		v.V = u32s
	case gguf.TypeInt32:
		v.V = i32s
	case gguf.TypeFloat32:
		v.V = f32s
	default:
		v.V = vals
	}
	return v, nil
}
