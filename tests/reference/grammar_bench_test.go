package reference

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/toyml/toy/internal/testmodel"
	"github.com/toyml/toy/toy"
	"github.com/toyml/toy/toy/grammar"
	"github.com/toyml/toy/toy/tokenizer"
)

// gpt2Vocab loads the gpt2-f32 gate model's tokenizer: GPT-2's 50,257
// tokens.
func gpt2Vocab(b *testing.B) *tokenizer.Tokenizer {
	b.Helper()
	for _, s := range testmodel.Specs() {
		if s.Name != "gpt2-f32" {
			continue
		}
		path := filepath.Join(b.TempDir(), s.File())
		if _, err := testmodel.Write(s, path); err != nil {
			b.Fatal(err)
		}
		m, err := toy.Load(path)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { m.Close() })
		return m.Tokenizer
	}
	b.Fatal("no gpt2-f32 gate model")
	return nil
}

// BenchmarkGrammarMask: one step's mask over GPT-2's vocabulary, JSON's
// automaton against the same grammar in GBNF (grammar.Matcher), where a
// value starts and inside a string; and a GBNF grammar of free text.
//
//	go test ./tests/reference -run X -bench GrammarMask
func BenchmarkGrammarMask(b *testing.B) {
	tok := gpt2Vocab(b)
	src, err := os.ReadFile(filepath.Join("testdata", "json", "json.gbnf"))
	if err != nil {
		b.Fatal(err)
	}
	jsonGBNF, err := grammar.ParseGBNF(string(src), nil)
	if err != nil {
		b.Fatal(err)
	}
	prose, err := grammar.ParseGBNF(`root ::= sentence{1,3}
sentence ::= [A-Z] [a-z ,']{0,60} [.!?] " "?`, nil)
	if err != nil {
		b.Fatal(err)
	}
	logits := make([]float32, tok.VocabSize())
	for _, c := range []struct {
		name  string
		state func() grammar.State
		text  string
	}{
		{"json/value", func() grammar.State { return grammar.NewJSON() }, `{"a": [1, `},
		{"json/string", func() grammar.State { return grammar.NewJSON() }, `{"a": "hello wor`},
		{"gbnf-json/value", func() grammar.State { return grammar.NewMatcher(jsonGBNF) }, `{"a": [1, `},
		{"gbnf-json/string", func() grammar.State { return grammar.NewMatcher(jsonGBNF) }, `{"a": "hello wor`},
		{"gbnf-prose", func() grammar.State { return grammar.NewMatcher(prose) }, `The cat sat on the m`},
	} {
		b.Run(c.name, func(b *testing.B) {
			s := c.state()
			var err error
			switch g := s.(type) {
			case *grammar.JSON:
				err = g.Accept(c.text)
			case *grammar.Matcher:
				err = g.Accept(c.text)
			}
			if err != nil {
				b.Fatal(err)
			}
			s.Mask(logits, tok) // the first mask sorts the vocabulary (once a reply)
			for b.Loop() {
				s.Mask(logits, tok)
			}
		})
	}
}
