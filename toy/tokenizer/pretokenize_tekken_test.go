// pretokenize_tekken_test.go: Tekken's and GPT-4o's splits on small texts
// worked out by hand from the expressions llama.cpp runs.
package tokenizer

import (
	"slices"
	"testing"
)

func TestSplitCasedByHand(t *testing.T) {
	cases := []struct {
		pre, text string
		words     []string
	}{
		// upper* lower+: "Case" starts at its capital, " HTTPServer" keeps
		// the upper run before "erver"; upper+ alone for " ALLCAPS".
		{"tekken", "camelCase HTTPServer ALLCAPS", []string{"camel", "Case", " HTTPServer", " ALLCAPS"}},
		// A non-ASCII letter is upper and lower: upper* gives À back to
		// lower+, so B (A-Z only) is a word of its own; " ÉTÉ" ends with É.
		{"tekken", "ÀB xÀB ÉTÉ", []string{"À", "B", " xÀ", "B", " ÉTÉ"}},
		// A mark is not \p{L}: it ends "e" and prefixes "Té".
		{"tekken", "e\u0301Té", []string{"e", "\u0301Té"}},
		// \p{N} one digit a word; [\r\n/]* after punctuation.
		{"tekken", "1234 a!/\n/b", []string{"1", "2", "3", "4", " a", "!/\n/", "b"}},
		// No contractions in Tekken: the apostrophe prefixes the letters.
		{"tekken", "DON'T you'Re", []string{"DON", "'T", " you", "'Re"}},
		// \p{N}{1,3}; a contraction in either case after the letters.
		{"gpt-4o", "12345 DON'T you'Re I'M", []string{"123", "45", " DON'T", " you'Re", " I'M"}},
		// The contraction does not take "'y", which is X then letters; after
		// a space, " ?[^\s\p{L}\p{N}]+" takes " '" (X is one character).
		{"gpt-4o", "É's x'y 's", []string{"É's", " x", "'y", " '", "s"}},
		// X is not \r or \n: a newline before letters is a word of its own
		// (GPT-2's and Llama 3's merges never join them, so only the words
		// show it).
		{"tekken", "js\nconsole", []string{"js", "\n", "console"}},
		// Whitespace as Llama 3's: \s*[\r\n]+, then \s+(?!\S).
		{"gpt-4o", "a \n  b", []string{"a", " \n", " ", " b"}},
	}
	for _, c := range cases {
		split, _, err := preTokenizer(c.pre)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		start := 0
		for _, end := range pretokenize(c.text, split, nil) {
			got = append(got, c.text[start:end])
			start = end
		}
		if !slices.Equal(got, c.words) {
			t.Errorf("%s %q: %q, want %q", c.pre, c.text, got, c.words)
		}
	}
}
