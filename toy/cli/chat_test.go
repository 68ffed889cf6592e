package cli

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/creack/pty"
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

// On the built-in model (a context of 128 tokens) with the default --n
// 1024, a chat of many turns keeps going: each reply is bounded by what is
// left of the context, the oldest turns are dropped when it fills (said on
// stderr), a turn too long for the context alone is refused and the chat goes
// on, and end of input ends it with status 0.
func TestChatKeepsGoing(t *testing.T) {
	turns := []string{"func main() {", "for i := 0; i < 10; i++ {", "if err != nil {", "return err",
		strings.Repeat("x := y + z; ", 60), "fmt.Println(x)", "}"}
	cmd := toyCmd("chat", "--seed", "1")
	cmd.Stdin = strings.NewReader(strings.Join(turns, "\n") + "\n")
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	errs := stderr.String()
	if n := strings.Count(errs, ">>> "); n != len(turns)+1 {
		t.Errorf("%d prompts for %d turns:\n%s", n, len(turns), errs)
	}
	for _, want := range []string{"turn(s) are left out", "say it in fewer words"} {
		if !strings.Contains(errs, want) {
			t.Errorf("stderr does not say %q:\n%s", want, errs)
		}
	}
	if strings.TrimSpace(stdout.String()) == "" {
		t.Error("no replies")
	}
}

// On a terminal (stdout and stderr the same one) each reply is printed once;
// it was streamed to stderr and printed again on stdout.
func TestChatOnTerminalPrintsOnce(t *testing.T) {
	args := []string{"chat", "--n", "12", "--temperature", "0"}
	input := "func main() {\n"
	piped := toyCmd(args...)
	piped.Stdin = strings.NewReader(input)
	out, err := piped.Output()
	reply := strings.TrimSuffix(string(out), "\n") // one reply, perhaps of several lines
	if err != nil || len(reply) < 4 {
		t.Fatalf("piped: %v, reply %q", err, reply)
	}

	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Skip("no pseudo-terminal:", err)
	}
	defer ptmx.Close()
	cmd := toyCmd(args...)
	cmd.Stdin = strings.NewReader(input)
	cmd.Stdout, cmd.Stderr = tty, tty
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	tty.Close() // the child holds it; the reader sees EOF (EIO) when it exits
	var screen bytes.Buffer
	io.Copy(&screen, ptmx)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("%v: %s", err, screen.String())
	}
	text := strings.ReplaceAll(screen.String(), "\r\n", "\n")
	if n := strings.Count(text, reply); n != 1 {
		t.Errorf("the reply %q shows %d times on the terminal:\n%s", reply, n, text)
	}
}
