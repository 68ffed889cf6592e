// harmony.go: gpt-oss's replies, read by chat.Harmony.

package serve

import (
	"github.com/toyml/toy/toy/chat"
	"github.com/toyml/toy/toy/tokenizer"
)

// harmonyTokensOf finds harmony's control tokens in tok.
func harmonyTokensOf(tok *tokenizer.Tokenizer) (chat.HarmonyTokens, bool) {
	return chat.FindHarmonyTokens(tok.ID)
}
