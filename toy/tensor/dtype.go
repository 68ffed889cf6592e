// Element types a tensor can hold, and their storage sizes.

package tensor

import "fmt"

// DType is the element type of a tensor. The numeric values are ggml's type ids,
// so a GGUF tensor's type field converts directly.
type DType uint32

// The element types toy knows. Quantized types store elements in blocks
// (BlockSize elements in TypeSize bytes).
const (
	F32  DType = 0
	F16  DType = 1
	Q8_0 DType = 8
	I32  DType = 26
	BF16 DType = 30
)

// Q8_0 layout: blocks of 32 elements, each an fp16 scale d followed by 32 int8
// quants; element i of a block is d * q[i].
const (
	Q8BlockSize = 32
	Q8BlockLen  = 2 + Q8BlockSize // bytes per block
)

// String returns the GGUF spelling of the type ("F32", "Q8_0", ...).
func (t DType) String() string {
	switch t {
	case F32:
		return "F32"
	case F16:
		return "F16"
	case BF16:
		return "BF16"
	case Q8_0:
		return "Q8_0"
	case I32:
		return "I32"
	}
	return fmt.Sprintf("DType(%d)", uint32(t))
}

// Known reports whether toy can store and compute with elements of this type.
func (t DType) Known() bool {
	switch t {
	case F32, F16, BF16, Q8_0, I32:
		return true
	}
	return false
}

// BlockSize is the number of elements in one storage block (1 for plain types).
func (t DType) BlockSize() int {
	if t == Q8_0 {
		return Q8BlockSize
	}
	return 1
}

// TypeSize is the number of bytes one block occupies.
func (t DType) TypeSize() int {
	switch t {
	case F32, I32:
		return 4
	case F16, BF16:
		return 2
	case Q8_0:
		return Q8BlockLen
	}
	return 0
}

// RowBytes returns the bytes needed for n elements of type t, and false when n
// is not a whole number of blocks or the type is unknown.
func (t DType) RowBytes(n int) (int, bool) {
	bs := t.BlockSize()
	if t.TypeSize() == 0 || n < 0 || n%bs != 0 {
		return 0, false
	}
	return n / bs * t.TypeSize(), true
}
