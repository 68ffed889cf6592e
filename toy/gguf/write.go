// Writing GGUF files that llama.cpp loads.

package gguf

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/toyml/toy/toy/tensor"
)

// Writer collects metadata and tensors and writes them as one GGUF v3 file.
// Metadata keeps the order it was set in; setting a key twice replaces it.
//
//	w := gguf.NewWriter()
//	w.SetString("general.architecture", "llama")
//	w.SetUint32("llama.block_count", 2)
//	w.AddTensor("token_embd.weight", tensor.F32, data, 32000, 64)
//	err := w.WriteFile("model.gguf")
type Writer struct {
	kv      []KV
	index   map[string]int
	tensors []writerTensor
	names   map[string]bool
}

type writerTensor struct {
	info TensorInfo
	data []byte
}

// NewWriter returns an empty writer.
func NewWriter() *Writer {
	return &Writer{index: map[string]int{}, names: map[string]bool{}}
}

// Set stores a metadata value. The typed setters below are the usual way in.
func (w *Writer) Set(key string, v Value) {
	if i, ok := w.index[key]; ok {
		w.kv[i].Value = v
		return
	}
	w.index[key] = len(w.kv)
	w.kv = append(w.kv, KV{key, v})
}

// Metadata returns the metadata set so far, in order.
func (w *Writer) Metadata() []KV { return w.kv }

// SetString stores a string.
func (w *Writer) SetString(key, v string) { w.Set(key, Value{Type: TypeString, V: v}) }

// SetUint32 stores a uint32 (llama.cpp's type for counts and lengths).
func (w *Writer) SetUint32(key string, v uint32) { w.Set(key, Value{Type: TypeUint32, V: v}) }

// SetInt32 stores an int32.
func (w *Writer) SetInt32(key string, v int32) { w.Set(key, Value{Type: TypeInt32, V: v}) }

// SetUint64 stores a uint64.
func (w *Writer) SetUint64(key string, v uint64) { w.Set(key, Value{Type: TypeUint64, V: v}) }

// SetFloat32 stores a float32 (llama.cpp's type for epsilons and RoPE bases).
func (w *Writer) SetFloat32(key string, v float32) { w.Set(key, Value{Type: TypeFloat32, V: v}) }

// SetBool stores a bool.
func (w *Writer) SetBool(key string, v bool) { w.Set(key, Value{Type: TypeBool, V: v}) }

// SetStrings stores an array of strings.
func (w *Writer) SetStrings(key string, v []string) {
	w.Set(key, Value{Type: TypeArray, ElemType: TypeString, V: v})
}

// SetFloat32s stores an array of float32.
func (w *Writer) SetFloat32s(key string, v []float32) {
	w.Set(key, Value{Type: TypeArray, ElemType: TypeFloat32, V: v})
}

// SetInt32s stores an array of int32.
func (w *Writer) SetInt32s(key string, v []int32) {
	w.Set(key, Value{Type: TypeArray, ElemType: TypeInt32, V: v})
}

// AddTensor adds a tensor with the given element type and row-major shape
// (outermost first); data must hold exactly its encoded bytes.
func (w *Writer) AddTensor(name string, t tensor.DType, data []byte, shape ...int) error {
	if w.names[name] {
		return fmt.Errorf("gguf: tensor %q added twice", name)
	}
	if len(shape) == 0 || len(shape) > maxDims {
		return fmt.Errorf("gguf: tensor %q: %d dimensions (1 to %d allowed)", name, len(shape), maxDims)
	}
	n := 1
	dims := make([]uint64, len(shape))
	for i, d := range shape {
		if d <= 0 {
			return fmt.Errorf("gguf: tensor %q: dimension %d in shape %v", name, d, shape)
		}
		n *= d
		dims[len(shape)-1-i] = uint64(d)
	}
	if !t.Known() {
		return fmt.Errorf("gguf: tensor %q: unknown type %v", name, t)
	}
	if int(dims[0])%t.BlockSize() != 0 {
		return fmt.Errorf("gguf: tensor %q: row of %d is not a multiple of %v's block of %d", name, dims[0], t, t.BlockSize())
	}
	want, _ := t.RowBytes(n)
	if len(data) != want {
		return fmt.Errorf("gguf: tensor %q %v %v: %d bytes of data, want %d", name, t, shape, len(data), want)
	}
	w.names[name] = true
	w.tensors = append(w.tensors, writerTensor{TensorInfo{Name: name, Dims: dims, Type: t, Size: uint64(want)}, data})
	return nil
}

