// Parsing a GGUF file: header, metadata, tensor descriptors and data views.

package gguf

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"slices"

	"github.com/toyml/toy/toy/tensor"
)

// Sentinel errors; every error returned by this package wraps one of them
// (or an *os.PathError from opening the file).
var (
	ErrTruncated  = errors.New("gguf: file is truncated")
	ErrFormat     = errors.New("gguf: malformed file")
	ErrMissingKey = errors.New("gguf: metadata key not found")
	ErrWrongType  = errors.New("gguf: metadata value has the wrong type")
	ErrNoTensor   = errors.New("gguf: tensor not found")
	// ErrUnsupportedType: the tensor's type (Q4_K, IQ2_XS, …) can be read and
	// described but toy does not compute with it.
	ErrUnsupportedType = errors.New("gguf: tensor type not supported for computation")
)

const (
	magic            = "GGUF"
	defaultAlignment = 32
	maxDims          = 4       // ggml's GGML_MAX_DIMS
	maxNesting       = 4       // arrays of arrays deeper than this are refused
	maxKeyLen        = 1 << 16 // keys and tensor names are short identifiers
)

// KV is one metadata entry.
type KV struct {
	Key   string
	Value Value
}

// TensorInfo describes one tensor stored in the file.
type TensorInfo struct {
	Name   string
	Dims   []uint64     // innermost first, as stored
	Type   tensor.DType // element type (ggml type id)
	Offset uint64       // from the start of the data section
	Size   uint64       // bytes of data
}

// Shape returns the dimensions in row-major order (outermost first).
func (t TensorInfo) Shape() []int {
	s := make([]int, len(t.Dims))
	for i, d := range t.Dims {
		s[len(t.Dims)-1-i] = int(d)
	}
	return s
}

// Elements is the number of elements in the tensor.
func (t TensorInfo) Elements() uint64 {
	n := uint64(1)
	for _, d := range t.Dims {
		n *= d
	}
	return n
}

// File is a parsed GGUF file. Its tensor data views stay valid until Close.
type File struct {
	Version   uint32
	KV        []KV         // metadata in file order
	Tensors   []TensorInfo // tensor descriptors in file order
	Alignment uint64
	DataStart uint64 // file offset of the tensor data section

	data    []byte // the whole file (mapped or read)
	kvIndex map[string]int
	tIndex  map[string]int
	unmap   func() error
}

// Open maps the file at path and parses it. Close releases the mapping.
func Open(path string) (*File, error) {
	// Look before opening: opening a FIFO or a device could block forever.
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if st.IsDir() {
		return nil, fmt.Errorf("%s is a directory: %w", path, ErrFormat)
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file (%v): %w", path, st.Mode().Type(), ErrFormat)
	}
	fd, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer fd.Close()
	if st, err = fd.Stat(); err != nil {
		return nil, err
	}
	data, unmap, err := mapFile(fd, st.Size())
	if err != nil {
		return nil, fmt.Errorf("map %s: %w", path, err)
	}
	f, err := Parse(data)
	if err != nil {
		unmap()
		return nil, err
	}
	f.unmap = unmap
	return f, nil
}

// Prefetch brings the whole file into memory now (on Linux; elsewhere it
// does nothing), so that the first pass over the weights does not stop at
// every page. Loaders call it once they know the file is a model they run;
// reading metadata alone (toy list, describe) does not need it.
func (f *File) Prefetch() { prefetch(f.data) }

// Close releases the file's memory; tensor views must not be used afterwards.
func (f *File) Close() error {
	if f.unmap == nil {
		return nil
	}
	err := f.unmap()
	f.unmap, f.data = nil, nil
	return err
}

