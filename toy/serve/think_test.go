package serve

import (
	"math/rand/v2"
	"testing"
)

// thinkSplit gives the same reasoning and content whatever the pieces the
// reply comes in, bytes included.
func TestThinkSplit(t *testing.T) {
	for _, c := range []struct {
		reply              string
		open               bool
		reasoning, content string
	}{
		{"<think>\nstep 1\n</think>\n\nThe answer is 4.", false, "step 1", "The answer is 4."},
		{"<think>\n\n</think>\n\n<tool_call>", false, "", "<tool_call>"},
		{"<think> a  \n b \n</think>c", false, "a  \n b", "c"},
		{"<think> unclosed \n", false, "unclosed", ""},
		{"  <think>a</think>b", false, "a", "b"},
		{"no reasoning here", false, "", "no reasoning here"},
		{"\n\nplain", false, "", "\n\nplain"},
		{"a <think>not at the start</think>", false, "", "a <think>not at the start</think>"},
		{"reasoning first</think>\n answer", true, "reasoning first", "answer"},
		{"<think>unfinished </thi", false, "unfinished </thi", ""},
		{"reasoning first \n</think>\n answer", true, "reasoning first", "answer"},
		{"<thin", false, "", "<thin"},
		{"<think></think>", false, "", ""},
		{"<think>x</think>   ", false, "x", ""},
		{"<think>a</think>b</think>c", false, "a", "b</think>c"},
	} {
		r := rand.New(rand.NewPCG(1, 2))
		for trial := range 20 {
			s := newThinkSplit(c.open)
			rest := c.reply
			for rest != "" {
				n := 1 + r.IntN(len(rest))
				if trial == 0 {
					n = len(rest)
				}
				s.feed(rest[:n])
				rest = rest[n:]
			}
			s.flush()
			if s.reasoning != c.reasoning || s.content != c.content {
				t.Fatalf("%q (open %v), trial %d: reasoning %q content %q, want %q %q", c.reply, c.open, trial, s.reasoning, s.content, c.reasoning, c.content)
			}
		}
	}
}
