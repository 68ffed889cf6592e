// Package interp is toy's Go interpreter: yaegi (github.com/traefik/yaegi)
// with toy's public packages preloaded, so that a REPL line, a notebook
// cell or a script (toysh FILE.go) runs the same Go a compiled program does,
// with toy's packages themselves compiled. Package shell (toysh) and package
// kernel (the Jupyter kernel) are built on it.
//
//	in, err := interp.New(interp.Options{})
//	res, err := in.Eval(ctx, `m := toy.MustLoad("model.gguf")`)
//	res, err = in.Eval(ctx, `m.Forward([]int32{1, 2, 3})`) // res.Values: the logits [3, V], a nil error
//
// An Interp evaluates cells — any mix of imports, declarations and
// statements — keeping their state, and returns the value of a final
// expression for display (Format: text for the REPL, a MIME bundle for
// Jupyter). Symbols holds the symbol tables `go generate` writes from the
// tree (zsym_*.go, zdocs.go; internal/symgen); the rest of the package
// rewrites the Go that yaegi v0.16.1 mishandles before it reaches it
// (chunk.go, cross.go, define.go, generic.go) and places errors in the
// user's own lines (place.go).
//
// The package links toy's native backends (kernels/all), so
// toy.UseBackend("native") and TOY_BACKEND work in every front end.
//
// # Error Handling
//
// Eval returns the cell's failures as errors, never crashing the process: a
// *SyntaxError, a *PanicError for a panic in the cell, ErrInterrupted when
// its context is canceled, and the cell's own errors. Describe names them
// for display, with "NativeCallError" for a native backend whose kernel
// library is missing (toy.NativeCallError), its message saying what to do.
package interp
