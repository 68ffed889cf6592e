// Element types a tensor can hold, and their storage sizes.

package tensor

import "github.com/toyml/toy/toy/tensor/quant"

// DType is the element type of a tensor. The numeric values are ggml's type ids,
// so a GGUF tensor's type field converts directly; package quant holds their
// names, block sizes and formats (quant.Type has the same values).
type DType uint32

// The element types toy computes with. Quantized types store elements in
// blocks (BlockSize elements in TypeSize bytes): Q8_0, Q4_0 and Q5_0, Q4_1
// and Q5_1, the k-quants Q4_K and Q6_K — what Q4_K_M files hold — and Q5_K,
// Q3_K and Q2_K of Q5_K_M, Q3_K_M and Q2_K files, the non-linear IQ4_NL and
// IQ4_XS, and MXFP4, gpt-oss's experts; their layouts, quantizers and dot
// products are package quant's (its doc has the table of files). Every
// other ggml type (IQ2_XS, …) can still be named, sized and stored (see
// Stored), so files holding them can be read and described, but not
// computed with.
const (
	F32  = DType(quant.F32)
	F16  = DType(quant.F16)
	Q4_0 = DType(quant.Q4_0)
	Q4_1 = DType(quant.Q4_1)
	Q5_0 = DType(quant.Q5_0)
	Q5_1 = DType(quant.Q5_1)
	Q8_0 = DType(quant.Q8_0)
	Q2_K = DType(quant.Q2_K)
	Q3_K = DType(quant.Q3_K)
	Q4_K = DType(quant.Q4_K)
	Q5_K = DType(quant.Q5_K)
	Q6_K = DType(quant.Q6_K)
	// IQ4_NL and IQ4_XS: 4-bit indices into a non-linear table of levels.
	IQ4_NL = DType(quant.IQ4_NL)
	IQ4_XS = DType(quant.IQ4_XS)
	I32    = DType(quant.I32)
	BF16   = DType(quant.BF16)
	// MXFP4: 4-bit floats (E2M1) under a power-of-two scale per 32.
	MXFP4 = DType(quant.MXFP4)
)

// String returns ggml's name of the type ("F32", "Q8_0", "Q4_K", …).
func (t DType) String() string { return quant.Type(t).String() }

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
func (t DType) Stored() bool { return quant.Type(t).Stored() }

// BlockSize is the number of elements in one storage block (1 for plain
// types, 0 for unknown ones).
func (t DType) BlockSize() int { return quant.Type(t).BlockSize() }

// TypeSize is the number of bytes one block occupies (0 for unknown types).
func (t DType) TypeSize() int { return quant.Type(t).TypeSize() }

// RowBytes returns the bytes needed for n elements of type t, and false when n
// is not a whole number of blocks or the type is unknown.
func (t DType) RowBytes(n int) (int, bool) { return quant.Type(t).RowBytes(n) }
