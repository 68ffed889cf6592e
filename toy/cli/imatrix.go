// toy imatrix: an importance matrix of a model on a text, for toy quantize
// --imatrix, as llama-imatrix makes one.

package cli

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/toyml/toy/toy"
	"github.com/toyml/toy/toy/tokenizer"
)

const imatrixUsage = "toy imatrix MODEL --text FILE [--output imatrix.gguf] [--chunk 512] [--chunks N] [--process-output] [--threads N]"

type imatrixFlags struct {
	text, output  string
	chunk, chunks int
	threads       int
	processOutput bool
}

func imatrixFlagSet() (*flag.FlagSet, *imatrixFlags) {
	f := &imatrixFlags{}
	fs := flag.NewFlagSet("imatrix", flag.ContinueOnError)
	fs.StringVar(&f.text, "text", "", "the text to measure on (- for stdin): a few hundred thousand tokens of what the model will see")
	fs.StringVar(&f.output, "output", "imatrix.gguf", "where to write the importance matrix (GGUF, as llama-imatrix writes it)")
	fs.IntVar(&f.chunk, "chunk", 512, "tokens per chunk; each chunk runs from an empty cache")
	fs.IntVar(&f.chunks, "chunks", 0, "run at most N chunks (0: the whole text)")
	fs.BoolVar(&f.processOutput, "process-output", false, "also measure the head (output.weight)")
	fs.IntVar(&f.threads, "threads", 0, "worker threads (0: all cores)")
	return fs, f
}

func imatrixFlagsDoc() *flag.FlagSet { fs, _ := imatrixFlagSet(); return fs }

// runImatrix measures MODEL on the text and writes the importance matrix.
func runImatrix(args []string, stdout io.Writer) error {
	fs, f := imatrixFlagSet()
	pos, err := parseFlags(fs, args, stdout)
	if err != nil {
		return err
	}
	if len(pos) != 1 || f.text == "" {
		return fmt.Errorf("%w: %s", errUsage, imatrixUsage)
	}
	if f.chunk < 16 {
		return fmt.Errorf("%w: --chunk %d: at least 16 (shorter products are not measured)", errUsage, f.chunk)
	}
	var text []byte
	if f.text == "-" {
		text, err = io.ReadAll(os.Stdin)
	} else {
		text, err = os.ReadFile(f.text)
	}
	if err != nil {
		return fmt.Errorf("--text: %w", err)
	}
	m, err := openModel(pos, f.threads, "", "")
	if err != nil {
		return err
	}
	defer m.Close()
	if m.Tokenizer == nil {
		return fmt.Errorf("%s: %w", pos[0], m.TokenizerErr)
	}
	ids := m.Tokenizer.Encode(string(text), tokenizer.EncodeOptions{AddBOS: m.Tokenizer.AddBOS()})
	opt := toy.ImatrixOptions{Chunk: f.chunk, Chunks: f.chunks, ProcessOutput: f.processOutput, Dataset: filepath.Base(f.text),
		Progress: func(done, total int) { fmt.Fprintf(os.Stderr, "\rimatrix: chunk %d of %d", done, total) }}
	im, err := m.Imatrix(ids, opt)
	fmt.Fprintln(os.Stderr)
	if err != nil {
		return err
	}
	w, err := im.Writer()
	if err != nil {
		return err
	}
	if err := w.WriteFile(f.output); err != nil {
		return failure(err)
	}
	fmt.Fprintf(stdout, "wrote %s: %d matrices, %d chunks of %d tokens (%d tokens of text)\n", f.output, len(im.Sums), im.ChunkCount, im.ChunkSize, len(ids))
	return nil
}
