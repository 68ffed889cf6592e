package gguf

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/toyml/toy/toy/tensor"
)

// sample builds a small file with every metadata type and three tensors.
func sample(t testing.TB) []byte {
	w := NewWriter()
	w.SetString("general.architecture", "llama")
	w.Set("u8", Value{Type: TypeUint8, V: uint8(7)})
	w.Set("i8", Value{Type: TypeInt8, V: int8(-7)})
	w.Set("u16", Value{Type: TypeUint16, V: uint16(700)})
	w.Set("i16", Value{Type: TypeInt16, V: int16(-700)})
	w.SetUint32("llama.block_count", 2)
	w.SetInt32("i32", -70000)
	w.SetFloat32("eps", 1e-5)
	w.SetBool("flag", true)
	w.SetUint64("u64", 1<<40)
	w.Set("i64", Value{Type: TypeInt64, V: int64(-1 << 40)})
	w.Set("f64", Value{Type: TypeFloat64, V: 2.5})
	w.SetStrings("tokens", []string{"a", "", "ü▁"})
	w.SetFloat32s("scores", []float32{0, -1.5})
	w.SetInt32s("types", []int32{1, 3})
	w.Set("nested", Value{Type: TypeArray, ElemType: TypeArray, V: []Value{
		{Type: TypeArray, ElemType: TypeUint8, V: []uint8{1, 2}},
	}})
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(w.AddFloat32("a", tensor.F32, []float32{1, 2, 3, 4, 5, 6}, 2, 3))
	must(w.AddFloat32("b", tensor.F16, []float32{0.5, -2}, 2))
	q := make([]float32, 64)
	for i := range q {
		q[i] = float32(i) - 32
	}
	must(w.AddFloat32("c", tensor.Q8_0, q, 2, 32))
	var buf bytes.Buffer
	if _, err := w.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestRoundTrip(t *testing.T) {
	f, err := Parse(sample(t))
	if err != nil {
		t.Fatal(err)
	}
	if f.Version != 3 || len(f.KV) != 16 || len(f.Tensors) != 3 {
		t.Fatalf("version %d, %d KVs, %d tensors", f.Version, len(f.KV), len(f.Tensors))
	}
	if s, _ := f.String("general.architecture"); s != "llama" {
		t.Errorf("architecture %q", s)
	}
	if n, _ := f.Uint32("llama.block_count"); n != 2 {
		t.Errorf("block_count %d", n)
	}
	if n, _ := f.Uint32("u8"); n != 7 {
		t.Errorf("uint8 widened to %d", n)
	}
	if e, _ := f.Float32("eps"); e != 1e-5 {
		t.Errorf("eps %v", e)
	}
	if b, _ := f.Bool("flag"); !b {
		t.Error("flag false")
	}
	if s, _ := f.Strings("tokens"); !slices.Equal(s, []string{"a", "", "ü▁"}) {
		t.Errorf("tokens %q", s)
	}
	if s, _ := f.Int32s("types"); !slices.Equal(s, []int32{1, 3}) {
		t.Errorf("types %v", s)
	}
	if v, _ := f.Value("nested"); v.V.([]Value)[0].V.([]uint8)[1] != 2 {
		t.Errorf("nested %v", v)
	}
	a, err := f.Dequantize("a")
	if err != nil || !slices.Equal(a, []float32{1, 2, 3, 4, 5, 6}) {
		t.Errorf("a = %v, %v", a, err)
	}
	ti, _ := f.Info("a")
	if !slices.Equal(ti.Dims, []uint64{3, 2}) || !slices.Equal(ti.Shape(), []int{2, 3}) {
		t.Errorf("dims %v shape %v", ti.Dims, ti.Shape())
	}
	b, _ := f.Dequantize("b")
	if !slices.Equal(b, []float32{0.5, -2}) {
		t.Errorf("b = %v", b)
	}
	c, _ := f.Tensor("c")
	if c0 := c.Float32s()[0]; c.DType() != tensor.Q8_0 || c0 > -31.9 || c0 < -32.1 {
		t.Errorf("c = %v", c)
	}
	for _, ti := range f.Tensors {
		if (f.DataStart+ti.Offset)%32 != 0 {
			t.Errorf("tensor %s at %d is not aligned", ti.Name, f.DataStart+ti.Offset)
		}
	}
}

func TestTypedGettersReportErrors(t *testing.T) {
	f, _ := Parse(sample(t))
	if _, err := f.String("missing"); !errors.Is(err, ErrMissingKey) {
		t.Errorf("missing key: %v", err)
	}
	if _, err := f.Uint32("general.architecture"); !errors.Is(err, ErrWrongType) {
		t.Errorf("string as uint32: %v", err)
	}
	if _, err := f.Uint32("i32"); !errors.Is(err, ErrWrongType) {
		t.Errorf("negative as uint32: %v", err)
	}
	if _, err := f.Tensor("nope"); !errors.Is(err, ErrNoTensor) {
		t.Errorf("missing tensor: %v", err)
	}
}

// Every prefix of a valid file that cuts into its tensor data is an error,
// never a panic. (Only the trailing alignment padding may be dropped.)
func TestEveryTruncationFails(t *testing.T) {
	b := sample(t)
	f, _ := Parse(b)
	end := f.DataStart
	for _, ti := range f.Tensors {
		end = max(end, f.DataStart+ti.Offset+ti.Size)
	}
	for n := 0; n < int(end); n++ {
		if _, err := Parse(b[:n]); err == nil {
			t.Fatalf("prefix of %d bytes (of %d) parsed without error", n, len(b))
		}
	}
}

func TestLiesAreCaught(t *testing.T) {
	good := sample(t)
	le := binary.LittleEndian
	cases := map[string]func(b []byte){
		"bad magic":         func(b []byte) { copy(b, "GGML") },
		"version 1":         func(b []byte) { le.PutUint32(b[4:], 1) },
		"version 9":         func(b []byte) { le.PutUint32(b[4:], 9) },
		"huge tensor count": func(b []byte) { le.PutUint64(b[8:], 1<<60) },
		"huge kv count":     func(b []byte) { le.PutUint64(b[16:], 1<<60) },
		"huge key length":   func(b []byte) { le.PutUint64(b[24:], 1<<62) },
	}
	for name, corrupt := range cases {
		b := slices.Clone(good)
		corrupt(b)
		if _, err := Parse(b); err == nil {
			t.Errorf("%s: parsed", name)
		} else if !errors.Is(err, ErrFormat) && !errors.Is(err, ErrTruncated) {
			t.Errorf("%s: %v does not wrap ErrFormat or ErrTruncated", name, err)
		}
	}
}

func TestTensorPastEndIsTruncated(t *testing.T) {
	b := sample(t)
	if _, err := Parse(b[:len(b)-40]); !errors.Is(err, ErrTruncated) {
		t.Fatalf("missing tensor bytes: %v", err)
	}
}

func TestOpenMapsAndWriteFileIsAtomic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "m.gguf")
	if err := os.WriteFile(path, sample(t), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if a, _ := f.Dequantize("a"); a[5] != 6 {
		t.Errorf("a[5] = %v", a[5])
	}
	f.Close()
	if _, err := Open(filepath.Join(dir, "none.gguf")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
	if _, err := Open(dir); !errors.Is(err, ErrFormat) {
		t.Errorf("directory: %v", err)
	}
	w := NewWriter()
	w.SetString("general.architecture", "x")
	if err := w.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("temporary files left behind: %v", entries)
	}
}

