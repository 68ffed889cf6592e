package defaultmodel_test

import (
	"fmt"

	"github.com/toyml/toy/toy/defaultmodel"
	"github.com/toyml/toy/toy/gguf"
	"github.com/toyml/toy/toy/models/llama"
)

// The embedded model is an ordinary GGUF file.
func ExampleBytes() {
	f, err := gguf.Parse(defaultmodel.Bytes())
	if err != nil {
		panic(err)
	}
	cfg, err := llama.ConfigFromGGUF(f)
	if err != nil {
		panic(err)
	}
	tokens, _ := f.Strings("tokenizer.ggml.tokens")
	fmt.Println(defaultmodel.Name, cfg.Arch, f.Quant())
	fmt.Printf("%d layers, width %d, %d tokens, %.1fM parameters\n",
		cfg.Layers, cfg.Embed, len(tokens), float64(f.ParamCount())/1e6)
	// Output:
	// toy-go llama Q8_0
	// 4 layers, width 128, 2048 tokens, 1.4M parameters
}
