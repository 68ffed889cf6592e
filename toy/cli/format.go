// --format json, --schema FILE, --grammar TEXT and --grammar-file FILE:
// replies kept to a JSON object, a value of a JSON schema, or a GBNF
// grammar.

package cli

import (
	"flag"
	"fmt"
	"os"

	"github.com/toyml/toy/toy"
	"github.com/toyml/toy/toy/grammar"
	"github.com/toyml/toy/toy/sample"
)

// formatFlags are the flags that constrain a reply, as toy infer and toy
// chat take them.
type formatFlags struct {
	format, schema, grammar, grammarFile string
}

func (f *formatFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.format, "format", "", `"json": keep the reply a JSON object (llama.cpp's json grammar, Ollama's format "json")`)
	fs.StringVar(&f.schema, "schema", "", "keep the reply a value of the JSON schema in this file (Ollama's format with a schema)")
	fs.StringVar(&f.grammar, "grammar", "", "keep the reply in this GBNF grammar (llama.cpp's --grammar)")
	fs.StringVar(&f.grammarFile, "grammar-file", "", "keep the reply in the GBNF grammar in this file (llama.cpp's --grammar-file)")
}

// replyFormat is what the flags ask of a reply.
type replyFormat struct {
	json   bool
	schema *grammar.Schema
	gbnf   string        // the grammar's text
	parsed *grammar.GBNF // gbnf parsed with the model's vocabulary
}

// read checks the flags and reads their files, before anything is loaded.
func (f *formatFlags) read() (*replyFormat, error) {
	if f.format != "" && f.format != "json" {
		return nil, fmt.Errorf("%w: --format %q: want json", errUsage, f.format)
	}
	r := &replyFormat{json: f.format == "json", gbnf: f.grammar}
	if f.schema != "" {
		raw, err := os.ReadFile(f.schema)
		if err != nil {
			return nil, fmt.Errorf("--schema: %w", err)
		}
		if r.schema, err = grammar.CompileSchema(raw); err != nil {
			return nil, fmt.Errorf("--schema %s: %w", f.schema, err)
		}
		r.json = true
	}
	if f.grammarFile != "" {
		if f.grammar != "" {
			return nil, fmt.Errorf("%w: give --grammar or --grammar-file, not both", errUsage)
		}
		raw, err := os.ReadFile(f.grammarFile)
		if err != nil {
			return nil, fmt.Errorf("--grammar-file: %w", err)
		}
		r.gbnf = string(raw)
	}
	if r.gbnf != "" && r.json {
		return nil, fmt.Errorf("%w: a grammar and --format/--schema: give one of them", errUsage)
	}
	return r, nil
}

// constrained reports whether the reply is constrained at all.
func (r *replyFormat) constrained() bool { return r.json || r.gbnf != "" }

// constrain sets the generation's constraint: a fresh grammar state limits
// each step's tokens and follows the sampled ones. Without the flags it
// changes nothing.
func (r *replyFormat) constrain(m *toy.Model, constraint *sample.Constraint) error {
	if !r.constrained() {
		return nil
	}
	if m.Tokenizer == nil {
		return fmt.Errorf("a constrained reply: %w: %v", toy.ErrNoTokenizer, m.TokenizerErr)
	}
	tok := m.Tokenizer
	var state grammar.State
	switch {
	case r.gbnf != "":
		if r.parsed == nil {
			g, err := grammar.ParseGBNF(r.gbnf, tok)
			if err != nil {
				return err
			}
			r.parsed = g
		}
		state = grammar.NewMatcher(r.parsed)
	case r.schema != nil:
		state = grammar.NewJSONSchema(r.schema)
	default:
		state = grammar.NewJSON()
	}
	*constraint = grammar.Tokens{State: state, Vocab: tok}
	return nil
}