// AddFloat32 adds a tensor given as float32 values, encoded to type t
// (any type toy computes with: F32, F16, BF16, Q8_0, Q4_K, …; see
// tensor.EncodeRow).
func (w *Writer) AddFloat32(name string, t tensor.DType, values []float32, shape ...int) error {
	if bs := t.BlockSize(); bs > 1 && len(values)%bs != 0 {
		return fmt.Errorf("gguf: tensor %q: %d values do not fill %v blocks of %d", name, len(values), t, bs)
	}
	return w.AddTensor(name, t, tensor.EncodeRow(nil, values, t), shape...)
}

// WriteTo writes the file to out.
func (w *Writer) WriteTo(out io.Writer) (int64, error) {
	cw := &countWriter{w: bufio.NewWriterSize(out, 1<<20)}
	le := binary.LittleEndian
	put := func(v any) { binary.Write(cw, le, v) }
	putStr := func(s string) { put(uint64(len(s))); io.WriteString(cw, s) }

	align := uint64(defaultAlignment)
	if i, ok := w.index["general.alignment"]; ok {
		if a, ok := w.kv[i].Value.asInt64(); ok && a > 0 {
			align = uint64(a)
		}
	}

	cw.Write([]byte(magic))
	put(uint32(3))
	put(uint64(len(w.tensors)))
	put(uint64(len(w.kv)))
	for _, kv := range w.kv {
		putStr(kv.Key)
		put(uint32(kv.Value.Type))
		if err := writeValue(cw, kv.Value); err != nil {
			return cw.n, fmt.Errorf("gguf: metadata %q: %w", kv.Key, err)
		}
	}
	var off uint64
	for i := range w.tensors {
		t := &w.tensors[i].info
		t.Offset = off
		putStr(t.Name)
		put(uint32(len(t.Dims)))
		for _, d := range t.Dims {
			put(d)
		}
		put(uint32(t.Type))
		put(t.Offset)
		off = alignUp(off+t.Size, align)
	}
	pad := func() { cw.Write(make([]byte, alignUp(uint64(cw.n), align)-uint64(cw.n))) }
	pad()
	for _, t := range w.tensors {
		cw.Write(t.data)
		pad()
	}
	if cw.err != nil {
		return cw.n, cw.err
	}
	return cw.n, cw.w.(*bufio.Writer).Flush()
}

func writeValue(w io.Writer, v Value) error {
	le := binary.LittleEndian
	if v.Type == TypeArray {
		binary.Write(w, le, uint32(v.ElemType))
		binary.Write(w, le, uint64(arrayLen(v.V)))
		switch a := v.V.(type) {
		case []string:
			for _, s := range a {
				binary.Write(w, le, uint64(len(s)))
				io.WriteString(w, s)
			}
		case []Value:
			for _, e := range a {
				if err := writeValue(w, e); err != nil {
					return err
				}
			}
		case []bool:
			for _, b := range a {
				binary.Write(w, le, b)
			}
		default:
			if err := checkType(v.ElemType, a); err != nil {
				return err
			}
			return binary.Write(w, le, a)
		}
		return nil
	}
	if s, ok := v.V.(string); ok && v.Type == TypeString {
		binary.Write(w, le, uint64(len(s)))
		_, err := io.WriteString(w, s)
		return err
	}
	if err := checkType(v.Type, v.V); err != nil {
		return err
	}
	return binary.Write(w, le, v.V)
}

// checkType verifies that a Go value matches its declared GGUF type.
func checkType(t ValueType, v any) error {
	ok := false
	switch v.(type) {
	case uint8, []uint8:
		ok = t == TypeUint8
	case int8, []int8:
		ok = t == TypeInt8
	case uint16, []uint16:
		ok = t == TypeUint16
	case int16, []int16:
		ok = t == TypeInt16
	case uint32, []uint32:
		ok = t == TypeUint32
	case int32, []int32:
		ok = t == TypeInt32
	case float32, []float32:
		ok = t == TypeFloat32
	case bool:
		ok = t == TypeBool
	case uint64, []uint64:
		ok = t == TypeUint64
	case int64, []int64:
		ok = t == TypeInt64
	case float64, []float64:
		ok = t == TypeFloat64
	}
	if !ok {
		return fmt.Errorf("Go value %T does not match type %v", v, t)
	}
	return nil
}