// Parse parses a GGUF file held in memory. Tensor views alias b.
func Parse(b []byte) (*File, error) {
	r := &reader{b: b}
	if len(b) < 4 || string(b[:4]) != magic {
		if len(b) < 4 {
			return nil, fmt.Errorf("%w: %d bytes, no GGUF header", ErrTruncated, len(b))
		}
		return nil, fmt.Errorf("%w: bad magic %q, not a GGUF file", ErrFormat, b[:4])
	}
	r.off = 4
	f := &File{data: b, kvIndex: map[string]int{}, tIndex: map[string]int{}}
	var err error
	if f.Version, err = r.u32(); err != nil {
		return nil, err
	}
	if f.Version != 2 && f.Version != 3 {
		return nil, fmt.Errorf("%w: version %d not supported (only 2 and 3)", ErrFormat, f.Version)
	}
	nTensors, err := r.u64()
	if err != nil {
		return nil, err
	}
	nKV, err := r.u64()
	if err != nil {
		return nil, err
	}
	// Every KV needs at least 12 bytes and every tensor info at least 24, so
	// counts larger than that are lies; refuse them before allocating.
	if nKV > uint64(r.left())/12 {
		return nil, fmt.Errorf("%w: %d metadata entries in %d bytes", ErrTruncated, nKV, r.left())
	}
	if nTensors > uint64(r.left())/24 {
		return nil, fmt.Errorf("%w: %d tensors in %d bytes", ErrTruncated, nTensors, r.left())
	}

	f.KV = make([]KV, 0, nKV)
	for i := uint64(0); i < nKV; i++ {
		key, err := r.str(maxKeyLen)
		if err != nil {
			return nil, fmt.Errorf("metadata entry %d: %w", i, err)
		}
		t, err := r.u32()
		if err != nil {
			return nil, fmt.Errorf("metadata %q: %w", key, err)
		}
		v, err := r.value(ValueType(t), 0)
		if err != nil {
			return nil, fmt.Errorf("metadata %q: %w", key, err)
		}
		if _, dup := f.kvIndex[key]; dup {
			return nil, fmt.Errorf("%w: duplicate metadata key %q", ErrFormat, key)
		}
		f.kvIndex[key] = len(f.KV)
		f.KV = append(f.KV, KV{key, v})
	}

	f.Alignment = defaultAlignment
	if _, ok := f.kvIndex["general.alignment"]; ok {
		a, err := f.Uint32("general.alignment")
		if err != nil {
			return nil, err
		}
		if a == 0 || a&(a-1) != 0 {
			return nil, fmt.Errorf("%w: general.alignment %d is not a power of two", ErrFormat, a)
		}
		f.Alignment = uint64(a)
	}

	f.Tensors = make([]TensorInfo, 0, nTensors)
	for i := uint64(0); i < nTensors; i++ {
		ti, err := r.tensorInfo()
		if err != nil {
			return nil, fmt.Errorf("tensor %d: %w", i, err)
		}
		if _, dup := f.tIndex[ti.Name]; dup {
			return nil, fmt.Errorf("%w: duplicate tensor %q", ErrFormat, ti.Name)
		}
		f.tIndex[ti.Name] = len(f.Tensors)
		f.Tensors = append(f.Tensors, ti)
	}

	f.DataStart = alignUp(uint64(r.off), f.Alignment)
	dataLen := uint64(len(b)) - min(f.DataStart, uint64(len(b)))
	for _, t := range f.Tensors {
		if t.Offset%f.Alignment != 0 {
			return nil, fmt.Errorf("%w: tensor %q offset %d is not aligned to %d", ErrFormat, t.Name, t.Offset, f.Alignment)
		}
		if t.Offset > dataLen || t.Size > dataLen-t.Offset {
			return nil, fmt.Errorf("%w: tensor %q (%d bytes at %d) ends past the data section (%d bytes)",
				ErrTruncated, t.Name, t.Size, t.Offset, dataLen)
		}
	}
	// No two tensors may share bytes: a file whose weights alias each other
	// would load and run wrongly (llama.cpp refuses it too).
	byOffset := slices.Clone(f.Tensors)
	slices.SortFunc(byOffset, func(a, b TensorInfo) int { return cmp.Compare(a.Offset, b.Offset) })
	for i := 1; i < len(byOffset); i++ {
		if a, b := byOffset[i-1], byOffset[i]; a.Size > 0 && a.Offset+a.Size > b.Offset {
			return nil, fmt.Errorf("%w: tensors %q (%d bytes at %d) and %q (at %d) overlap", ErrFormat, a.Name, a.Size, a.Offset, b.Name, b.Offset)
		}
	}
	return f, nil
}

