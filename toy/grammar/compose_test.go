package grammar_test

import (
	"testing"

	"github.com/toyml/toy/toy/grammar"
)

// TestCompose: texts, schemas (each with its own $defs of the same name)
// and optional groups make one grammar.
func TestCompose(t *testing.T) {
	a := []byte(`{"$defs": {"x": {"type": "integer"}}, "type": "object", "properties": {"n": {"$ref": "#/$defs/x"}}, "required": ["n"]}`)
	b := []byte(`{"$defs": {"x": {"type": "boolean"}}, "type": "object", "properties": {"b": {"$ref": "#/$defs/x"}}, "required": ["b"]}`)
	g, err := grammar.Compose([][]grammar.Part{
		{{Text: "a("}, {Schema: a}, {Text: ")"}},
		{{Text: "b("}, {Schema: b}, {Optional: []grammar.Part{{Text: ";"}, {Expr: `[0-9]+`}}}, {Text: ")"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	for text, ok := range map[string]bool{
		`a({"n": 5})`: true, `b({"b": true})`: true, `b({"b": true};42)`: true,
		`a({"n": true})`: false, `b({"b": 5})`: false, `b({"b": true};)`: false, `c()`: false,
	} {
		m := grammar.NewMatcher(g)
		err := m.Accept(text)
		if got := err == nil && m.Complete(); got != ok {
			t.Errorf("%s: matched %v, want %v (%v)", text, got, ok, err)
		}
	}
	if _, err := grammar.Compose([][]grammar.Part{{{Schema: []byte(`{"not": {}}`)}}}); err == nil {
		t.Error("a schema grammar.Schema refuses: no error")
	}
}

// TestRemaining: the fewest characters that complete a text.
func TestRemaining(t *testing.T) {
	g, err := grammar.ParseGBNF(`root ::= "abc" [0-9]* ( "x" | "yz" ) "!"?`, nil)
	if err != nil {
		t.Fatal(err)
	}
	m := grammar.NewMatcher(g)
	for _, c := range []struct {
		text string
		want int
	}{{"", 4}, {"a", 3}, {"abc", 1}, {"abc12", 1}, {"abcy", 1}, {"abcyz", 0}, {"abcx!", 0}} {
		m := grammar.NewMatcher(g)
		if c.text != "" {
			if err := m.Accept(c.text); err != nil {
				t.Fatal(err)
			}
		}
		if got := m.Remaining(); got != c.want {
			t.Errorf("after %q: Remaining %d, want %d", c.text, got, c.want)
		}
	}
	v := pieceList{"<eos>", "a", "abc", "x", "1"}
	if n, ok := m.RemainingAfter(2, v); !ok || n != 1 {
		t.Errorf("RemainingAfter(abc) = %d, %v; want 1, true", n, ok)
	}
	if _, ok := m.RemainingAfter(3, v); ok {
		t.Error("RemainingAfter(x) at the start: taken")
	}
	if _, ok := m.RemainingAfter(0, v); ok {
		t.Error("an end of generation before the text is complete: taken")
	}
}

// pieceList is a vocabulary of the given pieces, token 0 ending generation.
type pieceList []string

func (v pieceList) Piece(id int32) string { return v[id] }
func (v pieceList) IsEOG(id int32) bool   { return id == 0 }
