package tokenizer

import (
	"strings"
	"testing"
)

func TestTrainBPE(t *testing.T) {
	text := strings.Repeat("func main() { return err } // the end\n", 50) + "ünïcode ✓ 123\n"
	v, err := TrainBPE(text, 300, "gpt-2")
	if err != nil {
		t.Fatal(err)
	}
	// The text runs out of pairs seen twice before 300 tokens: training stops there.
	if len(v.Tokens) > 300 || int(v.EOS) != len(v.Tokens)-1 || v.Tokens[v.EOS] != "<|endoftext|>" || len(v.Merges) != len(v.Tokens)-257 {
		t.Fatalf("%d tokens, %d merges, EOS %q", len(v.Tokens), len(v.Merges), v.Tokens[v.EOS])
	}
	// The first merge is the most frequent pair. In the repeated line the
	// pairs of "Ġ" (space) with a following letter abound; any of them is fine,
	// but the learned vocabulary must be usable and make common words short.
	tok, err := New(v)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{text, "func main", "never seen: ☃ \x00 \xff"} {
		ids := tok.Encode(s, EncodeOptions{})
		if got := tok.Decode(ids); got != s {
			t.Fatalf("round trip of %q gave %q", s, got)
		}
	}
	if n := len(tok.Encode(" return", EncodeOptions{})); n != 1 {
		t.Errorf("a frequent word takes %d tokens, want 1", n)
	}
	again, _ := TrainBPE(text, 300, "gpt-2")
	if strings.Join(again.Merges, "|") != strings.Join(v.Merges, "|") {
		t.Error("training twice gave different merges")
	}
	if _, err := TrainBPE(text, 100, "gpt-2"); err == nil {
		t.Error("a vocabulary smaller than the bytes accepted")
	}
}
