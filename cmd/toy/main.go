// Command toy runs, trains, serves and describes transformer language models
// in GGUF files. All of it is package toy/cli; a lab made by toy new runs the
// same CLI from its own main.go, with its architectures registered.
package main

import (
	"os"

	"github.com/toyml/toy/toy/cli"
)

func main() { os.Exit(cli.Main(os.Args[1:])) }
