// toy embed: text embeddings from an encoder (BERT, nomic-bert) or a
// decoder's hidden states.

package cli

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/toyml/toy/toy"
)

const embedUsage = "toy embed MODEL TEXT… [--file FILE] [--normalize l2|none] [--pooling mean|cls|last] [--truncate] [--device cpu|cuda] [--json]"

type embedFlags struct {
	normalize, pooling, file, device string
	truncate, asJSON                 bool
}

func embedFlagSet() (*flag.FlagSet, *embedFlags) {
	f := &embedFlags{}
	fs := flag.NewFlagSet("embed", flag.ContinueOnError)
	fs.StringVar(&f.normalize, "normalize", "l2", "l2: unit length, as llama-embedding and Ollama return them; none: the pooled state")
	fs.StringVar(&f.pooling, "pooling", "", "mean, cls or last (default: the model's pooling_type; last for a decoder without one)")
	fs.StringVar(&f.file, "file", "", "read the texts from FILE, one per line (- for stdin), after any given as arguments")
	fs.BoolVar(&f.truncate, "truncate", false, "cut a text longer than the model's context instead of failing")
	fs.BoolVar(&f.asJSON, "json", false, `print JSON: {"format":"toy/embed-v1","model","arch","pooling","normalize","dim","data":[{"index","text","tokens","embedding"}…]}`)
	deviceFlag(fs, &f.device)
	return fs, f
}

func embedFlagsDoc() *flag.FlagSet { fs, _ := embedFlagSet(); return fs }

type embedItem struct {
	Index     int       `json:"index"`
	Text      string    `json:"text"`
	Tokens    int       `json:"tokens"` // embedded, after --truncate
	Embedding []float32 `json:"embedding"`
}

type embedOutput struct {
	Format    string      `json:"format"`
	Model     string      `json:"model"`
	Arch      string      `json:"arch"`
	Pooling   string      `json:"pooling"`
	Normalize string      `json:"normalize"`
	Dim       int         `json:"dim"`
	Data      []embedItem `json:"data"`
}

func runEmbed(args []string, stdout io.Writer) error {
	fs, f := embedFlagSet()
	pos, err := parseFlags(fs, args, stdout)
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		return fmt.Errorf("%w: %s", errUsage, embedUsage)
	}
	texts, err := withLines(pos[1:], f.file)
	if err != nil {
		return err
	}
	if len(texts) == 0 {
		return fmt.Errorf("%w: no text to embed: %s", errUsage, embedUsage)
	}
	if f.normalize != "l2" && f.normalize != "none" {
		return fmt.Errorf("%w: --normalize %q (l2 or none)", errUsage, f.normalize)
	}
	if err := useDevice(f.device); err != nil {
		return err
	}
	e, err := loadEmbedder(pos[0])
	if err != nil {
		return err
	}
	defer e.Close()
	opts := toy.EmbedOptions{Pooling: f.pooling, Normalize: f.normalize, Truncate: f.truncate}
	inputs := make([][]int32, len(texts))
	for i, s := range texts {
		if inputs[i], err = e.Encode(s); err != nil {
			return err
		}
	}
	vs, err := e.EmbedIDs(inputs, opts)
	if err != nil {
		return err
	}
	pooling := e.Pooling.String()
	if f.pooling != "" {
		pooling = f.pooling
	}
	if f.asJSON {
		out := embedOutput{Format: "toy/embed-v1", Model: pos[0], Arch: e.Arch, Pooling: pooling, Normalize: f.normalize, Dim: e.Dim()}
		for i, v := range vs {
			out.Data = append(out.Data, embedItem{Index: i, Text: texts[i], Tokens: min(len(inputs[i]), e.Net.ContextLength()), Embedding: v})
		}
		return encodeJSON(stdout, out)
	}
	for i, v := range vs {
		fmt.Fprintf(stdout, "embedding %d (%d tokens):", i, min(len(inputs[i]), e.Net.ContextLength()))
		for _, x := range v {
			fmt.Fprintf(stdout, " %.6f", x)
		}
		fmt.Fprintln(stdout)
	}
	if len(vs) > 1 { // as llama-embedding prints it
		fmt.Fprintln(stdout, "\ncosine similarity matrix:")
		for _, a := range vs {
			for _, b := range vs {
				fmt.Fprintf(stdout, "%7.3f", toy.Cosine(a, b))
			}
			fmt.Fprintln(stdout)
		}
	}
	return nil
}

// loadEmbedder resolves a model reference (a path, or a name toy list
// shows) and loads it as an embedding model.
func loadEmbedder(ref string) (*toy.Embedder, error) {
	path, err := resolveModel(ref)
	if err != nil {
		return nil, err
	}
	return toy.LoadEmbedder(path)
}

// withLines returns args followed by the non-empty lines of file ("":
// none; "-": stdin).
func withLines(args []string, file string) ([]string, error) {
	if file == "" {
		return args, nil
	}
	more, err := readLines(file)
	return append(args, more...), err
}

// readLines returns the non-empty lines of a file, or of stdin for "-".
func readLines(name string) ([]string, error) {
	var r io.Reader = os.Stdin
	if name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		r = f
	}
	var lines []string
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	for sc.Scan() {
		if s := strings.TrimRight(sc.Text(), "\r"); s != "" {
			lines = append(lines, s)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, failure(fmt.Errorf("--file %s: %w", name, err))
	}
	if len(lines) == 0 {
		return nil, errors.New("--file " + name + ": no lines")
	}
	return lines, nil
}
