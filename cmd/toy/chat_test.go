package main

import (
	"io"
	"strings"
	"testing"

	"github.com/toyml/toy/toy"
	"github.com/toyml/toy/toy/chat"
)

// Two turns with the default model (no chat template: turns joined one per
// line), greedy: the second reply, made over the cache the first turn left,
// equals the reply a fresh model gives to the whole conversation.
func TestChatReusesTheCache(t *testing.T) {
	defer func(r io.Reader) { chatInput = r }(chatInput)
	chatWith := func(input string) string {
		chatInput = strings.NewReader(input)
		status, out, errs := runToy("chat", "--n", "8", "--temperature", "0")
		if status != 0 {
			t.Fatalf("status %d: %s", status, errs)
		}
		return out
	}
	first := chatWith("func main() {\n")
	both := chatWith("func main() {\n\nfmt.Println(x)\n") // the blank line is no turn
	second, ok := strings.CutPrefix(both, first)
	if !ok || strings.TrimSpace(second) == "" {
		t.Fatalf("two turns printed %q; the first alone %q", both, first)
	}
	replies := []string{strings.TrimSuffix(first, "\n"), strings.TrimSuffix(second, "\n")}

	m, err := toy.LoadDefault()
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	history := []chat.Message{{Role: "user", Content: "func main() {"}, {Role: "assistant", Content: replies[0]},
		{Role: "user", Content: "fmt.Println(x)"}}
	ids, err := m.EncodeChat(nil, history, m.ChatOptions(true))
	if err != nil {
		t.Fatal(err)
	}
	got, err := m.Generate(ids, toy.GenerateOptions{MaxTokens: 8, Stop: m.Tokenizer.IsEOG})
	if err != nil {
		t.Fatal(err)
	}
	want, _ := m.Decode(got)
	if strings.TrimSpace(want) != replies[1] {
		t.Errorf("second reply %q, a fresh model says %q", replies[1], strings.TrimSpace(want))
	}
}

func TestChatBadFlags(t *testing.T) {
	if status, _, errs := runToy("chat", "--n", "0"); status != 2 || !strings.Contains(errs, "--n") {
		t.Errorf("--n 0: status %d, %q", status, errs)
	}
}
