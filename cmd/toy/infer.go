// toy infer: generate tokens after a prompt.

package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"

	"github.com/toyml/toy/toy"
	"github.com/toyml/toy/toy/sample"
	"github.com/toyml/toy/toy/tensor"
)

type inferOutput struct {
	Format          string  `json:"format"`
	Model           string  `json:"model"`
	PromptIDs       []int32 `json:"prompt_ids"`
	IDs             []int32 `json:"ids"`
	TokensPerSecond float64 `json:"tokens_per_second"`
	PrefillPerSec   float64 `json:"prefill_tokens_per_second"`
}

func runInfer(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("infer", flag.ContinueOnError)
	promptIDs := fs.String("prompt-ids", "", "prompt as token ids, space-separated")
	prompt := fs.String("prompt", "", "prompt as text")
	n := fs.Int("n", 16, "tokens to generate")
	var p sample.Params
	fs.Func("temperature", "sampling temperature (0: greedy)", floatFlag(&p.Temperature))
	fs.IntVar(&p.TopK, "top-k", 0, "keep the k most likely tokens (0: all)")
	fs.Func("top-p", "nucleus sampling threshold", floatFlag(&p.TopP))
	fs.Func("min-p", "drop tokens below min-p × the top probability", floatFlag(&p.MinP))
	fs.Func("repeat-penalty", "repetition penalty (1: off)", floatFlag(&p.RepeatPenalty))
	fs.Uint64Var(&p.Seed, "seed", 0, "random seed")
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
	if *n < 0 {
		return fmt.Errorf("--n must be ≥ 0, got %d", *n)
	}
	if *threads > 0 {
		tensor.SetThreads(*threads)
	}
	if (p.TopK != 0 || p.TopP != 0 || p.MinP != 0) && p.Temperature == 0 {
		p.Temperature = 0.8 // a sampling flag without a temperature asks for sampling
	}

	m, err := toy.Load(path)
	if err != nil {
		return err
	}
	defer m.Close()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	r, err := m.GenerateContext(ctx, ids, toy.GenerateOptions{MaxTokens: *n, Sample: p})
	if err != nil {
		return err
	}
	out := inferOutput{
		Format: "toy/infer-v1", Model: path, PromptIDs: ids, IDs: r.IDs,
		TokensPerSecond: r.DecodeTokensPerSecond(),
	}
	if r.PrefillTime > 0 {
		out.PrefillPerSec = float64(len(ids)) / r.PrefillTime.Seconds()
	}
	if out.IDs == nil {
		out.IDs = []int32{}
	}
	if *asJSON {
		return json.NewEncoder(stdout).Encode(out)
	}
	for i, id := range r.IDs {
		if i > 0 {
			fmt.Fprint(stdout, " ")
		}
		fmt.Fprint(stdout, id)
	}
	fmt.Fprintln(stdout)
	fmt.Fprintf(os.Stderr, "prefill %d tokens at %.1f tok/s, decode %d tokens at %.1f tok/s\n",
		len(ids), out.PrefillPerSec, len(r.IDs), out.TokensPerSecond)
	return nil
}

// floatFlag parses a float32 flag value into dst.
func floatFlag(dst *float32) func(string) error {
	return func(s string) error {
		var v float64
		if _, err := fmt.Sscan(s, &v); err != nil {
			return fmt.Errorf("%q is not a number", s)
		}
		*dst = float32(v)
		return nil
	}
}
