// --format json: replies kept to a JSON object.

package main

import (
	"fmt"

	"github.com/toyml/toy/toy"
	"github.com/toyml/toy/toy/grammar"
)

// formatFlagHelp is --format's usage line.
const formatFlagHelp = `"json": keep the reply a JSON object (llama.cpp's json grammar, Ollama's format "json")`

// checkFormat refuses a --format other than "" and "json" before anything
// is loaded.
func checkFormat(format string) error {
	if format != "" && format != "json" {
		return fmt.Errorf("%w: --format %q: want json", errUsage, format)
	}
	return nil
}

// constrainFormat sets up --format on the generation's hooks: for "json" a
// grammar.JSON masks each step's logits and follows the sampled tokens,
// ahead of the onToken the caller had. "" changes nothing.
func constrainFormat(format string, m *toy.Model, constrain *func([]float32), onToken *func(int32)) error {
	if err := checkFormat(format); err != nil || format == "" {
		return err
	}
	if m.Tokenizer == nil {
		return fmt.Errorf("--format json: %w: %v", toy.ErrNoTokenizer, m.TokenizerErr)
	}
	g, tok := grammar.NewJSON(), m.Tokenizer
	*constrain = func(logits []float32) { g.Mask(logits, tok) }
	next := *onToken
	*onToken = func(id int32) {
		if !tok.IsEOG(id) {
			g.Accept(tok.Piece(id)) // the mask let only accepted tokens through
		}
		if next != nil {
			next(id)
		}
	}
	return nil
}
