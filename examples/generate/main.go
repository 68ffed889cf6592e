// Command generate shows text generation with sampling: temperature, top-k,
// top-p and a seed (sample.Params), with each token printed as soon as the
// model produces it (GenerateOptions.OnToken).
//
//	go run ./examples/generate -prompt 'func (b *Buffer) Len() int {' -temperature 0.7 -seed 2
//
// The model is toy-go, the small Llama toy ships with, trained on Go source:
// it writes Go-looking code, nothing more.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"

	"github.com/toyml/toy/toy"
	"github.com/toyml/toy/toy/sample"
)

func main() {
	prompt := flag.String("prompt", "func (b *Buffer) Len() int {", "text to continue")
	n := flag.Int("n", 48, "tokens to generate at most")
	temperature := flag.Float64("temperature", 0.7, "0 is greedy; higher is more random")
	topK := flag.Int("top-k", 40, "sample from the k likeliest tokens (0: all)")
	topP := flag.Float64("top-p", 0.95, "sample from the likeliest tokens whose probabilities add up to p")
	seed := flag.Uint64("seed", 1, "random seed: the same seed gives the same text")
	flag.Parse()

	m, err := toy.LoadDefault()
	check(err)
	defer m.Close()
	fmt.Println("model:", m)

	ids, err := m.Encode(*prompt)
	check(err)

	// A Decoder turns ids into text one at a time, holding back the bytes of
	// a character split across tokens until it is complete.
	dec := m.Tokenizer.NewDecoder()
	fmt.Print(*prompt)
	r, err := m.GenerateContext(context.Background(), ids, toy.GenerateOptions{
		MaxTokens: *n,
		Sample: sample.Params{
			Temperature: float32(*temperature),
			TopK:        *topK,
			TopP:        float32(*topP),
			Seed:        *seed,
		},
		Stop: m.Tokenizer.IsEOG, // an end-of-generation token ends the text
		OnToken: func(id int32) {
			if !m.Tokenizer.IsEOG(id) {
				fmt.Print(dec.Push(id))
			}
		},
	})
	check(err)
	fmt.Println(dec.Flush())

	fmt.Printf("\n%d tokens (stopped by %q), %.0f tokens/s\n", len(r.IDs), r.Reason, r.DecodeTokensPerSecond())
}

func check(err error) {
	if err != nil {
		log.Fatal(err)
	}
}
