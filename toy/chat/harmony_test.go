package chat

import (
	"strings"
	"testing"
)

// TestHarmony: a reply split into tokens (control tokens by id, text by
// piece) routes each piece by its message's header.
func TestHarmony(t *testing.T) {
	names := map[string]int32{"<|start|>": 1, "<|end|>": 2, "<|message|>": 3, "<|channel|>": 4, "<|constrain|>": 5}
	ids, ok := FindHarmonyTokens(func(s string) int32 {
		if id, ok := names[s]; ok {
			return id
		}
		return -1
	})
	if !ok {
		t.Fatal("tokens not found")
	}
	if _, ok := FindHarmonyTokens(func(string) int32 { return -1 }); ok {
		t.Fatal("found in an empty vocabulary")
	}
	// A reply as tokens: control tokens by name, the rest text.
	run := func(reply ...string) (content string, h *Harmony) {
		h = NewHarmony(ids)
		var b strings.Builder
		for _, p := range reply {
			id, ok := names[p]
			if !ok {
				id = 100
			}
			if h.Push(id, p) == HarmonyContent && !ok {
				b.WriteString(p)
			}
		}
		h.Close()
		return b.String(), h
	}
	content, h := run("<|channel|>", "analy", "sis", "<|message|>", "Think", " hard.", "<|end|>",
		"<|start|>", "assistant", "<|channel|>", "commentary", "<|message|>", "Checking. ", "<|end|>",
		"<|start|>", "assistant", "<|channel|>", "final", "<|message|>", "Done", ".")
	if content != "Checking. Done." || h.Reasoning() != "Think hard." || len(h.Calls()) != 0 {
		t.Errorf("content %q, reasoning %q, calls %v", content, h.Reasoning(), h.Calls())
	}
	for _, reply := range [][]string{
		{"<|channel|>", "commentary to=functions.f", " ", "<|constrain|>", "json", "<|message|>", `{"a":`, ` 1}`},
		{" to=functions.f", "<|channel|>", "commentary json", "<|message|>", `{"a": 1}`, "<|end|>"},
	} {
		content, h := run(reply...)
		if c := h.Calls(); content != "" || len(c) != 1 || c[0].Name != "f" || c[0].Arguments != `{"a": 1}` {
			t.Errorf("%q: content %q, calls %+v", reply, content, c)
		}
	}
	if !MustParse("{{ '<|channel|>' }}").WritesHarmony() || MustParse("{{ x }}").WritesHarmony() {
		t.Error("WritesHarmony")
	}
}
