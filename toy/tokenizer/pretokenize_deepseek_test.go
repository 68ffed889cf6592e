// pretokenize_deepseek_test.go: DeepSeek's and Falcon's splits on small
// texts worked out by hand from the expressions.
package tokenizer

import (
	"slices"
	"testing"
)

func TestSplitDeepseekByHand(t *testing.T) {
	cases := []struct {
		pre, text string
		words     []string
	}{
		// \s?[cased letters]+ keeps "caf", then \s?[!-/:-~…]+ cuts ASCII
		// from the é that neither class holds.
		{"deepseek-llm", " café", []string{" caf", "é"}},
		// [\r\n] alone, \s+$ at a word's end, \p{N}+ whole.
		{"deepseek-llm", "ab\r\nمرحبا  x 12345", []string{"ab", "\r", "\n", "مرحبا", " ", " x", " ", "12345"}},
		// \p{N} one by one; 가 is in [一-龥ࠀ-一가-퟿].
		{"deepseek-coder", "x12가!", []string{"x", "1", "2", "가", "!"}},
		// \p{N}{1,3}; " ?[\p{P}\p{S}]+" matches at the space, one character
		// before the apostrophe could take "st"; without a space "." takes
		// the ASCII letters after it; a lone mark is [\p{L}\p{M}]+.
		{"deepseek-v3", "12345 'st (x.e\u0301", []string{"123", "45", " '", "st", " (", "x", ".e", "\u0301"}},
		// Falcon: [\p{P}…`]+ first, then GPT-2's expression, then [0-9]{3}.
		{"falcon", "a`b 1234", []string{"a", "`", "b", " ", "123", "4"}},
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
