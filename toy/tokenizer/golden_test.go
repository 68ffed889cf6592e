// golden_test.go: ids identical to llama.cpp's on the hard text set
// (testdata/golden.json, made by tests/tokenizer/golden.mjs).
package tokenizer

import (
	"compress/gzip"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strconv"
	"testing"
)

type goldenText struct {
	Name   string  `json:"name"`
	Text   *string `json:"text"`
	Base64 string  `json:"base64"`
}

// bytes is the text's raw bytes.
func (g goldenText) bytes() string {
	if g.Text != nil {
		return *g.Text
	}
	b, err := base64.StdEncoding.DecodeString(g.Base64)
	if err != nil {
		panic(err)
	}
	return string(b)
}

type golden struct {
	Configs []struct{ Name, Vocab, Pre string } `json:"configs"`
	Texts   []goldenText                        `json:"texts"`
	Bench   map[string]struct {
		Tokens int    `json:"tokens"`
		SHA256 string `json:"sha256"`
	} `json:"bench"`
	Cases []struct {
		Config  string  `json:"config"`
		Text    string  `json:"text"`
		Special bool    `json:"special"`
		IDs     []int32 `json:"ids"`
		HF      []int32 `json:"hf"`
		Decoded string  `json:"decoded"`
	} `json:"cases"`
}

func loadGolden(t testing.TB) *golden {
	t.Helper()
	b, err := os.ReadFile("testdata/golden.json")
	if err != nil {
		t.Fatal(err)
	}
	var g golden
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatal(err)
	}
	return &g
}

// goldenTokenizers builds the tokenizer of each golden config.
func goldenTokenizers(t testing.TB, g *golden) map[string]*Tokenizer {
	toks := map[string]*Tokenizer{}
	for _, c := range g.Configs {
		toks[c.Name] = newTokenizer(t, c.Vocab, c.Pre)
	}
	return toks
}

func TestGoldenLlamaCpp(t *testing.T) {
	g := loadGolden(t)
	toks := goldenTokenizers(t, g)
	texts := map[string]string{}
	for _, x := range g.Texts {
		texts[x.Name] = x.bytes()
	}
	for _, c := range g.Cases {
		name := fmt.Sprintf("%s/%s/special=%v", c.Config, c.Text, c.Special)
		tok := toks[c.Config]
		got := tok.Encode(texts[c.Text], EncodeOptions{ParseSpecial: c.Special})
		if !slices.Equal(got, c.IDs) {
			t.Errorf("%s: ids differ from llama.cpp\n text  %q\n got   %v\n want  %v", name, texts[c.Text], got, c.IDs)
			continue
		}
		dec := tok.Decode(c.IDs)
		if cleanSpacesConfigs[c.Config] {
			dec = cleanSpaces(dec)
		}
		if dec != c.Decoded {
			t.Errorf("%s: Decode differs from llama.cpp's detokenize\n got  %q\n want %q", name, dec, c.Decoded)
		}
	}
}

// TestGoldenRandom: llama.cpp's ids for 300 random texts of hard pieces
// (testdata/random.json.gz), with and without special parsing.
func TestGoldenRandom(t *testing.T) {
	g := loadGolden(t)
	toks := goldenTokenizers(t, g)
	f, err := os.Open("testdata/random.json.gz")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var r struct {
		Texts []string `json:"texts"`
		Cases []struct {
			Config  string  `json:"config"`
			Text    int     `json:"text"`
			Special bool    `json:"special"`
			IDs     []int32 `json:"ids"`
		} `json:"cases"`
	}
	if err := json.NewDecoder(zr).Decode(&r); err != nil {
		t.Fatal(err)
	}
	failed := 0
	for _, c := range r.Cases {
		s := r.Texts[c.Text]
		if got := toks[c.Config].Encode(s, EncodeOptions{ParseSpecial: c.Special}); !slices.Equal(got, c.IDs) {
			if failed++; failed <= 10 {
				t.Errorf("%s/random %d/special=%v: ids differ from llama.cpp\n text %q\n got  %v\n want %v", c.Config, c.Text, c.Special, s, got, c.IDs)
			}
		}
	}
	if failed > 0 {
		t.Errorf("%d of %d random cases differ", failed, len(r.Cases))
	}
}

// TestGoldenBenchText: the ids of the ~1 MB benchmark text hash to what
// llama.cpp's do.
func TestGoldenBenchText(t *testing.T) {
	if testing.Short() {
		t.Skip("1 MB per tokenizer")
	}
	g := loadGolden(t)
	toks := goldenTokenizers(t, g)
	text := benchText(t)
	for name, want := range g.Bench {
		ids := toks[name].Encode(text, EncodeOptions{})
		b := make([]byte, 0, 7*len(ids))
		for i, id := range ids {
			if i > 0 {
				b = append(b, ',')
			}
			b = strconv.AppendInt(b, int64(id), 10)
		}
		sum := sha256.Sum256(b)
		if len(ids) != want.Tokens || hex.EncodeToString(sum[:]) != want.SHA256 {
			t.Errorf("%s: %d tokens, sha256 %x; llama.cpp: %d tokens, sha256 %s", name, len(ids), sum, want.Tokens, want.SHA256)
		}
	}
}

// cleanSpacesConfigs are the golden configs whose pre-tokenizer makes
// llama.cpp's detokenize "clean up" spaces (gpt-2, llama-bpe, default,
// falcon; not qwen2, smollm, the deepseek ones, tekken or gpt-4o). Decode
// keeps the text as it was, so the test applies the clean-up to Decode's
// result to show that it is the only difference.
var cleanSpacesConfigs = map[string]bool{"gpt2": true, "gpt2-default": true, "gpt2-falcon": true, "llama3": true}

// cleanSpaces is llama.cpp's lossy clean-up of decoded text: " ?", " !", " .",
// " ," lose the space; " ' " loses both spaces; " 's", " 'm", " 're", " 've"
// lose the space.
func cleanSpaces(s string) string {
	b := []byte(s)
	pass := func(f func(b []byte, i int, out []byte) []byte) {
		if len(b) == 0 {
			return
		}
		out := []byte{b[0]}
		for i := 1; i < len(b); i++ {
			out = f(b, i, out)
		}
		b = out
	}
	// " ?", " !", " .", " ,"
	pass(func(b []byte, i int, out []byte) []byte {
		if b[i-1] == ' ' && (b[i] == '?' || b[i] == '!' || b[i] == '.' || b[i] == ',') {
			out = out[:len(out)-1]
		}
		return append(out, b[i])
	})
	// " ' ": remove both spaces
	{
		if len(b) > 0 {
			out := []byte{b[0]}
			for i := 1; i < len(b); i++ {
				x := b[i]
				if x == '\'' && i+1 < len(b) && b[i-1] == ' ' && b[i+1] == ' ' {
					out = out[:len(out)-1]
					out = append(out, x)
					i++ // the next space is dropped
					continue
				}
				out = append(out, x)
			}
			b = out
		}
	}
	// " 's", " 'm", " 're", " 've"
	pass(func(b []byte, i int, out []byte) []byte {
		if b[i-1] == ' ' && b[i] == '\'' && i+1 < len(b) {
			x1 := b[i+1]
			if x1 == 's' || x1 == 'm' || (i+2 < len(b) && (x1 == 'r' || x1 == 'v') && b[i+2] == 'e') {
				out = out[:len(out)-1]
			}
		}
		return append(out, b[i])
	})
	return string(b)
}
