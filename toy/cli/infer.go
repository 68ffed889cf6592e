// toy infer: generate tokens after a prompt.

package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"

	"github.com/toyml/toy/toy"
	"github.com/toyml/toy/toy/sample"
	"github.com/toyml/toy/toy/tensor"
	"github.com/toyml/toy/toy/tokenizer"
)

type inferOutput struct {
	Format          string  `json:"format"`
	Model           string  `json:"model"`
	PromptIDs       []int32 `json:"prompt_ids"`
	IDs             []int32 `json:"ids"`
	Text            *string `json:"text,omitempty"`
	TokensPerSecond float64 `json:"tokens_per_second"`
	PrefillPerSec   float64 `json:"prefill_tokens_per_second"`
	// With --draft: the draft's guesses and those kept.
	Drafted  *int `json:"draft_tokens,omitempty"`
	Accepted *int `json:"draft_accepted,omitempty"`
}

type inferOpts struct {
	promptIDs, prompt string
	lora              string
	draft             string
	draftN            int
	stop              stringList
	n, threads        int
	warmup            int
	device            string
	p                 sample.Params
	asJSON            bool
	format            formatFlags
}

// stringList is a flag that may be repeated.
type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, ",") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }

func inferFlagSet() (*flag.FlagSet, *inferOpts) {
	o := &inferOpts{}
	fs := flag.NewFlagSet("infer", flag.ContinueOnError)
	fs.StringVar(&o.promptIDs, "prompt-ids", "", "prompt as token ids, space-separated")
	fs.StringVar(&o.prompt, "prompt", "", "prompt as text (encoded with the model's tokenizer)")
	fs.IntVar(&o.n, "n", 16, "tokens to generate")
	fs.StringVar(&o.lora, "lora", "", "apply this LoRA adapter (llama.cpp's adapter GGUF)")
	fs.StringVar(&o.draft, "draft", "", "speculative decoding: a smaller model over the same vocabulary guesses ahead, the model checks its guesses in one pass (the same tokens, faster when it guesses well)")
	fs.IntVar(&o.draftN, "draft-n", 8, "tokens the draft guesses a round")
	fs.Var(&o.stop, "stop", "stop when the text contains this string (repeatable)")
	fs.Func("temperature", "sampling temperature (0: greedy)", floatFlag(&o.p.Temperature))
	fs.IntVar(&o.p.TopK, "top-k", 0, "keep the k most likely tokens (0: all)")
	fs.Func("top-p", "nucleus sampling threshold", floatFlag(&o.p.TopP))
	fs.Func("min-p", "drop tokens below min-p × the top probability", floatFlag(&o.p.MinP))
	fs.Func("repeat-penalty", "repetition penalty (1: off)", floatFlag(&o.p.RepeatPenalty))
	fs.Uint64Var(&o.p.Seed, "seed", 0, "random seed")
	fs.IntVar(&o.threads, "threads", 0, "worker threads (0: all cores)")
	fs.IntVar(&o.warmup, "warmup", 0, "run the generation this many times first, untimed (as llama-bench does): the output and the speeds are the next run's")
	deviceFlag(fs, &o.device)
	fs.BoolVar(&o.asJSON, "json", false, "print JSON")
	o.format.register(fs)
	return fs, o
}