func TestWriterRejectsBadTensors(t *testing.T) {
	w := NewWriter()
	if err := w.AddTensor("x", tensor.F32, make([]byte, 8), 3); err == nil {
		t.Error("wrong byte count accepted")
	}
	if err := w.AddFloat32("q", tensor.Q8_0, make([]float32, 16), 16); err == nil {
		t.Error("partial Q8_0 block accepted")
	}
	w.AddFloat32("y", tensor.F32, []float32{1}, 1)
	if err := w.AddFloat32("y", tensor.F32, []float32{1}, 1); err == nil {
		t.Error("duplicate tensor accepted")
	}
}

func FuzzParse(f *testing.F) {
	f.Add(sample(f))
	f.Add([]byte("GGUF\x03\x00\x00\x00"))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		g, err := Parse(b)
		if err != nil {
			return
		}
		for _, ti := range g.Tensors {
			// Every listed tensor has its bytes; those of a type toy does not
			// compute with (Q5_K, F64, …) say so by name.
			if _, _, err := g.Data(ti.Name); err != nil {
				t.Fatalf("tensor %s listed but has no data: %v", ti.Name, err)
			}
			if _, err := g.Tensor(ti.Name); err != nil && !(errors.Is(err, ErrUnsupportedType) && !ti.Type.Known()) {
				t.Fatalf("tensor %s listed but unreadable: %v", ti.Name, err)
			}
		}
	})
}

func TestQuantize(t *testing.T) {
	f, _ := Parse(sample(t))
	w, err := Quantize(f, tensor.Q8_0)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	w.WriteTo(&buf)
	q, err := Parse(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]tensor.DType{"a": tensor.F32, "b": tensor.F32, "c": tensor.Q8_0} {
		if ti, _ := q.Info(name); ti.Type != want { // a's rows of 3 cannot hold Q8_0 blocks
			t.Errorf("%s is %v, want %v", name, ti.Type, want)
		}
	}
	if ft, _ := q.Uint32("general.file_type"); ft != 7 {
		t.Errorf("file_type %d", ft)
	}
	for dt, ft := range map[tensor.DType]uint32{tensor.Q4_0: 2, tensor.Q5_0: 8} {
		w, err := Quantize(f, dt)
		if err != nil {
			t.Fatal(err)
		}
		buf.Reset()
		w.WriteTo(&buf)
		q, err := Parse(buf.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		if ti, _ := q.Info("c"); ti.Type != dt {
			t.Errorf("%v: c is %v", dt, ti.Type)
		}
		if got, _ := q.Uint32("general.file_type"); got != ft {
			t.Errorf("%v: file_type %d, want %d", dt, got, ft)
		}
		want, _ := f.Dequantize("c") // −32 … 31: steps of 32/8 (Q4_0), 32/16 (Q5_0)
		got, _ := q.Dequantize("c")
		half := map[tensor.DType]float64{tensor.Q4_0: 2, tensor.Q5_0: 1}[dt]
		for i := range want {
			if d := math.Abs(float64(got[i] - want[i])); d > half+1e-3 {
				t.Errorf("%v: c[%d] = %v, was %v", dt, i, got[i], want[i])
				break
			}
		}
	}
	if _, err := Quantize(f, tensor.Q4_K); err == nil {
		t.Error("Quantize to Q4_K: no error (the plain Quantize takes the block types; k-quants and their mixes go through QuantizeModel)")
	}
}
