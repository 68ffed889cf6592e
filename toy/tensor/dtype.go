// Element types a tensor can hold, and their storage sizes.

package tensor

import "fmt"

// DType is the element type of a tensor. The numeric values are ggml's type ids,
// so a GGUF tensor's type field converts directly.
type DType uint32

// The element types toy computes with. Quantized types store elements in
// blocks (BlockSize elements in TypeSize bytes): Q8_0, Q4_0 and Q5_0 (see
// quant4.go), Q4_1 and Q5_1 (quant41.go), and the k-quants Q4_K and Q6_K
// (kquant.go) — what Q4_K_M files hold — and Q5_K, Q3_K and Q2_K
// (kquant2.go) of Q5_K_M, Q3_K_M and Q2_K files, and the non-linear IQ4_NL
// and IQ4_XS (iquant.go), and MXFP4 (mxfp4.go), gpt-oss's experts. Every other ggml type (IQ2_XS, …) can still be named, sized and stored (see Stored), so files
// holding them can be read and described, but not computed with.
const (
	F32  DType = 0
	F16  DType = 1
	Q4_0 DType = 2
	Q4_1 DType = 3
	Q5_0 DType = 6
	Q5_1 DType = 7
	Q8_0 DType = 8
	Q2_K DType = 10
	Q3_K DType = 11
	Q4_K DType = 12
	Q5_K DType = 13
	Q6_K DType = 14
	// IQ4_NL and IQ4_XS: 4-bit indices into a non-linear table of levels.
	IQ4_NL DType = 20
	IQ4_XS DType = 23
	I32    DType = 26
	BF16   DType = 30
	// MXFP4: 4-bit floats (E2M1) under a power-of-two scale per 32.
	MXFP4 DType = 39
)

// Q8_0 layout: blocks of 32 elements, each an fp16 scale d followed by 32 int8
// quants; element i of a block is d * q[i].
const (
	Q8BlockSize = 32
	Q8BlockLen  = 2 + Q8BlockSize // bytes per block
)

// ggmlTypes are ggml's tensor types: name, elements per block, bytes per block.
var ggmlTypes = map[DType]struct {
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

// String returns ggml's name of the type ("F32", "Q8_0", "Q4_K", …).
func (t DType) String() string {
	if g, ok := ggmlTypes[t]; ok {
		return g.name
	}
	return fmt.Sprintf("type(%d)", uint32(t))
}

// Known reports whether toy can compute with elements of this type.
func (t DType) Known() bool {
	switch t {
	case F32, F16, BF16, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, IQ4_NL, IQ4_XS, MXFP4, I32:
		return true
	}
	return false
}

// Stored reports whether the type is one of ggml's, whose storage size is
// known (a file holding it can be read, if not computed with).
func (t DType) Stored() bool {
	_, ok := ggmlTypes[t]
	return ok
}

// BlockSize is the number of elements in one storage block (1 for plain
// types, 0 for unknown ones).
func (t DType) BlockSize() int { return ggmlTypes[t].block }

// TypeSize is the number of bytes one block occupies (0 for unknown types).
func (t DType) TypeSize() int { return ggmlTypes[t].bytes }

// RowBytes returns the bytes needed for n elements of type t, and false when n
// is not a whole number of blocks or the type is unknown.
func (t DType) RowBytes(n int) (int, bool) {
	bs := t.BlockSize()
	if bs == 0 || n < 0 || n%bs != 0 {
		return 0, false
	}
	return n / bs * t.TypeSize(), true
}
