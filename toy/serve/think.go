// think.go: a reply's reasoning, the text between <think> and </think> at
// its start (DeepSeek-R1, Qwen3, SmolLM3, EXAONE Deep …), apart from its
// content: OpenAI chat's message.reasoning_content (llama.cpp's
// reasoning_format "deepseek", its default) and Ollama's message.thinking.

package serve

import "strings"

// Reasoning's tags.
const (
	thinkOpen  = "<think>"
	thinkClose = "</think>"
)

// thinkSplit splits a reply streamed in pieces into reasoning and content:
// a reply that starts with <think> (after blanks) reasons until </think>;
// one whose prompt ended with <think> (the template opened it) reasons from
// its first byte. The reasoning loses its blanks at both ends and the
// content after </think> its leading ones, as llama.cpp strips them. Text
// that may still become a tag or trailing blanks is held back until it is
// known.
type thinkSplit struct {
	state     int    // thinkStart, thinkIn or thinkOut
	held      string // text not yet judged
	trim      bool   // the content's leading blanks, after </think>, are still to drop
	reasoning string // everything judged reasoning so far
	content   string // everything judged content so far
}

const (
	thinkStart = iota // nothing but blanks yet: a <think> may still open
	thinkIn           // inside the reasoning
	thinkOut          // content (after </think>, or no reasoning at all)
)

// newThinkSplit starts a reply; open: the prompt ended inside <think>.
func newThinkSplit(open bool) *thinkSplit {
	if open {
		return &thinkSplit{state: thinkIn}
	}
	return &thinkSplit{}
}

// feed takes the next piece of the reply.
func (t *thinkSplit) feed(s string) {
	t.held += s
	for {
		switch t.state {
		case thinkStart:
			rest := strings.TrimLeft(t.held, " \t\r\n")
			switch {
			case strings.HasPrefix(rest, thinkOpen):
				t.state, t.held = thinkIn, rest[len(thinkOpen):]
				continue
			case strings.HasPrefix(thinkOpen, rest):
				return // blanks, or the start of <think>: wait
			}
			t.state = thinkOut
			continue
		case thinkIn:
			if t.reasoning == "" { // the reasoning's leading blanks go
				if t.held = strings.TrimLeft(t.held, " \t\r\n"); t.held == "" {
					return
				}
			}
			if i := strings.Index(t.held, thinkClose); i >= 0 {
				t.reasoning += strings.TrimRight(t.held[:i], " \t\r\n") // and its trailing ones
				t.state, t.held, t.trim = thinkOut, t.held[i+len(thinkClose):], true
				continue
			}
			// Hold back trailing blanks and what may be the start of </think>.
			keep := partialSuffix(t.held, thinkClose)
			body := t.held[:len(t.held)-keep]
			blanks := len(body) - len(strings.TrimRight(body, " \t\r\n"))
			keep += blanks
			t.reasoning += t.held[:len(t.held)-keep]
			t.held = t.held[len(t.held)-keep:]
			return
		default: // thinkOut
			if t.trim {
				if t.held = strings.TrimLeft(t.held, " \t\r\n"); t.held == "" {
					return
				}
				t.trim = false
			}
			t.content += t.held
			t.held = ""
			return
		}
	}
}

// flush ends the reply: what is held is judged as it stands (an unclosed
// reasoning stays reasoning).
func (t *thinkSplit) flush() {
	h := t.held
	t.held = ""
	switch {
	case t.state == thinkIn:
		if t.reasoning == "" {
			h = strings.TrimLeft(h, " \t\r\n")
		}
		t.reasoning += strings.TrimRight(h, " \t\r\n")
	case t.state == thinkOut && t.trim:
		t.content += strings.TrimLeft(h, " \t\r\n")
	default: // content, or only blanks or a part of <think>: content as it is
		t.content += h
	}
}

// partialSuffix is the length of the longest suffix of s that is a proper
// prefix of tag.
func partialSuffix(s, tag string) int {
	for k := min(len(tag)-1, len(s)); k > 0; k-- {
		if strings.HasSuffix(s, tag[:k]) {
			return k
		}
	}
	return 0
}

// opensThink reports whether the prompt ends inside a reasoning the chat
// template opened (DeepSeek-R1's templates end with "<think>\n"), so that
// the reply starts reasoning.
func (s *Server) opensThink(ids []int32) bool {
	tail := ids[max(0, len(ids)-4):]
	return strings.HasSuffix(strings.TrimRight(s.model.Tokenizer.Decode(tail), " \t\r\n"), thinkOpen)
}
