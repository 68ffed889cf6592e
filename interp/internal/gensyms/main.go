// Command gensyms writes the yaegi symbol tables of package interp: toy's
// public packages, and an overlay of standard-library APIs newer than the
// Go 1.22 tables yaegi v0.16.1 ships. It also writes the doc comments that
// the REPL's :doc and the kernel's inspect show.
//
//	go run ./internal/gensyms -out .   (run by go generate in interp/)
package main

import (
	"flag"
	"log"

	"github.com/toyml/toy/interp/internal/symgen"
)

func main() {
	out := flag.String("out", ".", "directory to write the z*.go files into")
	flag.Parse()
	if err := symgen.Generate(*out); err != nil {
		log.Fatal(err)
	}
}
