// The Tensor type: shape, element type, and host storage.

package tensor

import (
	"fmt"
	"strings"
)

// Tensor is an n-dimensional array in row-major order. Activations are F32
// held in a float32 slice; weights of other types are held as their encoded
// bytes, which may be a view into a memory-mapped GGUF file (and are then
// read-only).
type Tensor struct {
	shape []int
	dtype DType
	f32   []float32 // F32 elements; nil for other types
	raw   []byte    // encoded elements for F16, BF16, Q8_0, I32

	// Device residency (see DeviceBackend): the allocation a device backend
	// keeps t's elements in, shared by views, and t's byte offset in it. When
	// dev is set, f32/raw are made current from it before Go code reads them.
	dev    *devState
	devOff int

	// Autograd (see Tape): whether gradients flow to this tensor, and the
	// gradient accumulated by Backward.
	requiresGrad bool
	grad         *Tensor
}

// New returns a zero-filled F32 tensor of the given shape.
func New(shape ...int) *Tensor {
	n := checkShape("New", shape)
	return &Tensor{shape: append([]int(nil), shape...), dtype: F32, f32: make([]float32, n)}
}

// FromFloat32 wraps data (not copied) as an F32 tensor; it panics when the
// length does not match the shape.
func FromFloat32(data []float32, shape ...int) *Tensor {
	n := checkShape("FromFloat32", shape)
	if n != len(data) {
		panic(fmt.Sprintf("FromFloat32: %d values for shape %v (%d elements)", len(data), shape, n))
	}
	return &Tensor{shape: append([]int(nil), shape...), dtype: F32, f32: data}
}

// FromBytes wraps encoded elements of type t (not copied). For F32 the bytes
// are decoded into a new float32 slice unless they can be viewed directly.
func FromBytes(t DType, b []byte, shape ...int) (*Tensor, error) {
	if !t.Known() {
		return nil, fmt.Errorf("tensor: unsupported element type %v", t)
	}
	n := 1
	for _, d := range shape {
		if d <= 0 {
			return nil, fmt.Errorf("tensor: bad shape %v", shape)
		}
		n *= d
	}
	if len(shape) == 0 || shape[len(shape)-1]%t.BlockSize() != 0 {
		return nil, fmt.Errorf("tensor: shape %v does not fit %v blocks of %d", shape, t, t.BlockSize())
	}
	want, _ := t.RowBytes(n)
	if len(b) != want {
		return nil, fmt.Errorf("tensor: %d bytes for %v %v, want %d", len(b), t, shape, want)
	}
	x := &Tensor{shape: append([]int(nil), shape...), dtype: t}
	if t == F32 {
		x.f32 = bytesAsFloat32(b)
	} else {
		x.raw = b
	}
	return x, nil
}

func checkShape(op string, shape []int) int {
	n := 1
	for _, d := range shape {
		if d < 0 {
			panic(fmt.Sprintf("%s: negative dimension in shape %v", op, shape))
		}
		n *= d
	}
	return n
}

// Shape returns the dimensions, outermost first. Do not modify it.
func (t *Tensor) Shape() []int { return t.shape }

// Dim returns dimension i; negative i counts from the end.
func (t *Tensor) Dim(i int) int {
	if i < 0 {
		i += len(t.shape)
	}
	return t.shape[i]
}

// DType returns the element type.
func (t *Tensor) DType() DType { return t.dtype }

// Len returns the number of elements.
func (t *Tensor) Len() int { return checkShape("Len", t.shape) }

// Cols is the length of the innermost dimension (a row).
func (t *Tensor) Cols() int { return t.shape[len(t.shape)-1] }

// Rows is the number of rows: all elements divided by Cols.
func (t *Tensor) Rows() int {
	if c := t.Cols(); c > 0 {
		return t.Len() / c
	}
	return 0
}

// Data returns the F32 elements (not a copy); it panics for other types.
// For a device-resident tensor the elements are first copied to the host,
// and the device copy counts as stale afterwards (see DeviceBackend).
func (t *Tensor) Data() []float32 {
	if t.dtype != F32 {
		panic(fmt.Sprintf("Data: tensor is %v, not F32 (use Float32s)", t.dtype))
	}
	if t.dev != nil {
		t.hostWrite()
	}
	return t.f32
}

// Bytes returns the encoded elements (not a copy): for an F32 tensor, its
// float32s' bytes; for a device-resident one, as Data does.
func (t *Tensor) Bytes() []byte {
	if t.dev != nil {
		t.hostWrite()
	}
	return t.ownBytes()
}

// Row returns row i of an F32 tensor as a slice (not a copy).
func (t *Tensor) Row(i int) []float32 {
	c := t.Cols()
	return t.Data()[i*c : (i+1)*c]
}

// Float32s returns all elements converted to float32 (a copy).
func (t *Tensor) Float32s() []float32 {
	if t.dev != nil {
		t.hostRead()
	}
	if t.dtype == F32 {
		return append([]float32(nil), t.f32...)
	}
	out := make([]float32, t.Len())
	DecodeRow(out, t.raw, t.dtype)
	return out
}

// Reshape returns a view with a new shape holding the same elements.
func (t *Tensor) Reshape(shape ...int) *Tensor {
	if checkShape("Reshape", shape) != t.Len() {
		panic(fmt.Sprintf("Reshape: %v to %v changes the element count", t.shape, shape))
	}
	v := *t // a device-resident tensor's view shares its storage (dev, devOff)
	v.shape = append([]int(nil), shape...)
	return &v
}

// Slice returns rows [from, to) of the outermost dimension as a view.
func (t *Tensor) Slice(from, to int) *Tensor {
	if from < 0 || to > t.shape[0] || from > to {
		panic(fmt.Sprintf("Slice: rows [%d, %d) of shape %v", from, to, t.shape))
	}
	per := t.Len() / max(t.shape[0], 1)
	v := &Tensor{shape: append([]int{to - from}, t.shape[1:]...), dtype: t.dtype}
	if t.dev != nil { // a view of the same device allocation; host fields come with the first read
		b, _ := t.dtype.RowBytes(per)
		v.dev, v.devOff = t.dev, t.devOff+from*b
		return v
	}
	if t.dtype == F32 {
		v.f32 = t.f32[from*per : to*per]
	} else {
		b, _ := t.dtype.RowBytes(per)
		v.raw = t.raw[from*b : to*b]
	}
	return v
}

// String shows the shape, type and the first few values.
func (t *Tensor) String() string {
	var b strings.Builder
	if t.dev != nil {
		t.hostRead()
	}
	fmt.Fprintf(&b, "Tensor%v %v", t.shape, t.dtype)
	if t.dtype == F32 || t.Len() <= 1<<20 {
		v := t.f32
		if t.dtype != F32 {
			v = t.Float32s()
		}
		b.WriteString(" [")
		for i := 0; i < len(v) && i < 6; i++ {
			if i > 0 {
				b.WriteString(" ")
			}
			fmt.Fprintf(&b, "%.4g", v[i])
		}
		if len(v) > 6 {
			b.WriteString(" …")
		}
		b.WriteString("]")
	}
	return b.String()
}
