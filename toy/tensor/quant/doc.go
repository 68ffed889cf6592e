// Package quant is how a row of numbers is stored in blocks: the formats of
// ggml's tensor types that toy computes with — their byte layouts,
// quantizers (the simple ones, and llama.cpp's scale searches with and
// without an importance matrix), dequantizers, and the dot products of
// weight rows with quantized activations that the pure-Go MatMul runs. It
// imports nothing of toy's; package tensor builds on it: tensor.DType has
// Type's values, and tensor's EncodeRow, DecodeRow, QuantizeRows and
// MatMul dispatch here.
//
// A type is named by its ggml type id (Type). A row of n elements of a
// block type is n/BlockSize blocks of TypeSize bytes each:
//
//	type    block  bytes  files
//	F32         1      4  quant.go (EncodeRow, DecodeRow)
//	F16         1      2  half.go, quant.go
//	BF16        1      2  half.go, quant.go
//	Q8_0       32     34  quant.go
//	Q4_0       32     18  quant4.go
//	Q5_0       32     22  quant4.go
//	Q4_1       32     20  quant41.go
//	Q5_1       32     24  quant41.go
//	Q2_K      256     84  kquant2.go
//	Q3_K      256    110  kquant2.go
//	Q4_K      256    144  kquant.go
//	Q5_K      256    176  kquant2.go
//	Q6_K      256    210  kquant.go
//	IQ4_NL     32     18  iquant.go
//	IQ4_XS    256    136  iquant.go
//	MXFP4      32     17  mxfp4.go
//
// The activation types of the dot products are Q8_0 (quant.go: for Q8_0,
// Q4_0, Q5_0, IQ4_NL and MXFP4 weights), Q8_1 (36 bytes per 32, quant41.go:
// for Q4_1 and Q5_1) and Q8_K (256 int8 under a float32 scale, kquant.go:
// for the k-quants and IQ4_XS), as llama.cpp's CPU backend uses them
// (RowDot). Every quantizer's bytes are those of llama.cpp's
// ggml_quantize_chunk (RowQuantizer: kquantize.go, and wquantize.go with an
// importance matrix), gated against llama.cpp itself by tests/quantize; the
// simple per-format quantizers (QuantizeQ4K, …) are the ones the gate
// models of tests/reference were written with.
//
// # Error Handling
//
// Rows that are not whole blocks, and types a function cannot handle, are
// programming errors: the quantizers panic with the length, EncodeRow and
// DecodeRow with the type. (tensor.QuantizeRows checks its input and
// returns errors instead.)
package quant
