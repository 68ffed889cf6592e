// vocab_test.go: loading the real vocabularies of tests/reference/vocab.

package tokenizer

import (
	"compress/gzip"
	"encoding/json"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// vocabJSON is the file format tests/tokenizer/vocab.mjs writes.
type vocabJSON struct {
	Model     string    `json:"model"`
	Pre       string    `json:"pre"`
	Tokens    []string  `json:"tokens"`
	Scores    []float32 `json:"scores"`
	TokenType []int32   `json:"token_type"`
	Merges    []string  `json:"merges"`
	BOS       *int32    `json:"bos"`
	EOS       *int32    `json:"eos"`
	UNK       *int32    `json:"unk"`
}

var (
	vocabMu    sync.Mutex
	vocabCache = map[string]Vocab{}
)

// loadVocab reads tests/reference/vocab/NAME.json.gz.
func loadVocab(t testing.TB, name string) Vocab {
	t.Helper()
	vocabMu.Lock()
	defer vocabMu.Unlock()
	if v, ok := vocabCache[name]; ok {
		return v
	}
	f, err := os.Open(filepath.Join("..", "..", "tests", "reference", "vocab", name+".json.gz"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var j vocabJSON
	if err := json.NewDecoder(zr).Decode(&j); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	id := func(p *int32) int32 {
		if p == nil {
			return -1
		}
		return *p
	}
	v := Vocab{Model: j.Model, Pre: j.Pre, Tokens: j.Tokens, Scores: j.Scores, Types: j.TokenType, Merges: j.Merges,
		BOS: id(j.BOS), EOS: id(j.EOS), UNK: id(j.UNK), PAD: -1}
	if v.Model == "llama" {
		v.AddSpacePrefix = true
		v.AddBOS = true
	}
	vocabCache[name] = v
	return v
}

var tokCache sync.Map // name + "/" + pre → *Tokenizer

// newTokenizer returns the tokenizer of a vocabulary, with pre overriding its
// pre-tokenizer when not empty. Tokenizers are shared between tests: do not
// change them.
func newTokenizer(t testing.TB, name, pre string) *Tokenizer {
	t.Helper()
	if tok, ok := tokCache.Load(name + "/" + pre); ok {
		return tok.(*Tokenizer)
	}
	v := loadVocab(t, name)
	if pre != "" {
		v.Pre = pre
	}
	tok, err := New(v)
	if err != nil {
		t.Fatal(err)
	}
	tokCache.Store(name+"/"+pre, tok)
	return tok
}
