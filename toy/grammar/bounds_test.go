package grammar_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/toyml/toy/toy/grammar"
)

// nestedSchema is an object schema nested depth levels deep.
func nestedSchema(depth int) string {
	var b strings.Builder
	for range depth {
		b.WriteString(`{"type": "object", "properties": {"a": `)
	}
	b.WriteString(`{"type": "string"}`)
	b.WriteString(strings.Repeat("}}", depth))
	return b.String()
}

// enumSchema is a string enum of n values, each pad bytes or more.
func enumSchema(n, pad int) string {
	vals := make([]string, n)
	for i := range vals {
		vals[i] = fmt.Sprintf(`"%0*d"`, pad, i)
	}
	return `{"enum": [` + strings.Join(vals, ",") + `]}`
}

// TestSchemaBounds: schemas past the bounds are refused with an error
// naming the bound, before the work they would cost; those within compile.
func TestSchemaBounds(t *testing.T) {
	big := nestedSchema(2500) // ~100 KB
	if len(big) < 100_000 {
		t.Fatalf("the nested schema is only %d bytes", len(big))
	}
	for _, c := range []struct {
		name, schema, bound string
	}{
		{"100 KB nested", big, "MaxSchemaBytes"},
		{"nested past the depth", nestedSchema(grammar.MaxSchemaDepth), "MaxSchemaDepth"},
		{"689 KB enum", enumSchema(60000, 9), "MaxSchemaBytes"},
		{"enum of many values", `{"enum": [` + strings.TrimSuffix(strings.Repeat("1,", grammar.MaxEnumValues+1), ",") + `]}`, "MaxEnumValues"},
	} {
		_, err := grammar.CompileSchema([]byte(c.schema))
		if err == nil || !strings.Contains(err.Error(), c.bound) {
			t.Errorf("%s (%d bytes): %v, want an error naming %s", c.name, len(c.schema), err, c.bound)
		}
	}
	// Within the bounds: a schema nested just under the depth (each level
	// is two: the schema and its properties), an enum of the most values.
	for _, s := range []string{nestedSchema(grammar.MaxSchemaDepth/2 - 1), enumSchema(grammar.MaxEnumValues, 4),
		`{"type": "object", "properties": {"s": {"type": "string", "description": "a \"{[{[ quoted\" text"}}}`} {
		if _, err := grammar.CompileSchema([]byte(s)); err != nil {
			t.Errorf("a schema within the bounds (%d bytes): %v", len(s), err)
		}
	}
}

// TestGBNFBounds: a grammar's source, its rules and its expanded items are
// bounded, with an error naming the bound.
func TestGBNFBounds(t *testing.T) {
	huge := `root ::= "` + strings.Repeat("a", grammar.MaxGrammarBytes) + `"`
	if _, err := grammar.ParseGBNF(huge, nil); err == nil || !strings.Contains(err.Error(), "MaxGrammarBytes") {
		t.Errorf("a grammar of %d bytes: %v", len(huge), err)
	}
	// A long item repeated: its copies are written out.
	items := `root ::= "` + strings.Repeat("a", 1000) + `"{0,2000}`
	if _, err := grammar.ParseGBNF(items, nil); err == nil || !strings.Contains(err.Error(), "items") {
		t.Errorf("a long item repeated: %v, want the bound on items", err)
	}
	// Bounded repetitions make a rule per optional copy.
	rules := `root ::= ` + strings.Repeat(`"a"{0,2000} `, grammar.MaxRules/2000+1)
	if _, err := grammar.ParseGBNF(rules, nil); err == nil || !strings.Contains(err.Error(), "MaxRules") {
		t.Errorf("%d bounded repetitions: %v, want the bound on rules", grammar.MaxRules/2000+1, err)
	}
	if _, err := grammar.ParseGBNF(`root ::= "a"{0,100} [0-9]*`, nil); err != nil {
		t.Errorf("a small grammar: %v", err)
	}
}
