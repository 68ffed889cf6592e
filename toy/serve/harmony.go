// harmony.go: gpt-oss's replies, read by chat.Harmony, and grammars that
// hold in their final message.

package serve

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"

	"github.com/toyml/toy/toy/chat"
	"github.com/toyml/toy/toy/grammar"
	"github.com/toyml/toy/toy/tokenizer"
)

// harmonyTokensOf finds harmony's control tokens in tok.
func harmonyTokensOf(tok *tokenizer.Tokenizer) (chat.HarmonyTokens, bool) {
	return chat.FindHarmonyTokens(tok.ID)
}

// finalOnly is a grammar that holds only in a harmony reply's final
// message, as llama.cpp's lazy grammar for gpt-oss: the analysis and the
// headers are free; from the final message's first token on, inner masks
// and follows. The reply may end only once inner is complete.
type finalOnly struct {
	inner   grammar.State
	h       *chat.Harmony
	started bool // the final message has begun: inner rules
}

func newFinalOnly(inner grammar.State, ids chat.HarmonyTokens) *finalOnly {
	return &finalOnly{inner: inner, h: chat.NewHarmony(ids)}
}

// Mask masks nothing before the final message; in it, what inner refuses,
// and the harmony tokens that would leave it.
func (f *finalOnly) Mask(logits []float32, v grammar.Vocab) {
	if f.started {
		f.inner.Mask(logits, v)
		return
	}
	for id := range logits { // the end only after a final message
		if v.IsEOG(int32(id)) {
			logits[id] = float32(math.Inf(-1))
		}
	}
}

// AllowsToken is inner's verdict inside the final message, any token but
// an end of generation before it.
func (f *finalOnly) AllowsToken(id int32, v grammar.Vocab) bool {
	if f.started {
		return f.inner.AllowsToken(id, v)
	}
	return !v.IsEOG(id)
}

// AcceptToken follows the harmony structure until the final message opens,
// then inner.
func (f *finalOnly) AcceptToken(id int32, v grammar.Vocab) error {
	if f.started {
		return f.inner.AcceptToken(id, v)
	}
	if v.IsEOG(id) {
		return fmt.Errorf("serve: the reply ended before its final message")
	}
	f.h.Push(id, v.Piece(id))
	f.started = f.h.InFinal()
	return nil
}

// harmonyCall is a forced tool call for gpt-oss — tool_choice "required",
// or a named function — as the shape its harmony reply is kept to:
//
//	(<|channel|>analysis<|message|>…<|end|><|start|>assistant)*
//	<|channel|>commentary to=functions.NAME <|constrain|>json<|message|>{arguments}<|call|>
//
// The model may reason first, in analysis messages (or write commentary to
// the user, which is content), and must then call one of the functions —
// any offered one for "required", the named one otherwise — with
// arguments that are a value of the function's parameters schema, or a
// JSON object where grammar.Schema refuses it; then only the end of the
// turn may come, so a reply holds one call. This is the shape llama.cpp's
// grammar for gpt-oss takes under "required" (it has no named choice):
// the reasoning is kept, since gpt-oss is trained to reason before it acts.
type harmonyCall struct {
	head *grammar.GBNF              // the messages up to the call's arguments (callGrammar)
	args map[string]*grammar.Schema // per function, its parameters; nil: any JSON object
}

// callGrammar is the grammar of a forced call's reply up to its arguments,
// the functions' names to follow "name ::=". A message before the call is
// analysis or commentary; its text may not hold "<|", so that no control
// token (harmony's all begin so) passes for text. The call's recipient
// stands in the channel's part of the header, as gpt-oss writes it, or in
// the role's, as its template writes earlier calls.
const callGrammar = `
root    ::= message* call
message ::= <|channel|> ("analysis" | "commentary") <|message|> text <|end|> <|start|> "assistant"
text    ::= ([^<] | "<"+ [^<|])* "<"*
call    ::= (<|channel|> "commentary to=functions." name | " to=functions." name <|channel|> "commentary") json? <|message|>
json    ::= " " <|constrain|>? "json"
name    ::= `

// newHarmonyCall makes the forced call to one of names among the request's
// tools, for a vocabulary with harmony's tokens.
func newHarmonyCall(tok grammar.TokenIDs, tools json.RawMessage, names []string) (*harmonyCall, error) {
	src := callGrammar
	if tok.ID("<|constrain|>") < 0 { // optional in harmony's vocabularies
		src = strings.Replace(src, " <|constrain|>? ", " ", 1)
	}
	c := &harmonyCall{args: map[string]*grammar.Schema{}}
	for i, name := range names {
		if i > 0 {
			src += " | "
		}
		src += grammar.QuoteGBNF(name)
		if p := parametersOf(tools, name); len(p) > 0 {
			c.args[name], _ = grammar.CompileSchema(p) // nil when not covered: any object
		}
	}
	g, err := grammar.ParseGBNF(src, tok)
	if err != nil {
		return nil, fmt.Errorf("serve: the forced call's grammar: %w", err)
	}
	c.head = g
	return c, nil
}

// state returns the state before a reply.
func (c *harmonyCall) state() *callState {
	return &callState{call: c, head: grammar.NewMatcher(c.head)}
}

// callState follows one reply under a harmonyCall: the head grammar up to
// the call's arguments, then the arguments' state for the function the
// header named.
type callState struct {
	call *harmonyCall
	head *grammar.Matcher
	text strings.Builder // the reply under head, whose last header names the function
	args grammar.State   // set once head is complete
}

// now is the state that judges the next token.
func (s *callState) now() grammar.State {
	if s.args != nil {
		return s.args
	}
	return s.head
}

func (s *callState) Mask(logits []float32, v grammar.Vocab) { s.now().Mask(logits, v) }

func (s *callState) AllowsToken(id int32, v grammar.Vocab) bool { return s.now().AllowsToken(id, v) }

// AcceptToken moves the state past id; once the call's header is complete
// (head can go no further) its arguments begin.
func (s *callState) AcceptToken(id int32, v grammar.Vocab) error {
	if s.args != nil {
		return s.args.AcceptToken(id, v)
	}
	if err := s.head.AcceptToken(id, v); err != nil {
		return err
	}
	s.text.WriteString(v.Piece(id))
	if s.head.Complete() {
		s.args = grammar.NewJSON()
		if schema := s.call.args[calledName(s.text.String())]; schema != nil {
			s.args = grammar.NewJSONSchema(schema)
		}
	}
	return nil
}

// calledName is the function a reply's last header names: what follows
// its last "to=functions.", up to a space or a token ("<|channel|>",
// "<|message|>").
func calledName(reply string) string {
	const to = "to=functions."
	name := reply[strings.LastIndex(reply, to)+len(to):]
	if i := strings.IndexAny(name, " <"); i >= 0 {
		name = name[:i]
	}
	return name
}
