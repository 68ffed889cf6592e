// toy eval: log-probabilities of a prompt's tokens and of the next one.

package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"sort"

	"github.com/toyml/toy/toy"
	"github.com/toyml/toy/toy/tensor"
)

type tokenProb struct {
	ID      int32   `json:"id"`
	Logprob float64 `json:"logprob"`
}

type evalToken struct {
	ID      int32       `json:"id"`
	Logprob *float64    `json:"logprob"`
	Top     []tokenProb `json:"top"`
}

type evalOutput struct {
	Format    string      `json:"format"`
	Model     string      `json:"model"`
	PromptIDs []int32     `json:"prompt_ids"`
	Tokens    []evalToken `json:"tokens"`
	Next      []tokenProb `json:"next"`
}

func runEval(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("eval", flag.ContinueOnError)
	promptIDs := fs.String("prompt-ids", "", "prompt as token ids, space-separated")
	prompt := fs.String("prompt", "", "prompt as text")
	topK := fs.Int("top-k", 5, "how many most likely tokens to list per position")
	threads := fs.Int("threads", 0, "worker threads (0: all cores)")
	asJSON := fs.Bool("json", false, "print JSON")
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return err
	}
	path, err := oneModel(pos)
	if err != nil {
		return err
	}
	if *prompt != "" {
		return fmt.Errorf("--prompt: text prompts need a tokenizer, which toy does not have yet; pass --prompt-ids")
	}
	ids, err := parseIDs(*promptIDs)
	if err != nil {
		return err
	}
	if *topK < 0 {
		return fmt.Errorf("--top-k must be ≥ 0, got %d", *topK)
	}
	if *threads > 0 {
		tensor.SetThreads(*threads)
	}
	m, err := toy.Load(path)
	if err != nil {
		return err
	}
	defer m.Close()
	logits, err := m.Forward(ids) // [T, V]
	if err != nil {
		return err
	}
	out := evalOutput{Format: "toy/eval-v1", Model: path, PromptIDs: ids}
	var prev []float64 // log-probs predicting the current position
	for i, id := range ids {
		tok := evalToken{ID: id, Top: []tokenProb{}}
		if prev != nil {
			lp := prev[id]
			tok.Logprob = &lp
			tok.Top = topLogprobs(prev, *topK)
		}
		out.Tokens = append(out.Tokens, tok)
		prev = LogSoftmax(logits.Row(i))
	}
	out.Next = topLogprobs(prev, *topK)
	if *asJSON {
		return json.NewEncoder(stdout).Encode(out)
	}
	for i, t := range out.Tokens {
		lp := "    -"
		if t.Logprob != nil {
			lp = fmt.Sprintf("%8.4f", *t.Logprob)
		}
		fmt.Fprintf(stdout, "%4d  %7d  %s\n", i, t.ID, lp)
	}
	fmt.Fprint(stdout, "next:")
	for _, t := range out.Next {
		fmt.Fprintf(stdout, "  %d (%.4f)", t.ID, t.Logprob)
	}
	fmt.Fprintln(stdout)
	return nil
}

// LogSoftmax returns log softmax(x) in float64: x − max − log Σ exp(x − max).
func LogSoftmax(x []float32) []float64 {
	m := math.Inf(-1)
	for _, v := range x {
		m = math.Max(m, float64(v))
	}
	var sum float64
	for _, v := range x {
		sum += math.Exp(float64(v) - m)
	}
	lse := m + math.Log(sum)
	out := make([]float64, len(x))
	for i, v := range x {
		out[i] = float64(v) - lse
	}
	return out
}

// topLogprobs returns the k largest log-probs, ties by lower id.
func topLogprobs(lp []float64, k int) []tokenProb {
	idx := make([]int, len(lp))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return lp[idx[a]] > lp[idx[b]] })
	out := []tokenProb{}
	for _, i := range idx[:min(k, len(idx))] {
		out = append(out, tokenProb{ID: int32(i), Logprob: lp[i]})
	}
	return out
}
