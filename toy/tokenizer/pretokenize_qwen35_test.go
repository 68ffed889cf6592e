// pretokenize_qwen35_test.go: Qwen3.5's splits beside Qwen2's on small texts
// with combining marks, worked out by hand from the two expressions.
package tokenizer

import (
	"slices"
	"strings"
	"testing"
	"unicode"
)

// words splits text with the pre-tokenizer pre.
func words(t *testing.T, pre, text string) []string {
	t.Helper()
	split, _, err := preTokenizer(pre)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	start := 0
	for _, end := range pretokenize(text, split, nil) {
		got = append(got, text[start:end])
		start = end
	}
	return got
}

// qwen2:  [^\r\n\p{L}\p{N}]?\p{L}+         |  ?[^\s\p{L}\p{N}]+[\r\n]*
// qwen35: [^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+  |  ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*
// (the contractions, \p{N} and the whitespace alternatives are the same).
// U+0301, U+0302 and U+0308 are combining accents (Mn).
func TestSplitQwen35MarksByHand(t *testing.T) {
	cases := []struct {
		text          string
		qwen2, qwen35 []string
	}{
		// Qwen2 ends "e" at the mark, which then prefixes "te" and is
		// punctuation at the end; Qwen3.5 keeps the word whole.
		{"e\u0301te\u0301", []string{"e", "\u0301te", "\u0301"}, []string{"e\u0301te\u0301"}},
		// Devanagari: न म स त द य are letters; the virama U+094D, the vowel
		// signs U+0947 U+0941 (Mn) and U+093F U+093E (Mc) are marks. In
		// Qwen2 each mark prefixes the letter after it, or stands alone
		// before a space or the end.
		{
			"नमस्ते दुनिया",
			[]string{"नमस", "\u094dत", "\u0947", " द", "\u0941न", "\u093fय", "\u093e"},
			[]string{"नमस्ते", " दुनिया"},
		},
		{"\u00c4\u0308x", []string{"\u00c4", "\u0308x"}, []string{"\u00c4\u0308x"}},
		// A space before a mark: Qwen2's " ?[^\s\p{L}\p{N}]+" takes the
		// space and the mark; in Qwen3.5 the space is the optional
		// character before [\p{L}\p{M}]+.
		{" \u0301abc", []string{" \u0301", "abc"}, []string{" \u0301abc"}},
		{"x  \u0301y", []string{"x", " ", " \u0301", "y"}, []string{"x", " ", " \u0301y"}},
		// A tab is [^\r\n\p{L}\p{N}] too, but in Qwen2 "\s+" takes it.
		{"\t\u0301", []string{"\t", "\u0301"}, []string{"\t\u0301"}},
		// The mark leaves the punctuation run in Qwen3.5.
		{"x\u0301!", []string{"x", "\u0301!"}, []string{"x\u0301", "!"}},
		{"!!\u0301", []string{"!!\u0301"}, []string{"!!", "\u0301"}},
		{"?\u0301a", []string{"?\u0301", "a"}, []string{"?\u0301a"}},
		// \p{N} is one digit a word in both; after it the mark is
		// punctuation with "!" (Qwen2) or a word of its own (Qwen3.5).
		{"3\u0301!", []string{"3", "\u0301!"}, []string{"3", "\u0301", "!"}},
		// Contractions come first in both: "'t" before "e" + mark, "'M"
		// before a lone mark (the same in both). "'" + mark is no
		// contraction: Qwen2 makes it punctuation, Qwen3.5 the optional
		// character before the mark and "s".
		{"don'te\u0301", []string{"don", "'t", "e", "\u0301"}, []string{"don", "'t", "e\u0301"}},
		{"I'M\u0301", []string{"I", "'M", "\u0301"}, []string{"I", "'M", "\u0301"}},
		{"'\u0301s", []string{"'\u0301", "s"}, []string{"'\u0301s"}},
		// [\r\n]* after Qwen2's punctuation run takes the newline; in
		// Qwen3.5 "\s*[\r\n]+" does, and a newline never prefixes letters.
		{"a\u0301\n\u0302b", []string{"a", "\u0301\n", "\u0302b"}, []string{"a\u0301", "\n", "\u0302b"}},
	}
	for _, c := range cases {
		if got := words(t, "qwen2", c.text); !slices.Equal(got, c.qwen2) {
			t.Errorf("qwen2 %q: %q, want %q", c.text, got, c.qwen2)
		}
		if got := words(t, "qwen35", c.text); !slices.Equal(got, c.qwen35) {
			t.Errorf("qwen35 %q: %q, want %q", c.text, got, c.qwen35)
		}
	}
}

// TestSplitQwen35NoMarksIsQwen2: the expressions differ only in \p{M}, so on
// text without combining marks the words are Qwen2's.
func TestSplitQwen35NoMarksIsQwen2(t *testing.T) {
	texts := []string{
		"Hello, world! I'm here.\n\n  12345 DON'T\tstop  ",
		"  leading\r\n\r\ntrailing   ",
		"日本語のテキスト、です。 ١٢٣ and ½",
		"naïve café — 3.14 x!!\n\ny",
		"\u00a0\u3000a\u2009b 😀😃 \u200d",
	}
	for _, x := range loadGolden(t).Texts {
		texts = append(texts, x.bytes()) // invalid UTF-8 too
	}
	compared := 0
	for _, s := range texts {
		if strings.IndexFunc(s, unicode.IsMark) >= 0 {
			continue
		}
		compared++
		if a, b := words(t, "qwen2", s), words(t, "qwen35", s); !slices.Equal(a, b) {
			t.Errorf("%q: qwen35 %q, qwen2 %q", s, b, a)
		}
	}
	if compared < 50 {
		t.Errorf("compared %d texts, want at least 50", compared)
	}
}
