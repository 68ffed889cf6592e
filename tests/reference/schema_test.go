package reference

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toyml/toy/toy/grammar"
)

// schemaFile reads a schema of testdata/schema and compiles it.
func schemaFile(t *testing.T, name string) *grammar.Schema {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", "schema", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	s, err := grammar.CompileSchema(raw)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestSchemaAgainstLlamaCpp: greedy decoding under the grammar toy makes of
// a JSON schema (grammar.CompileSchema, toy's own converter) picks the
// tokens llama.cpp picks under the grammar llama.cpp's converter makes of
// it, token for token, on the schemas of testdata/schema (required and
// optional properties, enums and consts of every type, integer bounds,
// string lengths and patterns, date, time and uuid formats, $ref with
// recursion, anyOf, type lists, tuples, additionalProperties, allOf) and the
// GPT-2 and Llama vocabularies (gen_schema_goldens.sh). A reply that ends
// is a value of the schema.
func TestSchemaAgainstLlamaCpp(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("testdata", "schema", "*.golden.json"))
	if len(files) < 12 {
		t.Fatalf("%d schema goldens (run tests/reference/gen_schema_goldens.sh)", len(files))
	}
	ended, tokens := 0, 0
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".golden.json")
		t.Run(name, func(t *testing.T) {
			model, schema := name[:strings.Index(name, "-f32-")+4], name[strings.Index(name, "-f32-")+5:]
			g, m := loadGrammarGolden(t, file, model)
			goldenGBNF(t, file) // llama.cpp's grammar of the schema, unchanged
			s := schemaFile(t, schema)
			gram := grammar.NewJSONSchema(s)
			ids := decodeUnderGrammar(t, m, g, gram, func() grammar.State { return grammar.NewJSONSchema(s) })
			tokens += len(ids)
			if m.Tokenizer.IsEOG(ids[len(ids)-1]) {
				ended++
				if !gram.Complete() || !json.Valid([]byte(g.Text)) {
					t.Errorf("the reply ended at %q, not a whole value", g.Text)
				}
			}
			t.Logf("%d ids equal to llama.cpp's: %.60q…", len(ids), g.Text)
		})
	}
	if ended < 6 {
		t.Errorf("%d replies reached the end of their schema: the goldens exercise too little", ended)
	}
	t.Logf("%d goldens, %d tokens, %d replies ended", len(files), tokens, ended)
}

// charVocab is a vocabulary of single characters (no backslash, so no
// escapes: there toy writes a pattern's characters as JSON must and
// llama.cpp does not) and a few words, with an end token.
type charVocab []string

func (v charVocab) Piece(id int32) string { return v[id] }
func (v charVocab) IsEOG(id int32) bool   { return id == 0 }

// TestSchemaLanguageMatchesLlamaCpp: the texts toy's grammar of a schema
// takes are the texts llama.cpp's grammar of it takes. Random walks under
// each grammar's mask (any allowed token; half the time a closing one, so
// that walks end) make texts that the other grammar must take too, read by
// the same GBNF engine (which the GBNF gate holds to llama.cpp's). Where toy
// parts from llama.cpp on purpose the walks skip the text: a text of
// llama.cpp's that is no JSON (its pattern classes may take a bare quote),
// and an extra key that begins a listed one ("z" beside "zzz": llama.cpp
// refuses those keys, though the schema allows them).
func TestSchemaLanguageMatchesLlamaCpp(t *testing.T) {
	vocab := charVocab{"<end>"}
	for c := 0x20; c < 0x7f; c++ {
		if c != '\\' {
			vocab = append(vocab, string(rune(c)))
		}
	}
	vocab = append(vocab, "\n", "\t", "é", "null", "true", `"zzz":`, `"a":`, `"b":`, "2024-02-29", "12:30:00", "-0", "100")
	names, _ := filepath.Glob(filepath.Join("testdata", "schema", "*.llama.gbnf"))
	if len(names) < 6 {
		t.Fatalf("%d llama.cpp schema grammars", len(names))
	}
	for _, file := range names {
		name := strings.TrimSuffix(filepath.Base(file), ".llama.gbnf")
		t.Run(name, func(t *testing.T) {
			src, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			theirs, err := grammar.ParseGBNF(string(src), nil)
			if err != nil {
				t.Fatal(err)
			}
			ours := schemaFile(t, name)
			mine := func() *grammar.Matcher { return grammar.NewJSONSchema(ours) }
			llama := func() *grammar.Matcher { return grammar.NewMatcher(theirs) }
			r := rand.New(rand.NewPCG(3, uint64(len(name))))
			for _, dir := range []struct {
				from, to func() *grammar.Matcher
				what     string
			}{{llama, mine, "llama.cpp's text refused by toy"}, {mine, llama, "toy's text refused by llama.cpp"}} {
				checked := 0
				for range 300 {
					text, ok := walkGrammar(r, dir.from(), vocab)
					if !ok || dir.what[0] == 'l' && !json.Valid([]byte(text)) || dir.what[0] == 't' && beginsListedKey(text) {
						continue
					}
					checked++
					g := dir.to()
					if err := g.Accept(text); err != nil || !g.Complete() {
						t.Fatalf("%s: %q", dir.what, text)
					}
				}
				if checked < 100 {
					t.Errorf("only %d texts checked (%s)", checked, dir.what)
				}
				t.Logf("%d texts, none %s", checked, dir.what)
			}
		})
	}
}

// walkGrammar draws a text under g's mask, up to 600 tokens; false when
// it did not end.
func walkGrammar(r *rand.Rand, g *grammar.Matcher, vocab charVocab) (string, bool) {
	var text strings.Builder
	for range 600 {
		logits := make([]float32, len(vocab))
		g.Mask(logits, vocab)
		var allowed []int32
		for id, l := range logits {
			if !math.IsInf(float64(l), -1) {
				allowed = append(allowed, int32(id))
			}
		}
		if len(allowed) == 0 {
			return "", false
		}
		id := allowed[r.IntN(len(allowed))]
		if r.IntN(2) == 0 {
			for _, a := range allowed {
				if p := vocab[a]; a == 0 || p == `"` || p == "}" || p == "]" {
					id = a
					break
				}
			}
		}
		if vocab.IsEOG(id) {
			return text.String(), true
		}
		if err := g.AcceptToken(id, vocab); err != nil {
			panic(err)
		}
		text.WriteString(vocab[id])
	}
	return "", false
}

// beginsListedKey reports whether text has a key "z" or "zz", which
// extra.json's meta allows beside its "zzz" and llama.cpp's grammar
// refuses.
func beginsListedKey(text string) bool {
	return strings.Contains(text, `"z":`) || strings.Contains(text, `"zz":`)
}
