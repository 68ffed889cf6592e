// Command train shows training a small Llama from scratch
// (recipes.NewFromScratch) on some of toy's own Go source, then plots the
// loss curve to a PNG file.
//
//	go run ./examples/train -steps 40 -out loss.png   # from the repository root
//
// The text is tokenized with the default model's tokenizer (2,048 tokens), so
// the first loss is about ln 2048 ≈ 7.6: the fresh model guesses uniformly.
package main

import (
	"flag"
	"fmt"
	"log"
	"math/rand/v2"
	"os"

	"github.com/toyml/toy/toy"
	"github.com/toyml/toy/toy/display"
	"github.com/toyml/toy/toy/engine"
	"github.com/toyml/toy/toy/models/llama"
	"github.com/toyml/toy/toy/recipes"
	"github.com/toyml/toy/toy/tokenizer"
)

func main() {
	steps := flag.Int("steps", 40, "training steps")
	data := flag.String("data", "toy/engine/engine.go", "text to train on")
	out := flag.String("out", "loss.png", "where to write the loss plot")
	flag.Parse()

	// The data: a Go file as token ids.
	base, err := toy.LoadDefault()
	check(err)
	src, err := os.ReadFile(*data)
	check(err) // run from the repository root, or pass -data
	tok := base.Tokenizer
	ids := tok.Encode(string(src), tokenizer.EncodeOptions{})
	fmt.Printf("%s: %d bytes, %d tokens\n", *data, len(src), len(ids))

	// The model: width D = 32, 2 blocks of 4 heads, SwiGLU of 96, context T = 32.
	cfg := llama.Config{Arch: "llama", VocabSize: tok.VocabSize(), ContextLength: 32, Embed: 32, Layers: 2,
		FFN: 96, Heads: 4, KVHeads: 4, HeadDim: 8, RopeDim: 8, RopeBase: 10000, NormEps: 1e-5}
	opts := recipes.NewOptions(32).WithBatch(8).WithSteps(*steps).WithLR(1e-2).WithWarmup(2)
	r, err := recipes.NewFromScratch(cfg, opts)
	check(err)
	fmt.Printf("%d parameters\n", r.Model.(*llama.Model).Card().ParamCount)

	// A batch is B random windows of T+1 tokens: inputs 0…T−1, targets 1…T.
	rng := rand.New(rand.NewPCG(1, 2))
	batch := func() *engine.Batch {
		var seqs [][]int32
		for range opts.Batch {
			at := rng.IntN(len(ids) - opts.Context - 1)
			seqs = append(seqs, ids[at:at+opts.Context+1])
		}
		b, err := engine.NewBatch(seqs, cfg.VocabSize, -1)
		check(err)
		return b
	}

	var losses []float64
	for r.Steps < opts.Steps {
		loss, err := r.Step(batch())
		check(err)
		losses = append(losses, float64(loss))
		if r.Steps%10 == 0 {
			fmt.Printf("step %3d  loss %.3f\n", r.Steps, loss)
		}
	}
	fmt.Printf("first loss %.3f\nlast loss %.3f\n", losses[0], losses[len(losses)-1])

	png, err := display.PlotPNG("training loss", 480, 320, losses)
	check(err)
	check(os.WriteFile(*out, png, 0o644))
	fmt.Println("wrote", *out)
}

func check(err error) {
	if err != nil {
		log.Fatal(err)
	}
}
