// Command toysh is toy's interactive shell: a Go REPL (yaegi) with toy's
// packages preloaded, a script runner, and a Jupyter kernel. It is
// package shell's Main (toy's CLI offers the same as `toy toysh`).
//
//	toysh                     the REPL (line editing and history on a terminal)
//	toysh FILE.go [ARGS…]     run a script; os.Args is FILE.go and ARGS
//	toysh -e 'CODE'           evaluate one cell and print its value
//	toysh kernel CONN.json    serve Jupyter (started by Jupyter, see install-kernel)
//	toysh install-kernel      register the kernel in the user's Jupyter data directory
package main

import (
	"os"

	"github.com/toyml/toy/interp/shell"
)

func main() { os.Exit(shell.Main(os.Args[1:])) }
