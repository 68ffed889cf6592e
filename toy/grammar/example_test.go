package grammar_test

import (
	"fmt"
	"math"
	"strings"

	"github.com/toyml/toy/toy/grammar"
)

// pieces is a five-token vocabulary; token 0 ends the generation.
type pieces []string

func (p pieces) Piece(id int32) string { return p[id] }
func (p pieces) IsEOG(id int32) bool   { return id == 0 }

func ExampleJSON() {
	vocab := pieces{"</s>", `{"a":`, "1", "}", "]"}
	g := grammar.NewJSON()
	for _, piece := range []string{`{"a":`, "1"} {
		if err := g.Accept(piece); err != nil {
			fmt.Println(err)
		}
	}
	logits := []float32{0, 0, 0, 0, 0}
	g.Mask(logits, vocab) // what may follow {"a":1
	for id, l := range logits {
		fmt.Printf("%q allowed: %v\n", vocab[id], !math.IsInf(float64(l), -1))
	}
	g.Accept("}")
	fmt.Println("complete:", g.Complete())
	// Output:
	// "</s>" allowed: false
	// "{\"a\":" allowed: false
	// "1" allowed: true
	// "}" allowed: true
	// "]" allowed: false
	// complete: true
}

func ExampleMatcher() {
	g, err := grammar.ParseGBNF(`
# a yes or a no, then a number of at most three digits
root ::= ("yes" | "no") " " [1-9] [0-9]{0,2}
`, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	vocab := pieces{"</s>", "yes", " 4", "2", "no"}
	m := grammar.NewMatcher(g)
	for _, piece := range []string{"yes", " 4"} {
		if err := m.Accept(piece); err != nil {
			fmt.Println(err)
		}
	}
	logits := []float32{0, 0, 0, 0, 0}
	m.Mask(logits, vocab) // what may follow "yes 4"
	for id, l := range logits {
		fmt.Printf("%q allowed: %v\n", vocab[id], !math.IsInf(float64(l), -1))
	}
	_, err = grammar.ParseGBNF(`root ::= "a" [b-`, nil)
	fmt.Println(err)
	// Output:
	// "</s>" allowed: true
	// "yes" allowed: false
	// " 4" allowed: false
	// "2" allowed: true
	// "no" allowed: false
	// grammar: line 1 col 14: unterminated character class at "[b-"
}

func ExampleCompileSchema() {
	s, err := grammar.CompileSchema([]byte(`{
		"type": "object",
		"properties": {"code": {"type": "string", "pattern": "^[A-Z]{2}\\d$"}, "n": {"type": "integer", "minimum": 1, "maximum": 12}},
		"required": ["code"]
	}`))
	if err != nil {
		panic(err)
	}
	for _, text := range []string{`{"code": "AB7", "n": 12}`, `{"code": "AB7"}`, `{"code": "ab7"}`, `{"n": 3, "code": "AB7"}`, `{"code": "AB7", "n": 13}`} {
		g := grammar.NewJSONSchema(s)
		fmt.Println(text, g.Accept(text) == nil && g.Complete())
	}
	fmt.Print(strings.SplitAfter(s.GBNF(), "\n")[0])
	// Output:
	// {"code": "AB7", "n": 12} true
	// {"code": "AB7"} true
	// {"code": "ab7"} false
	// {"n": 3, "code": "AB7"} false
	// {"code": "AB7", "n": 13} false
	// root ::= "{" space root-code-kv root-rest-0 space "}"
}
