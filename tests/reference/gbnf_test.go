package reference

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toyml/toy/toy/grammar"
)

// gbnfGolden is what json.mjs --gbnf adds to a golden: the grammar file
// and its SHA-256.
type gbnfGolden struct {
	GBNF       string `json:"gbnf"`
	GBNFSHA256 string `json:"gbnf_sha256"`
}

// TestGBNFAgainstLlamaCpp: greedy decoding under grammar.Matcher's mask
// picks the tokens llama.cpp's grammar sampler picks with the same GBNF
// grammar, token for token, on the grammars of testdata/gbnf (recursion,
// classes, negation, any character, repetition bounds, escapes, non-ASCII
// characters split over tokens) and the GPT-2 and Llama vocabularies
// (gen_gbnf_goldens.sh). A reply that ends completes the grammar.
func TestGBNFAgainstLlamaCpp(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("testdata", "gbnf", "*.golden.json"))
	if len(files) < 10 {
		t.Fatalf("%d GBNF goldens (run tests/reference/gen_gbnf_goldens.sh)", len(files))
	}
	ended, tokens := 0, 0
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".golden.json")
		t.Run(name, func(t *testing.T) {
			i := strings.LastIndexByte(name, '-')
			g, m := loadGrammarGolden(t, file, name[:i])
			gbnf, err := grammar.ParseGBNF(goldenGBNF(t, file), m.Tokenizer)
			if err != nil {
				t.Fatal(err)
			}
			gram := grammar.NewMatcher(gbnf)
			ids := decodeUnderGrammar(t, m, g, gram, func() grammar.State { return grammar.NewMatcher(gbnf) })
			tokens += len(ids)
			if m.Tokenizer.IsEOG(ids[len(ids)-1]) {
				ended++
				if !gram.Complete() {
					t.Errorf("the reply ended at %q, incomplete", g.Text)
				}
			}
			t.Logf("%d ids equal to llama.cpp's: %.60q…", len(ids), g.Text)
		})
	}
	if ended < 3 {
		t.Errorf("%d replies reached the end of their grammar: the goldens exercise too little", ended)
	}
	t.Logf("%d goldens, %d tokens, %d replies ended", len(files), tokens, ended)
}

// goldenGBNF reads the grammar a golden of json.mjs --gbnf was made with,
// beside the golden, checking that it is unchanged since.
func goldenGBNF(t *testing.T, file string) string {
	t.Helper()
	var extra gbnfGolden
	readJSON(t, file, &extra)
	src, err := os.ReadFile(filepath.Join(filepath.Dir(file), extra.GBNF))
	if err != nil {
		t.Fatal(err)
	}
	if sum := sha256.Sum256(src); hex.EncodeToString(sum[:]) != extra.GBNFSHA256 {
		t.Fatalf("%s changed since the golden was made", extra.GBNF)
	}
	return string(src)
}

func readJSON(t *testing.T, file string, v any) {
	t.Helper()
	b, err := os.ReadFile(file)
	if err == nil {
		err = json.Unmarshal(b, v)
	}
	if err != nil {
		t.Fatal(err)
	}
}