func alignUp(x, a uint64) uint64 { return (x + a - 1) / a * a }

// reader walks a byte slice, failing with ErrTruncated at the end.
type reader struct {
	b   []byte
	off int
}

func (r *reader) left() int { return len(r.b) - r.off }

func (r *reader) take(n int) ([]byte, error) {
	if n < 0 || n > r.left() {
		return nil, fmt.Errorf("%w: need %d bytes at offset %d, %d left", ErrTruncated, n, r.off, r.left())
	}
	s := r.b[r.off : r.off+n]
	r.off += n
	return s, nil
}

func (r *reader) u32() (uint32, error) {
	s, err := r.take(4)
	if err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint32(s), nil
}

func (r *reader) u64() (uint64, error) {
	s, err := r.take(8)
	if err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint64(s), nil
}

func (r *reader) str(limit uint64) (string, error) {
	n, err := r.u64()
	if err != nil {
		return "", err
	}
	if n > uint64(r.left()) {
		return "", fmt.Errorf("%w: string of %d bytes, %d left", ErrTruncated, n, r.left())
	}
	if n > limit {
		return "", fmt.Errorf("%w: string of %d bytes is too long here", ErrFormat, n)
	}
	s, _ := r.take(int(n))
	return string(s), nil
}

// value reads one value of type t; depth counts array nesting.
func (r *reader) value(t ValueType, depth int) (Value, error) {
	v := Value{Type: t}
	if t == TypeString {
		s, err := r.str(math.MaxUint64)
		v.V = s
		return v, err
	}
	if t == TypeArray {
		if depth >= maxNesting {
			return v, fmt.Errorf("%w: arrays nested deeper than %d", ErrFormat, maxNesting)
		}
		et, err := r.u32()
		if err != nil {
			return v, err
		}
		n, err := r.u64()
		if err != nil {
			return v, err
		}
		v.ElemType = ValueType(et)
		v.V, err = r.array(ValueType(et), n, depth)
		return v, err
	}
	sz := t.size()
	if sz == 0 {
		return v, fmt.Errorf("%w: unknown value type %d", ErrFormat, uint32(t))
	}
	s, err := r.take(sz)
	if err != nil {
		return v, err
	}
	le := binary.LittleEndian
	switch t {
	case TypeUint8:
		v.V = s[0]
	case TypeInt8:
		v.V = int8(s[0])
	case TypeBool:
		if s[0] > 1 {
			return v, fmt.Errorf("%w: bool value %d", ErrFormat, s[0])
		}
		v.V = s[0] == 1
	case TypeUint16:
		v.V = le.Uint16(s)
	case TypeInt16:
		v.V = int16(le.Uint16(s))
	case TypeUint32:
		v.V = le.Uint32(s)
	case TypeInt32:
		v.V = int32(le.Uint32(s))
	case TypeFloat32:
		v.V = math.Float32frombits(le.Uint32(s))
	case TypeUint64:
		v.V = le.Uint64(s)
	case TypeInt64:
		v.V = int64(le.Uint64(s))
	case TypeFloat64:
		v.V = math.Float64frombits(le.Uint64(s))
	}
	return v, nil
}

