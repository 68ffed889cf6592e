package cli

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toyml/toy/toy"
	"github.com/toyml/toy/toy/chat"
	"github.com/toyml/toy/toy/defaultmodel"
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

// With --draft (the default model drafting for itself, one draft session
// over the whole chat), three sampled turns are the turns without it.
func TestChatDraft(t *testing.T) {
	defer func(r io.Reader) { chatInput = r }(chatInput)
	draft := filepath.Join(t.TempDir(), "draft.gguf")
	if err := os.WriteFile(draft, defaultmodel.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	input := "func main() {\nfmt.Println(x)\nreturn nil\n"
	var replies [2]string
	for i, extra := range [][]string{nil, {"--draft", draft, "--draft-n", "3"}} {
		chatInput = strings.NewReader(input)
		status, out, errs := runToy(append([]string{"chat", "--n", "12", "--temperature", "0.7", "--seed", "3"}, extra...)...)
		if status != 0 {
			t.Fatalf("%v: status %d: %s", extra, status, errs)
		}
		replies[i] = out
	}
	if replies[0] != replies[1] || strings.TrimSpace(replies[0]) == "" {
		t.Errorf("with a draft:\n%s\nwithout:\n%s", replies[1], replies[0])
	}
}

func TestChatBadFlags(t *testing.T) {
	if status, _, errs := runToy("chat", "--n", "0"); status != 2 || !strings.Contains(errs, "--n") {
		t.Errorf("--n 0: status %d, %q", status, errs)
	}
}
