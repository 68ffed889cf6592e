// ggml's tensor types: their ids, names and block sizes.

package quant

import "fmt"

// Type is one of ggml's tensor types, by its type id (the value a GGUF
// tensor's type field holds). tensor.DType has the same values.
type Type uint32

// The types this package encodes and decodes (EncodeRow, DecodeRow): the
// plain F32, F16 and BF16, and the block types. I32 is named for
// completeness; it has no float conversion.
const (
	F32    Type = 0
	F16    Type = 1
	Q4_0   Type = 2
	Q4_1   Type = 3
	Q5_0   Type = 6
	Q5_1   Type = 7
	Q8_0   Type = 8
	Q2_K   Type = 10
	Q3_K   Type = 11
	Q4_K   Type = 12
	Q5_K   Type = 13
	Q6_K   Type = 14
	IQ4_NL Type = 20
	IQ4_XS Type = 23
	I32    Type = 26
	BF16   Type = 30
	MXFP4  Type = 39
)

// ggmlTypes are ggml's tensor types: name, elements per block, bytes per block.
var ggmlTypes = map[Type]struct {
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
func (t Type) String() string {
	if g, ok := ggmlTypes[t]; ok {
		return g.name
	}
	return fmt.Sprintf("type(%d)", uint32(t))
}

// Stored reports whether the type is one of ggml's, whose storage size is
// known.
func (t Type) Stored() bool {
	_, ok := ggmlTypes[t]
	return ok
}

// BlockSize is the number of elements in one storage block (1 for plain
// types, 0 for unknown ones).
func (t Type) BlockSize() int { return ggmlTypes[t].block }

// TypeSize is the number of bytes one block occupies (0 for unknown types).
func (t Type) TypeSize() int { return ggmlTypes[t].bytes }

// RowBytes returns the bytes needed for n elements of type t, and false when n
// is not a whole number of blocks or the type is unknown.
func (t Type) RowBytes(n int) (int, bool) {
	bs := t.BlockSize()
	if bs == 0 || n < 0 || n%bs != 0 {
		return 0, false
	}
	return n / bs * t.TypeSize(), true
}
