// harmony.go: gpt-oss's replies, read by chat.Harmony, and grammars that
// hold in their final message.

package serve

import (
	"fmt"
	"math"

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
