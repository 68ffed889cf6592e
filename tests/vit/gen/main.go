// Command gen writes the ViT gate's model for torch_ref.py, and (with
// -images) the gate's PNGs into testdata:
//
//	go run ./tests/vit/gen -out /tmp/toy-vit [-images tests/vit/testdata]
package main

import (
	"flag"
	"fmt"
	"image/png"
	"os"
	"path/filepath"

	vitgate "github.com/toyml/toy/tests/vit"
	"github.com/toyml/toy/toy/tensor"
)

func main() {
	out := flag.String("out", "/tmp/toy-vit", "output directory for gate.gguf")
	images := flag.String("images", "", "also write the gate's PNGs into this directory")
	flag.Parse()
	if err := run(*out, *images); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run(out, images string) error {
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	p := filepath.Join(out, "gate.gguf")
	if err := vitgate.Model().WriteGGUF(p, tensor.F32); err != nil {
		return err
	}
	fmt.Println(p)
	if images == "" {
		return nil
	}
	for i, im := range vitgate.Images {
		p := filepath.Join(images, im.Name+".png")
		f, err := os.Create(p)
		if err != nil {
			return err
		}
		if err := png.Encode(f, vitgate.Picture(im.W, im.H, uint64(i+1))); err != nil {
			f.Close()
			return err
		}
		if err := f.Close(); err != nil {
			return err
		}
		fmt.Println(p)
	}
	return nil
}
