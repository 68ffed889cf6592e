// Package card describes a transformer as an algorithm card: the formal
// pseudocode of Phuong and Hutter, "Formal Algorithms for Transformers"
// (arXiv:2207.09238), filled in with one model's numbers.
//
// A Card is an intermediate representation — inputs, outputs,
// hyperparameters, parameters with their shapes, and numbered steps with shape
// annotations — that Render prints as text and ParseCard reads back. A card is
// made from GGUF metadata alone (FromHeader, on a gguf.File: no weights are
// read, and files of every ggml quantization are accepted), or from a
// model value (the Card method of each model package's Model and Config).
//
// Round trip: for every architecture, Parse(Render(FromHeader(h))) returns
// the same Config as the model package reads from the file, a model built
// from it has the same card, and Code prints the Go that constructs it.
//
// # Families
//
// This package does not import the model packages (they import it, to offer
// Card methods). Each model package registers its Family in an init function,
// so the architectures a program can describe are those whose package it
// links; importing package toy links them all.
//
// # Error Handling
//
// Reading a header returns errors wrapping gguf.ErrTruncated or gguf.ErrFormat;
// an architecture with no registered family wraps ErrUnknownArch; a card text
// that cannot be read back wraps ErrSyntax.
package card
