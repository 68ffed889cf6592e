// Command gen writes the training gate's initial models for torch_ref.py.
//
//	go run ./tests/training/gen -out /tmp/toy-training
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/toyml/toy/tests/training"
)

func main() {
	out := flag.String("out", "/tmp/toy-training", "output directory")
	flag.Parse()
	os.MkdirAll(*out, 0o755)
	for _, c := range training.Cases() {
		p := filepath.Join(*out, c.Name+".gguf")
		if err := training.WriteGGUF(c, p); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Println(p)
	}
}