// array reads n elements of type et into a typed slice.
func (r *reader) array(et ValueType, n uint64, depth int) (any, error) {
	// Each element takes at least its scalar size (8 for a string's length,
	// 12 for a nested array's header); check before allocating.
	minSize := uint64(et.size())
	switch et {
	case TypeString:
		minSize = 8
	case TypeArray:
		minSize = 12
	}
	if minSize == 0 {
		return nil, fmt.Errorf("%w: unknown array element type %d", ErrFormat, uint32(et))
	}
	if n > uint64(r.left())/minSize {
		return nil, fmt.Errorf("%w: array of %d %v elements, %d bytes left", ErrTruncated, n, et, r.left())
	}
	le := binary.LittleEndian
	if sz := et.size(); sz > 0 {
		s, _ := r.take(int(n) * sz)
		switch et {
		case TypeUint8:
			return append([]uint8(nil), s...), nil
		case TypeInt8:
			return decodeAll(s, 1, func(b []byte) int8 { return int8(b[0]) }), nil
		case TypeBool:
			a := make([]bool, n)
			for i := range a {
				if s[i] > 1 {
					return nil, fmt.Errorf("%w: bool value %d", ErrFormat, s[i])
				}
				a[i] = s[i] == 1
			}
			return a, nil
		case TypeUint16:
			return decodeAll(s, 2, le.Uint16), nil
		case TypeInt16:
			return decodeAll(s, 2, func(b []byte) int16 { return int16(le.Uint16(b)) }), nil
		case TypeUint32:
			return decodeAll(s, 4, le.Uint32), nil
		case TypeInt32:
			return decodeAll(s, 4, func(b []byte) int32 { return int32(le.Uint32(b)) }), nil
		case TypeFloat32:
			return decodeAll(s, 4, func(b []byte) float32 { return math.Float32frombits(le.Uint32(b)) }), nil
		case TypeUint64:
			return decodeAll(s, 8, le.Uint64), nil
		case TypeInt64:
			return decodeAll(s, 8, func(b []byte) int64 { return int64(le.Uint64(b)) }), nil
		case TypeFloat64:
			return decodeAll(s, 8, func(b []byte) float64 { return math.Float64frombits(le.Uint64(b)) }), nil
		}
	}
	if et == TypeString {
		a := make([]string, n)
		for i := range a {
			s, err := r.str(math.MaxUint64)
			if err != nil {
				return nil, fmt.Errorf("element %d: %w", i, err)
			}
			a[i] = s
		}
		return a, nil
	}
	a := make([]Value, n)
	for i := range a {
		v, err := r.value(TypeArray, depth+1)
		if err != nil {
			return nil, fmt.Errorf("element %d: %w", i, err)
		}
		a[i] = v
	}
	return a, nil
}

// decodeAll decodes the elements of s, size bytes each, one by one.
func decodeAll[T any](s []byte, size int, one func([]byte) T) []T {
	a := make([]T, len(s)/size)
	for i := range a {
		a[i] = one(s[size*i:])
	}
	return a
}

func (r *reader) tensorInfo() (TensorInfo, error) {
	var ti TensorInfo
	name, err := r.str(maxKeyLen)
	if err != nil {
		return ti, err
	}
	ti.Name = name
	nd, err := r.u32()
	if err != nil {
		return ti, err
	}
	if nd == 0 || nd > maxDims {
		return ti, fmt.Errorf("%w: tensor %q has %d dimensions (1 to %d allowed)", ErrFormat, name, nd, maxDims)
	}
	ti.Dims = make([]uint64, nd)
	n := uint64(1)
	for i := range ti.Dims {
		if ti.Dims[i], err = r.u64(); err != nil {
			return ti, err
		}
		d := ti.Dims[i]
		if d == 0 || d > math.MaxInt32*4 || n > math.MaxInt64/d {
			return ti, fmt.Errorf("%w: tensor %q has absurd dimension %d", ErrFormat, name, d)
		}
		n *= d
	}
	t, err := r.u32()
	if err != nil {
		return ti, err
	}
	ti.Type = tensor.DType(t)
	if !ti.Type.Stored() {
		return ti, fmt.Errorf("%w: tensor %q has type %d, which is not a ggml type", ErrFormat, name, t)
	}
	if ti.Dims[0]%uint64(ti.Type.BlockSize()) != 0 {
		return ti, fmt.Errorf("%w: tensor %q row of %d is not a multiple of %v's block of %d", ErrFormat, name, ti.Dims[0], ti.Type, ti.Type.BlockSize())
	}
	size := n / uint64(ti.Type.BlockSize())
	if size > math.MaxInt64/uint64(ti.Type.TypeSize()) {
		return ti, fmt.Errorf("%w: tensor %q is too large", ErrFormat, name)
	}
	ti.Size = size * uint64(ti.Type.TypeSize())
	if ti.Offset, err = r.u64(); err != nil {
		return ti, err
	}
	return ti, nil
}