// WriteFile writes the file to path atomically: to a temporary file in the
// same directory, synced, then renamed over path.
func (w *Writer) WriteFile(path string) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // no-op after the rename
	if _, err := w.WriteTo(tmp); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// RemoveTemps removes the temporary files WriteFile(path) leaves behind when
// its process dies mid-write (kill -9, power loss) and returns how many it
// removed. Call it only while no other process writes path: a training run
// does once it holds its run directory's lock.
func RemoveTemps(path string) (int, error) {
	stale, err := filepath.Glob(filepath.Join(filepath.Dir(path), "."+globEscape(filepath.Base(path))+".tmp*"))
	if err != nil {
		return 0, err
	}
	n := 0
	for _, f := range stale {
		if err := os.Remove(f); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

// globEscape quotes the pattern characters of a file name.
func globEscape(name string) string {
	return strings.NewReplacer(`\`, `\\`, "*", `\*`, "?", `\?`, "[", `\[`).Replace(name)
}

type countWriter struct {
	w   io.Writer
	n   int64
	err error
}

func (c *countWriter) Write(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	n, err := c.w.Write(p)
	c.n += int64(n)
	c.err = err
	return n, err
}

// NewWriterFrom returns a writer holding f's metadata and tensors (the data
// still views f, which must stay open until the writer has written), ready
// to be edited and written out again.
func NewWriterFrom(f *File) (*Writer, error) {
	w := NewWriter()
	for _, kv := range f.KV {
		w.Set(kv.Key, kv.Value)
	}
	for _, ti := range f.Tensors {
		b, _, err := f.Data(ti.Name)
		if err != nil {
			return nil, err
		}
		if err := w.AddTensor(ti.Name, ti.Type, b, ti.Shape()...); err != nil {
			return nil, err
		}
	}
	return w, nil
}

// Quantize returns a writer holding f converted to type t (Q8_0, Q5_1, Q5_0,
// Q4_1, Q4_0, F16, BF16 or F32), the plain way: every matrix whose rows fit
// t's blocks is converted, whatever its name; vectors (norms, biases) and
// the rest stay F32. Values round as llama.cpp's reference quantizers do
// (tensor.QuantizeRows). general.file_type is set to match (7 for Q8_0, 9
// for Q5_1, 8 for Q5_0, 3 for Q4_1, 2 for Q4_0, 1 for F16, 32 for BF16, 0
// for F32). For llama.cpp's file types and mixes (Q4_K_M, IQ4_XS, …),
// written byte for byte as llama-quantize writes them, see QuantizeModel.
func Quantize(f *File, t tensor.DType) (*Writer, error) {
	fileType := map[tensor.DType]uint32{tensor.F32: 0, tensor.F16: 1, tensor.Q8_0: 7, tensor.Q5_1: 9, tensor.Q5_0: 8,
		tensor.Q4_1: 3, tensor.Q4_0: 2, tensor.BF16: 32}
	ft, ok := fileType[t]
	if !ok {
		return nil, fmt.Errorf("gguf: cannot quantize to %v (Q8_0, Q5_1, Q5_0, Q4_1, Q4_0, F16, BF16, F32)", t)
	}
	w := NewWriter()
	for _, kv := range f.KV {
		w.Set(kv.Key, kv.Value)
	}
	w.SetUint32("general.file_type", ft)
	for _, ti := range f.Tensors {
		dst := t
		if len(ti.Dims) < 2 || ti.Dims[0]%uint64(t.BlockSize()) != 0 || ti.Type == tensor.I32 {
			dst = ti.Type
			if dst != tensor.I32 {
				dst = tensor.F32
			}
		}
		if dst == ti.Type {
			b, _, _ := f.Data(ti.Name)
			if err := w.AddTensor(ti.Name, ti.Type, b, ti.Shape()...); err != nil {
				return nil, err
			}
			continue
		}
		v, err := f.Dequantize(ti.Name)
		if err != nil {
			return nil, err
		}
		b, err := tensor.QuantizeRows(dst, v, int(ti.Dims[0]))
		if err != nil {
			return nil, fmt.Errorf("gguf: quantize %s: %w", ti.Name, err)
		}
		if err := w.AddTensor(ti.Name, dst, b, ti.Shape()...); err != nil {
			return nil, err
		}
	}
	return w, nil
}
