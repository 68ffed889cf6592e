// harmony.go: gpt-oss's replies in OpenAI's harmony format, read token by
// token: messages on channels, the analysis channel the reasoning, the
// final one the content, and a message to functions.NAME a tool call.
//
//	<|channel|>analysis<|message|>…<|end|><|start|>assistant<|channel|>final<|message|>…<|return|>
//	<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{"place": "Paris"}<|call|>
//
// The structure is in control tokens, which decoded text leaves out, so the
// reply is read by id.

package chat

import "strings"

// HarmonyTokens are the ids of harmony's control tokens.
type HarmonyTokens struct {
	Start, End, Message, Channel, Constrain int32
}

// FindHarmonyTokens looks the control tokens up with id (a tokenizer's
// ID: −1 for none); false when the vocabulary lacks them (the model writes
// no harmony). <|constrain|> is optional.
func FindHarmonyTokens(id func(text string) int32) (HarmonyTokens, bool) {
	h := HarmonyTokens{id("<|start|>"), id("<|end|>"), id("<|message|>"), id("<|channel|>"), id("<|constrain|>")}
	return h, h.Start >= 0 && h.End >= 0 && h.Message >= 0 && h.Channel >= 0
}

// Where a token's text goes in a harmony reply.
const (
	HarmonyStructure = iota // a control token or a header: not shown
	HarmonyContent          // the final answer (or commentary to the user)
	HarmonyReasoning        // the analysis channel
	HarmonyArguments        // a tool call's arguments
)

// HarmonyCall is a tool call a reply made: the function and its arguments
// (the JSON text of an object, as the model wrote it).
type HarmonyCall struct{ Name, Arguments string }

// Harmony follows one reply: the header of the message being written
// (role, channel, recipient), then its body, routed by the header. The
// zero value is not ready: use NewHarmony.
type Harmony struct {
	ids       HarmonyTokens
	inHeader  bool
	header    strings.Builder // "assistant", " analysis", " commentary to=functions.f json" …
	body      int             // HarmonyContent, HarmonyReasoning or HarmonyArguments
	reasoning strings.Builder
	call      *HarmonyCall
	calls     []HarmonyCall
}

// NewHarmony starts a reply after a prompt that ends with
// "<|start|>assistant" (gpt-oss's template's generation prompt): in the
// header of its first message.
func NewHarmony(ids HarmonyTokens) *Harmony { return &Harmony{ids: ids, inHeader: true} }

// Push takes token id and its decoded text and says where the text goes.
func (h *Harmony) Push(id int32, piece string) int {
	switch id {
	case h.ids.Start:
		h.endMessage()
		h.inHeader = true
		h.header.Reset()
		return HarmonyStructure
	case h.ids.Channel, h.ids.Constrain:
		if !h.inHeader { // a header token in a body: the body has ended
			h.endMessage()
			h.inHeader = true
			h.header.Reset()
		}
		h.header.WriteByte(' ')
		return HarmonyStructure
	case h.ids.Message:
		h.beginBody()
		return HarmonyStructure
	case h.ids.End:
		h.endMessage()
		return HarmonyStructure
	}
	if h.inHeader {
		h.header.WriteString(piece)
		return HarmonyStructure
	}
	switch h.body {
	case HarmonyReasoning:
		h.reasoning.WriteString(piece)
	case HarmonyArguments:
		h.call.Arguments += piece
	}
	return h.body
}

// beginBody reads the header: a recipient functions.NAME makes the body a
// call's arguments; the analysis channel is reasoning; the rest (final,
// commentary to the user) content.
func (h *Harmony) beginBody() {
	h.inHeader = false
	fields := strings.Fields(h.header.String())
	h.body = HarmonyContent
	for _, f := range fields {
		if name, ok := strings.CutPrefix(f, "to=functions."); ok {
			h.body, h.call = HarmonyArguments, &HarmonyCall{Name: name}
			return
		}
	}
	for _, f := range fields {
		if f == "analysis" {
			h.body = HarmonyReasoning
		}
	}
}

// endMessage closes the message being written.
func (h *Harmony) endMessage() {
	if h.call != nil {
		h.call.Arguments = strings.TrimSpace(h.call.Arguments)
		h.calls = append(h.calls, *h.call)
		h.call = nil
	}
	h.body = HarmonyContent
}

// Close ends the reply: a call being written is complete.
func (h *Harmony) Close() { h.endMessage() }

// InFinal reports whether the reply is in the body of its final message
// (the answer, where a format such as JSON applies).
func (h *Harmony) InFinal() bool {
	if h.inHeader || h.body != HarmonyContent {
		return false
	}
	for _, f := range strings.Fields(h.header.String()) {
		if f == "final" {
			return true
		}
	}
	return false
}

// Reasoning is the analysis written so far.
func (h *Harmony) Reasoning() string { return h.reasoning.String() }

// Calls are the tool calls the reply made (complete after Close).
func (h *Harmony) Calls() []HarmonyCall { return h.calls }

// WritesHarmony reports whether a chat template writes harmony (gpt-oss's).
func (t *Template) WritesHarmony() bool { return strings.Contains(t.source, "<|channel|>") }
