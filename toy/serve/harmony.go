// harmony.go: gpt-oss's replies in OpenAI's harmony format, read token by
// token: messages on channels, the analysis channel the reasoning, the
// final one the content, and a message to functions.NAME a tool call.
//
//	<|channel|>analysis<|message|>…<|end|><|start|>assistant<|channel|>final<|message|>…<|return|>
//	<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{"place": "Paris"}<|call|>
//
// The structure is in control tokens, which decoded text leaves out, so the
// reply is read by id.

package serve

import (
	"strings"

	"github.com/toyml/toy/toy/tokenizer"
)

// harmonyTokens are the ids of the format's control tokens.
type harmonyTokens struct {
	start, end, message, channel, constrain int32
}

// harmonyTokensOf finds the format's tokens in tok; false when the
// vocabulary lacks them (the model writes no harmony).
func harmonyTokensOf(tok *tokenizer.Tokenizer) (harmonyTokens, bool) {
	h := harmonyTokens{tok.ID("<|start|>"), tok.ID("<|end|>"), tok.ID("<|message|>"), tok.ID("<|channel|>"), tok.ID("<|constrain|>")}
	return h, h.start >= 0 && h.end >= 0 && h.message >= 0 && h.channel >= 0
}

// harmonyReply follows one reply: the header of the message being written
// (role, channel, recipient), then its body, routed by the header.
type harmonyReply struct {
	ids       harmonyTokens
	inHeader  bool
	header    strings.Builder // the header's text: "assistant", "analysis", "commentary to=functions.f json" …
	body      int             // where the body goes: toContent, toReasoning or toCall
	reasoning strings.Builder
	call      *toolCall // the call being written
	calls     []toolCall
}

const (
	toContent = iota
	toReasoning
	toCall
)

// newHarmonyReply starts a reply after a prompt that ends with
// "<|start|>assistant": in the header of the first message.
func newHarmonyReply(ids harmonyTokens) *harmonyReply {
	return &harmonyReply{ids: ids, inHeader: true}
}

// push takes token id and its text; it returns where the text goes
// (toContent, toReasoning or toCall), or −1 when the token is structure.
func (h *harmonyReply) push(id int32, piece string) int {
	switch id {
	case h.ids.start:
		h.endMessage()
		h.inHeader = true
		h.header.Reset()
		return -1
	case h.ids.channel, h.ids.constrain:
		if !h.inHeader { // a header token in a body: the body has ended
			h.endMessage()
			h.inHeader = true
			h.header.Reset()
		}
		h.header.WriteByte(' ')
		return -1
	case h.ids.message:
		h.beginBody()
		return -1
	case h.ids.end:
		h.endMessage()
		return -1
	}
	if h.inHeader {
		h.header.WriteString(piece)
		return -1
	}
	switch h.body {
	case toReasoning:
		h.reasoning.WriteString(piece)
	case toCall:
		h.call.Arguments += piece
	}
	return h.body
}

// beginBody reads the header: a recipient functions.NAME makes the body a
// call's arguments; the analysis channel is reasoning; the rest (final,
// commentary to the user) content.
func (h *harmonyReply) beginBody() {
	h.inHeader = false
	fields := strings.Fields(h.header.String())
	h.body = toContent
	for _, f := range fields {
		if name, ok := strings.CutPrefix(f, "to=functions."); ok {
			h.body, h.call = toCall, &toolCall{Name: name}
			return
		}
	}
	for _, f := range fields {
		if f == "analysis" {
			h.body = toReasoning
		}
	}
}

// endMessage closes the message being written (a call's arguments end
// here, or at the reply's end).
func (h *harmonyReply) endMessage() {
	if h.call != nil {
		h.call.Arguments = strings.TrimSpace(h.call.Arguments)
		h.calls = append(h.calls, *h.call)
		h.call = nil
	}
	h.body = toContent
}
