// toy tokenize: the ids and pieces of a text.

package cli

import (
	"flag"
	"fmt"
	"io"

	"github.com/toyml/toy/toy"
	"github.com/toyml/toy/toy/tokenizer"
)

func tokenizeFlagSet() (*flag.FlagSet, *bool, *bool, *bool) {
	fs := flag.NewFlagSet("tokenize", flag.ContinueOnError)
	special := fs.Bool("special", false, "recognise special tokens (<|endoftext|>, <s>, …) in the text")
	bos := fs.Bool("bos", false, "add the BOS (and, if the model adds one, EOS) token")
	asJSON := fs.Bool("json", false, "print JSON")
	return fs, special, bos, asJSON
}

func runTokenize(args []string, stdout io.Writer) error {
	fs, special, bos, asJSON := tokenizeFlagSet()
	pos, err := parseFlags(fs, args, stdout)
	if err != nil {
		return err
	}
	if len(pos) == 0 || len(pos) > 2 {
		return fmt.Errorf("%w: toy tokenize [MODEL] TEXT [--special] [--bos] [--json]", errUsage)
	}
	m, err := loadModel(pos[:len(pos)-1]) // no MODEL: the default model
	text := pos[len(pos)-1]
	if err != nil {
		return err
	}
	defer m.Close()
	if m.Tokenizer == nil {
		return fmt.Errorf("%w: %v", toy.ErrNoTokenizer, m.TokenizerErr)
	}
	t := m.Tokenizer
	ids := t.Encode(text, tokenizer.EncodeOptions{AddBOS: *bos, AddEOS: *bos && t.AddEOS(), ParseSpecial: *special})
	pieces := make([]string, len(ids))
	for i, id := range ids {
		pieces[i] = t.Piece(id)
	}
	if *asJSON {
		if ids == nil {
			ids = []int32{}
		}
		return encodeJSON(stdout, map[string]any{"format": "toy/tokenize-v1", "ids": ids, "pieces": pieces})
	}
	for i, id := range ids {
		fmt.Fprintf(stdout, "%7d  %q\n", id, pieces[i])
	}
	return nil
}
