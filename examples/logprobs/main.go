// Command logprobs shows per-token log-probabilities: how likely the model
// found each token it generated (GenerateOptions.LogProbs), and how likely
// it finds each token of a given text (Model.LogProbs), whose mean gives the
// text's perplexity.
//
//	go run ./examples/logprobs
//
// A log-probability is log P(token | the tokens before it): 0 means certain,
// and the more negative, the more surprising.
package main

import (
	"context"
	"fmt"
	"log"
	"math"

	"github.com/toyml/toy/toy"
)

func main() {
	m, err := toy.LoadDefault()
	check(err)
	defer m.Close()

	// 1. Generate greedily and ask for each new token's log-probability.
	prompt, err := m.Encode("func (b *Buffer) Len() int {")
	check(err)
	r, err := m.GenerateContext(context.Background(), prompt, toy.GenerateOptions{MaxTokens: 12, LogProbs: true})
	check(err)
	fmt.Println("generated tokens:")
	for i, id := range r.IDs {
		piece, err := m.Decode([]int32{id})
		check(err)
		fmt.Printf("  %-12q logprob %7.3f  (p = %.2f)\n", piece, r.LogProbs[i], math.Exp(float64(r.LogProbs[i])))
	}

	// 2. Score whole texts: LogProbs(ids)[t] is log P(ids[t+1] | ids[0…t]).
	// Perplexity is exp(−mean log-prob): the number of tokens the model was,
	// on average, choosing between. Go code should surprise it less than
	// English prose.
	for _, text := range []string{
		"func main() {\n\tfmt.Println(\"hello, world\")\n}\n",
		"The quick brown fox jumps over the lazy dog.",
	} {
		ids, err := m.Encode(text)
		check(err)
		lps, err := m.LogProbs(ids)
		check(err)
		sum := 0.0
		for _, lp := range lps {
			sum += float64(lp)
		}
		fmt.Printf("\n%q\n  %d tokens, log-likelihood %.2f, perplexity %.1f\n",
			text, len(ids), sum, math.Exp(-sum/float64(len(lps))))
	}
}

func check(err error) {
	if err != nil {
		log.Fatal(err)
	}
}
