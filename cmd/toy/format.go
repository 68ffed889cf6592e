// --format json and --schema FILE: replies kept to a JSON object, or to a
// value of a JSON schema.

package main

import (
	"fmt"
	"os"

	"github.com/toyml/toy/toy"
	"github.com/toyml/toy/toy/grammar"
	"github.com/toyml/toy/toy/sample"
)

// Usage lines of --format and --schema.
const (
	formatFlagHelp = `"json": keep the reply a JSON object (llama.cpp's json grammar, Ollama's format "json")`
	schemaFlagHelp = "keep the reply a value of the JSON schema in this file (Ollama's format with a schema)"
)

// replyFormat is what --format and --schema ask of a reply.
type replyFormat struct {
	json   bool
	schema *grammar.Schema
}

// readFormat checks --format and reads --schema, before anything is loaded.
func readFormat(format, schemaPath string) (replyFormat, error) {
	if format != "" && format != "json" {
		return replyFormat{}, fmt.Errorf("%w: --format %q: want json", errUsage, format)
	}
	f := replyFormat{json: format == "json"}
	if schemaPath != "" {
		raw, err := os.ReadFile(schemaPath)
		if err != nil {
			return f, fmt.Errorf("--schema: %w", err)
		}
		if f.schema, err = grammar.CompileSchema(raw); err != nil {
			return f, fmt.Errorf("--schema %s: %w", schemaPath, err)
		}
		f.json = true
	}
	return f, nil
}

// constrain sets the generation's constraint for f: a grammar.JSON limits
// each step's tokens and follows the sampled ones. Without --format or
// --schema it changes nothing.
func (f replyFormat) constrain(m *toy.Model, constraint *sample.Constraint) error {
	if !f.json {
		return nil
	}
	if m.Tokenizer == nil {
		return fmt.Errorf("--format json: %w: %v", toy.ErrNoTokenizer, m.TokenizerErr)
	}
	g, tok := grammar.NewJSON(), m.Tokenizer
	if f.schema != nil {
		g = grammar.NewJSONSchema(f.schema)
	}
	*constraint = grammar.Tokens{JSON: g, Vocab: tok}
	return nil
}
