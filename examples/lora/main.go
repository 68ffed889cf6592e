// Command lora shows LoRA fine-tuning of the default model: train low-rank
// adapters (W + (α/r)·B·A, the base weights frozen) to make the model write
// one new line, save the adapter (llama.cpp's format), merge it into a new
// GGUF file (recipes.MergeAdapter), load that file and generate.
//
//	go run ./examples/lora -steps 40
package main

import (
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/toyml/toy/toy"
	"github.com/toyml/toy/toy/defaultmodel"
	"github.com/toyml/toy/toy/engine"
	"github.com/toyml/toy/toy/recipes"
	"github.com/toyml/toy/toy/tokenizer"
)

func main() {
	steps := flag.Int("steps", 40, "training steps")
	flag.Parse()

	// Recipes train from a file: write the default model's bytes to one.
	dir, err := os.MkdirTemp("", "toy-lora-")
	check(err)
	defer os.RemoveAll(dir)
	basePath := filepath.Join(dir, "toy-go.gguf")
	check(os.WriteFile(basePath, defaultmodel.Bytes(), 0o644))

	base, err := toy.Load(basePath)
	check(err)
	defer base.Close()
	prompt := "// Gopher says"
	before, err := base.GenerateText(prompt, toy.GenerateOptions{MaxTokens: 12})
	check(err)
	fmt.Printf("before: %q\n", prompt+before)

	// One training sequence, the same every step: rank 8 adapters on the
	// attention's q and v and the MLP's up and down projections.
	text := prompt + " hello from a LoRA adapter.\n"
	ids := base.Tokenizer.Encode(text, tokenizer.EncodeOptions{})
	opts := recipes.NewOptions(len(ids)-1).WithBatch(1).WithSteps(*steps).WithLR(2e-2).WithWarmup(2).
		WithRank(8).WithTargets("q", "v", "up", "down")
	r, err := recipes.NewLoRA(basePath, opts)
	check(err)
	b, err := engine.NewBatch([][]int32{ids}, base.VocabSize(), -1)
	check(err)
	for r.Steps < opts.Steps {
		loss, err := r.Step(b)
		check(err)
		if r.Steps == 1 || r.Steps%10 == 0 {
			fmt.Printf("step %3d  loss %.3f\n", r.Steps, loss)
		}
	}

	// Save the adapter alone (a small file), then fold it into a copy of
	// the base model: W ← W + (α/r)·B·A.
	adapter := filepath.Join(dir, "adapter.gguf")
	check(r.SaveAdapter(adapter))
	merged := filepath.Join(dir, "merged.gguf")
	check(recipes.MergeAdapter(basePath, adapter, merged))
	for _, p := range []string{adapter, merged} {
		st, err := os.Stat(p)
		check(err)
		fmt.Printf("%s: %d bytes\n", filepath.Base(p), st.Size())
	}

	// The merged file is an ordinary model: no adapter needed to load it.
	m, err := toy.Load(merged)
	check(err)
	defer m.Close()
	after, err := m.GenerateText(prompt, toy.GenerateOptions{MaxTokens: 12})
	check(err)
	fmt.Printf("after: %q\n", prompt+after)
}

func check(err error) {
	if err != nil {
		log.Fatal(err)
	}
}
