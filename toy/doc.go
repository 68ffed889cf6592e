// Package toy is the one import a script or notebook needs: load a GGUF
// checkpoint, run it forward, generate from it, score text with it, apply
// LoRA adapters to it; embed and rank texts (LoadEmbedder) and classify
// images (LoadImageClassifier).
//
//	m, err := toy.Load("model.gguf")
//	if err != nil { … }
//	defer m.Close()
//	text, err := m.GenerateText("func main() {", toy.GenerateOptions{MaxTokens: 16})
//
// Load finds the architecture in the registry of package models (every
// built-in one, and any a program registers); LoadDefault loads the small
// model toy ships with. Sessions, sampling and training live below, in
// packages engine, sample and recipes; this package is what ties them to a
// file.
//
// Dimension legend (row-major, outermost first; as in package tensor):
//
//	T  tokens of an input (ids [T])   V  vocabulary size
//	D  model width (an embedding has D values, Embedder.Dim)
//	r  a LoRA adapter's rank (A [r, in], B [out, r])
//
// Forward returns logits [T, V]; LogProbs T−1 log-probabilities, one per
// token after the first; an Embedder's Encoder maps ids [T] to hidden
// states [T, D], pooled to one vector [D] per text.
//
// # Backends
//
// Ops run on the backend package tensor has active, chosen by name from
// the ones registered with tensor.RegisterBackend: "go", the pure-Go
// reference; "native" (CPU kernels) and "cuda" (an NVIDIA GPU), which
// register themselves from kernels/cpu and kernels/cuda — this package links
// them through kernels/all, as it links the architectures through
// toy/models/all, and names none. TOY_BACKEND picks one at init: go,
// native, cuda, or auto (the default: native when it loads, pure Go
// otherwise, saying so once on stderr); UseBackend switches later,
// BackendName says which runs.
//
// # Error Handling
//
// Loading returns errors wrapped with %w around the sentinels of package gguf
// (gguf.ErrTruncated, gguf.ErrFormat, …) and ErrUnknownArch; bad token ids and
// an overfull context return engine.ErrTokenRange and engine.ErrContextFull.
// A backend that was asked for and cannot run — its kernel library missing,
// or not linked — is a *NativeCallError that says what to do; Load returns
// it (BackendError) rather than run elsewhere. Text methods of a model
// without a tokenizer return ErrNoTokenizer, a bad adapter ErrAdapter, a
// draft model over another vocabulary ErrDraftVocab, and the embedding
// functions ErrNotEmbedding and ErrTooLong.
package toy
