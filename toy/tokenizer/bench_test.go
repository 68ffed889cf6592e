// bench_test.go: encoding speed on ~1 MB of mixed text. tests/tokenizer/bench.mjs
// runs this beside llama.cpp's tokenizer and js-tiktoken on the same text.
package tokenizer

import (
	"fmt"
	"testing"
)

// benchText is the valid texts of the golden set, each followed by "\n", then
// "Round K.\n", repeated until it is at least 1,000,000 bytes (bench.mjs
// builds the same text).
func benchText(t testing.TB) string {
	g := loadGolden(t)
	var parts []string
	for _, x := range g.Texts {
		if x.Text != nil {
			parts = append(parts, *x.Text)
		}
	}
	var b []byte
	for k := 0; len(b) < 1_000_000; k++ {
		for _, p := range parts {
			b = append(b, p...)
			b = append(b, '\n')
		}
		b = fmt.Appendf(b, "Round %d.\n", k)
	}
	return string(b)
}

func BenchmarkEncode(b *testing.B) {
	text := benchText(b)
	for _, c := range []struct{ name, vocab, pre string }{
		{"gpt2", "gpt2", ""}, {"llama3", "llama3", ""}, {"qwen2", "gpt2", "qwen2"}, {"llama2", "llama2", ""},
	} {
		b.Run(c.name, func(b *testing.B) {
			tok := newTokenizer(b, c.vocab, c.pre)
			b.SetBytes(int64(len(text)))
			var n int
			for b.Loop() {
				n = len(tok.Encode(text, EncodeOptions{}))
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "tokens/s")
			b.ReportMetric(float64(n), "tokens")
		})
	}
}
