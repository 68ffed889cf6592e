// Package gguf reads and writes GGUF files, the checkpoint format of llama.cpp,
// Ollama and toy.
//
// A GGUF file is a header (magic "GGUF", version, counts), a list of typed
// metadata key/value pairs, a list of tensor descriptors (name, dimensions,
// element type, offset), and then the tensor data, each tensor aligned to
// general.alignment bytes (32 by default). Versions 2 and 3 are supported; they
// differ from version 1 in using 64-bit counts and lengths.
//
// Open maps the file into memory; tensor data is returned as views into that
// mapping, so loading a model copies nothing. Parse does the same on a byte
// slice.
//
// # Dimensions
//
// GGUF (like ggml) lists dimensions innermost first: a weight matrix with n rows
// of k elements has Dims [k, n]. TensorInfo.Shape returns the row-major order
// toy uses everywhere else ([n, k]); the Writer takes row-major shapes too.
//
// # Error Handling
//
// Every problem with a file is an error, never a panic: a truncated file wraps
// ErrTruncated, a malformed one (bad magic, unsupported version, absurd counts,
// tensors past the end, unknown types) wraps ErrFormat, and metadata lookups
// wrap ErrMissingKey or ErrWrongType. Counts and lengths are checked against the
// bytes that remain before anything is allocated, so a hostile header cannot
// cause a large allocation.
//
// Metadata types follow llama.cpp: counts are uint32, epsilons and the RoPE
// base float32; the typed getters convert between integer widths when the
// value fits, as llama.cpp's loader does.
package gguf
