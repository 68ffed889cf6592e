// fuzz_test.go: encode/decode on arbitrary bytes never panics, stays in the
// vocabulary, round-trips, and the fast paths agree with the plain ones.
package tokenizer

import (
	"slices"
	"strings"
	"testing"
)

func FuzzEncodeDecode(f *testing.F) {
	g := loadGolden(f)
	for _, x := range g.Texts {
		f.Add([]byte(x.bytes()), false)
		f.Add([]byte(x.bytes()), true)
	}
	toks := goldenTokenizers(f, g)
	names := make([]string, 0, len(toks))
	for name := range toks {
		names = append(names, name)
	}
	slices.Sort(names)
	whole, err := New(loadVocab(f, "llama2"))
	if err != nil {
		f.Fatal(err)
	}
	whole.spmSplit = false
	f.Fuzz(func(t *testing.T, data []byte, special bool) {
		s := string(data)
		for _, name := range names {
			tok := toks[name]
			ids := tok.Encode(s, EncodeOptions{ParseSpecial: special})
			for _, id := range ids {
				if id < 0 || int(id) >= tok.VocabSize() {
					t.Fatalf("%s: id %d out of range", name, id)
				}
			}
			if special {
				continue // control tokens decode to nothing
			}
			lossless := tok.Model() == "gpt2" || !strings.Contains(s, spaceMarker)
			if got := tok.Decode(ids); lossless && got != s {
				t.Fatalf("%s: Decode(Encode(%q)) = %q", name, s, got)
			}
			d := tok.NewDecoder()
			var sb strings.Builder
			for _, id := range ids {
				sb.WriteString(d.Push(id))
			}
			sb.WriteString(d.Flush())
			if sb.String() != tok.Decode(ids) {
				t.Fatalf("%s: streamed %q, Decode %q", name, sb.String(), tok.Decode(ids))
			}
		}
		// Every pre-tokenizer cuts s into non-empty words that cover it.
		for _, name := range names {
			split := toks[name].splitters
			if split == nil || len(s) == 0 {
				continue
			}
			ends := pretokenize(s, split, nil)
			for i, end := range ends {
				if i > 0 && end <= ends[i-1] || end <= 0 {
					t.Fatalf("%s: %q split at %v", name, s, ends)
				}
			}
			if ends[len(ends)-1] != len(s) {
				t.Fatalf("%s: %q split at %v, not ending at %d", name, s, ends, len(s))
			}
		}
		// The quadratic merge loop and the priority queue agree.
		gpt2 := toks["gpt2"]
		start := 0
		for _, end := range pretokenize(s, gpt2.splitters, nil) {
			if w := s[start:end]; len(w) >= 2 {
				a := gpt2.wordSymbols(w)
				b := slices.Clone(a)
				gpt2.mergeShort(a)
				var q bpeQueue
				gpt2.mergeLong(b, &q)
				if !slices.Equal(symbolIDs(a), symbolIDs(b)) {
					t.Fatalf("word %q: short %v, long %v", w, symbolIDs(a), symbolIDs(b))
				}
			}
			start = end
		}
		// Cutting SentencePiece text at "▁" changes nothing.
		a := toks["llama2"].Encode(s, EncodeOptions{ParseSpecial: special})
		b := whole.Encode(s, EncodeOptions{ParseSpecial: special})
		if !slices.Equal(a, b) {
			t.Fatalf("llama2 %q: cut %v, whole %v", s, a, b)
		}
	})
}
