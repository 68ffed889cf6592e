// Package defaultmodel embeds the small model toy ships with: "toy-go", a
// Llama-architecture model (4 layers, width 128, 1.4M parameters, Q8_0)
// trained from scratch by `toy train` on the Go standard library's own
// source, with a 2048-token byte-level BPE tokenizer toy learned from the same
// text. It writes Go-looking code. See README.md beside this file for the
// commands that reproduce it and the corpus licence.
package defaultmodel

import _ "embed"

// Name is the model's display name.
const Name = "toy-go"

//go:embed toy-go.gguf
var data []byte

// Bytes returns the model's GGUF file (read-only).
func Bytes() []byte { return data }
