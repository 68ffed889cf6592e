// toy eval: log-probabilities of a prompt's tokens and of the next one, or
// the perplexity of a file.

package cli

import (
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"time"

	"github.com/toyml/toy/toy"
	"github.com/toyml/toy/toy/sample"
)

type tokenProb struct {
	ID      int32   `json:"id"`
	Logprob float64 `json:"logprob"`
}

type evalToken struct {
	ID      int32       `json:"id"`
	Piece   *string     `json:"piece,omitempty"`
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

type evalOpts struct {
	promptIDs, prompt, file string
	lora                    string
	topK, threads, window   int
	device                  string
	asJSON                  bool
}

func evalFlagSet() (*flag.FlagSet, *evalOpts) {
	o := &evalOpts{}
	fs := flag.NewFlagSet("eval", flag.ContinueOnError)
	fs.StringVar(&o.promptIDs, "prompt-ids", "", "prompt as token ids, space-separated")
	fs.StringVar(&o.prompt, "prompt", "", "prompt as text (encoded with the model's tokenizer)")
	fs.StringVar(&o.lora, "lora", "", "apply this LoRA adapter (llama.cpp's adapter GGUF)")
	fs.StringVar(&o.file, "file", "", "text file: report its perplexity instead")
	fs.IntVar(&o.window, "window", 0, "perplexity window in tokens (default: the context, at most 512); windows overlap by half")
	fs.IntVar(&o.topK, "top-k", 5, "how many most likely tokens to list per position")
	fs.IntVar(&o.threads, "threads", 0, "worker threads (0: all cores)")
	deviceFlag(fs, &o.device)
	fs.BoolVar(&o.asJSON, "json", false, "print JSON")
	return fs, o
}

func runEval(args []string, stdout io.Writer) error {
	fs, o := evalFlagSet()
	pos, err := parseFlags(fs, args, stdout)
	if err != nil {
		return err
	}
	if o.topK < 0 {
		return fmt.Errorf("--top-k must be ≥ 0, got %d", o.topK)
	}
	m, err := openModel(pos, o.threads, o.device, o.lora)
	if err != nil {
		return err
	}
	defer m.Close()
	if o.file != "" {
		return perplexity(m, o, stdout)
	}
	ids, err := promptIDs(m, fs, o.promptIDs, o.prompt, false, "--prompt, --prompt-ids or --file")
	if err != nil {
		return err
	}
	logits, err := m.Forward(ids) // [T, V]
	if err != nil {
		return err
	}
	out := evalOutput{Format: "toy/eval-v1", Model: m.Path, PromptIDs: ids}
	var prev []float64 // log-probs predicting the current position
	for i, id := range ids {
		tok := evalToken{ID: id, Top: []tokenProb{}}
		if m.Tokenizer != nil {
			piece := m.Tokenizer.Piece(id)
			tok.Piece = &piece
		}
		if prev != nil {
			lp := prev[id]
			tok.Logprob = &lp
			tok.Top = topLogprobs(prev, o.topK)
		}
		out.Tokens = append(out.Tokens, tok)
		prev = sample.LogSoftmax(logits.Row(i))
	}
	out.Next = topLogprobs(prev, o.topK)
	if o.asJSON {
		return encodeJSON(stdout, out)
	}
	for i, t := range out.Tokens {
		lp := "    -"
		if t.Logprob != nil {
			lp = fmt.Sprintf("%8.4f", *t.Logprob)
		}
		piece := ""
		if t.Piece != nil {
			piece = fmt.Sprintf("%q", *t.Piece)
		}
		fmt.Fprintf(stdout, "%4d  %7d  %s  %s\n", i, t.ID, lp, piece)
	}
	fmt.Fprint(stdout, "next:")
	for _, t := range out.Next {
		fmt.Fprintf(stdout, "  %d (%.4f)", t.ID, t.Logprob)
	}
	fmt.Fprintln(stdout)
	return nil
}

// perplexity scores a file with a sliding window: windows of W tokens
// advance by W/2, and each token is scored once, in the first window where
// it has at least W/2 tokens of context (or from the start).
func perplexity(m *toy.Model, o *evalOpts, stdout io.Writer) error {
	b, err := os.ReadFile(o.file)
	if err != nil {
		return err
	}
	ids, err := m.Encode(string(b))
	if err != nil {
		return err
	}
	if len(ids) < 2 {
		return fmt.Errorf("--file %s holds %d tokens; need at least 2", o.file, len(ids))
	}
	w := o.window
	if w <= 0 {
		w = min(m.ContextLength(), 512)
	}
	w = max(2, min(w, m.ContextLength()))
	stride := max(1, w/2)
	var nll float64
	scored := 1 // the first token has nothing to be predicted from
	start := time.Now()
	terminal := isTerminal(os.Stderr) && !o.asJSON
	for begin := 0; scored < len(ids); begin += stride {
		end := min(begin+w, len(ids))
		logits, err := m.Forward(ids[begin:end])
		if err != nil {
			return err
		}
		for t := scored; t < end; t++ { // predict ids[t] from row t-1-begin
			nll -= sample.LogProb(logits.Row(t-1-begin), ids[t])
		}
		scored = end
		if terminal {
			fmt.Fprintf(os.Stderr, "\r%d/%d tokens  ppl %.3f  %.0f tok/s   ", scored, len(ids),
				math.Exp(nll/float64(scored-1)), float64(scored)/time.Since(start).Seconds())
		}
	}
	if terminal {
		fmt.Fprintln(os.Stderr)
	}
	n := len(ids) - 1
	res := map[string]any{"format": "toy/perplexity-v1", "model": m.Path, "file": o.file, "tokens": len(ids),
		"window": w, "mean_nll": nll / float64(n), "perplexity": math.Exp(nll / float64(n))}
	if o.asJSON {
		return encodeJSON(stdout, res)
	}
	fmt.Fprintf(stdout, "%s: %d tokens, window %d, perplexity %.4f (mean NLL %.4f nats)\n", o.file, len(ids), w, res["perplexity"], res["mean_nll"])
	return nil
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