func runInfer(args []string, stdout io.Writer) error {
	fs, o := inferFlagSet()
	pos, err := parseFlags(fs, args, stdout)
	if err != nil {
		return err
	}
	if o.n < 0 {
		return fmt.Errorf("--n must be ≥ 0, got %d", o.n)
	}
	if o.warmup < 0 {
		return fmt.Errorf("--warmup must be ≥ 0, got %d", o.warmup)
	}
	format, err := o.format.read()
	if err != nil {
		return err
	}
	p := o.p
	if (p.TopK != 0 || p.TopP != 0 || p.MinP != 0) && p.Temperature == 0 {
		p.Temperature = 0.8 // a sampling flag without a temperature asks for sampling
	}
	m, err := openModel(pos, o.threads, o.device, o.lora)
	if err != nil {
		return err
	}
	defer m.Close()
	ids, err := promptIDs(m, fs, o.promptIDs, o.prompt, true, "--prompt or --prompt-ids")
	if err != nil {
		return err
	}

	// Text streams as it is generated when the prompt was text (or none:
	// a start from BOS reads as text, as llama.cpp prints it).
	noPrompt := !flagGiven(fs, "prompt") && !flagGiven(fs, "prompt-ids")
	text := flagGiven(fs, "prompt") || noPrompt || len(o.stop) > 0
	var generated strings.Builder
	stream := text && !o.asJSON
	var dec *tokenizer.Decoder
	if text {
		if m.Tokenizer == nil {
			return fmt.Errorf("%w: %v", toy.ErrNoTokenizer, m.TokenizerErr)
		}
		dec = m.Tokenizer.NewDecoder()
	}
	opts := toy.GenerateOptions{MaxTokens: o.n, Sample: p, DraftTokens: o.draftN}
	if o.draft != "" {
		d, err := loadModel([]string{o.draft})
		if err != nil {
			return fmt.Errorf("--draft: %w", err)
		}
		defer d.Close()
		opts.Draft = d
	}
	if text {
		opts.OnToken = func(id int32) {
			piece := dec.Push(id)
			generated.WriteString(piece)
			if stream {
				fmt.Fprint(stdout, piece)
			}
		}
		opts.Stop = func(id int32) bool {
			if m.Tokenizer.IsEOG(id) {
				return true
			}
			for _, s := range o.stop {
				if strings.Contains(generated.String(), s) {
					return true
				}
			}
			return false
		}
	}
	if format.constrained() && opts.Stop == nil && m.Tokenizer != nil {
		opts.Stop = m.Tokenizer.IsEOG // the grammar may end the reply
	}
	if err := format.constrain(m, &opts.Constraint); err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	for range o.warmup {
		// The same generation, printing nothing (and, with a format, the
		// same tokens unconstrained: the grammar's state is for one reply).
		warm := opts
		warm.OnToken, warm.Constraint = nil, nil
		if _, err := m.GenerateContext(ctx, ids, warm); err != nil {
			return err
		}
	}
	r, err := m.GenerateContext(ctx, ids, opts)
	if err != nil {
		return err
	}
	out := inferOutput{
		Format: "toy/infer-v1", Model: m.Path, PromptIDs: ids, IDs: r.IDs,
		TokensPerSecond: r.DecodeTokensPerSecond(),
	}
	if r.PrefillTime > 0 {
		out.PrefillPerSec = float64(len(ids)) / r.PrefillTime.Seconds()
	}
	if opts.Draft != nil {
		out.Drafted, out.Accepted = &r.Drafted, &r.Accepted
	}
	if out.IDs == nil {
		out.IDs = []int32{}
	}
	if text {
		generated.WriteString(dec.Flush())
		s := generated.String()
		for _, st := range o.stop {
			if i := strings.Index(s, st); i >= 0 {
				s = s[:i]
			}
		}
		out.Text = &s
	}
	if o.asJSON {
		return encodeJSON(stdout, out)
	}
	if stream {
		fmt.Fprintln(stdout)
	} else {
		for i, id := range r.IDs {
			if i > 0 {
				fmt.Fprint(stdout, " ")
			}
			fmt.Fprint(stdout, id)
		}
		fmt.Fprintln(stdout)
	}
	fmt.Fprintf(os.Stderr, "prompt %d tokens at %.1f tok/s, generated %d tokens at %.1f tok/s (%s)\n",
		len(ids), out.PrefillPerSec, len(r.IDs), out.TokensPerSecond, r.Reason)
	if opts.Draft != nil {
		fmt.Fprintf(os.Stderr, "draft: %d of %d guesses kept (%.0f%%)\n", r.Accepted, r.Drafted, 100*float64(r.Accepted)/float64(max(r.Drafted, 1)))
	}
	return nil
}

// promptIDs returns the prompt as token ids, from --prompt-ids or by
// encoding --prompt; at most one may be given. With neither, a command that
// can start from nothing (infer) starts from the BOS token, as llama.cpp
// does; without a BOS token, or for the others, it asks for a prompt (what
// says how lists the flags that give one).
func promptIDs(m *toy.Model, fs *flag.FlagSet, ids, text string, fromBOS bool, what string) ([]int32, error) {
	switch idsGiven, textGiven := flagGiven(fs, "prompt-ids"), flagGiven(fs, "prompt"); {
	case idsGiven && textGiven:
		return nil, fmt.Errorf("%w: give --prompt or --prompt-ids, not both", errUsage)
	case textGiven:
		out, err := m.Encode(text)
		if err == nil && len(out) == 0 {
			err = fmt.Errorf("%w: --prompt %q encodes to no tokens", errUsage, text)
		}
		return out, err
	case idsGiven:
		return parseIDs(ids)
	}
	if fromBOS && m.Tokenizer != nil && m.Tokenizer.BOS() >= 0 {
		return []int32{m.Tokenizer.BOS()}, nil
	}
	if fromBOS {
		what += " (the model has no BOS token to start from)"
	}
	return nil, fmt.Errorf("%w: no prompt: give %s", errUsage, what)
}

// flagGiven reports whether the flag was set on the command line.
func flagGiven(fs *flag.FlagSet, name string) bool {
	given := false
	fs.Visit(func(f *flag.Flag) { given = given || f.Name == name })
	return given
}

// setThreads applies --threads: 0 keeps every core.
func setThreads(n int) error {
	if n < 0 {
		return fmt.Errorf("%w: --threads must be ≥ 0 (0: all cores), got %d", errUsage, n)
	}
	if n > 0 {
		tensor.SetThreads(n)
	}
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
