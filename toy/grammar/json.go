// The JSON grammar: llama.cpp's grammars/json.gbnf as a deterministic
// automaton over code points.

package grammar

import (
	"fmt"
	"math"
)

// JSON keeps a reply a JSON object as llama.cpp's json grammar
// (grammars/json.gbnf, what format "json" means to Ollama and llama.cpp's
// server) defines it:
//
//	root   ::= object
//	value  ::= object | array | string | number | ("true" | "false" | "null") ws
//	object ::= "{" ws ( string ":" ws value ("," ws string ":" ws value)* )? "}" ws
//	array  ::= "[" ws ( value ("," ws value)* )? "]" ws
//	string ::= "\"" ( [^"\\\x7F\x00-\x1F] | "\\" (["\\bfnrt] | "u" [0-9a-fA-F]{4}) )* "\"" ws
//	number ::= ("-"? ([0-9] | [1-9] [0-9]{0,15})) ("." [0-9]+)? ([eE] [-+]? [0-9] [1-9]{0,15})? ws
//	ws     ::= | " " | "\n" [ \t]{0,20}
//
// so stricter than JSON itself: the top level is an object, whitespace
// comes one run at a time (a space, or a newline and at most 20 spaces or
// tabs), integers have at most 16 digits, and "\/" is no escape. Tokens are
// read as llama.cpp reads them (see Accepts), so that masked decoding picks
// the tokens llama.cpp's grammar sampler picks.
//
// A JSON is the state after the text accepted so far; the zero value is not
// ready: use NewJSON.
type JSON struct {
	stack   []byte // open containers, outermost first: '{' or '['
	at      expect // what comes next
	n       int    // a counter for at: digits, hex digits, literal bytes
	lit     string // the literal being read (at == inLiteral)
	key     bool   // the string being read is an object key
	ws      wsState
	wsRun   int         // spaces and tabs after the newline of a ws run
	partial partialUTF8 // an unfinished UTF-8 sequence at the end of the text
	tail    bool        // text may follow the value (AllowTail)
	ended   bool        // the value is complete and tail is set: the rest is free
	plain   *[]bool     // per token: its piece stays inside a string (Mask's cache; shared by clones)
}

// expect is what the automaton waits for.
type expect uint8

const (
	rootObject   expect = iota // the '{' of the root object
	keyOrClose                 // after '{': a key or '}'
	key                        // after ',' in an object: a key
	colon                      // after a key: ':'
	value                      // after ':' or ',' in an array: a value
	valueOrEnd                 // after '[': a value or ']'
	afterValue                 // after a value: ',' or the container's close; at the root, the end
	inString                   // inside a string
	inEscape                   // after a backslash
	inUnicode                  // after "\u": n hex digits read
	inLiteral                  // inside true, false or null: n bytes of lit read
	numSign                    // after '-': a digit
	numInt                     // in an integer of n digits (first not 0), may take more
	numIntDone                 // after a whole integer: '.', 'e', or the end
	numFracStart               // after '.': a digit
	numFrac                    // in a fraction
	numExpStart                // after 'e': a sign or a digit
	numExpSign                 // after the exponent's sign: a digit
	numExp                     // after the exponent's first digit and n−1 more ([1-9] only)
)

// wsState is where a whitespace run stands: none may start here, one may,
// a space ended it, or a newline began it.
type wsState uint8

const (
	wsNone wsState = iota
	wsFresh
	wsSpace
	wsNewline
)

// partialUTF8 is an unfinished UTF-8 sequence: the bits so far and the bytes still
// to come; remain < 0 marks an invalid sequence.
type partialUTF8 struct {
	value  uint32
	remain int
}

// NewJSON returns the state before any text.
func NewJSON() *JSON { return &JSON{at: rootObject} }

// Clone returns an independent copy of g.
func (g *JSON) Clone() *JSON {
	c := *g
	c.stack = append([]byte(nil), g.stack...)
	return &c
}

// Complete reports whether the text so far is a whole object, so that the
// reply may end (only whitespace may still follow).
func (g *JSON) Complete() bool { return len(g.stack) == 0 && g.at == afterValue }

// AllowTail lets any text follow the value: once it is complete — perhaps
// in the middle of a token, as in `"}}` — the rest of that token and every
// later one are free (Ended), and Mask masks nothing. A forced tool call's
// arguments are such a value: the call's closing follows them.
func (g *JSON) AllowTail() { g.tail = true }

// Ended reports whether the value is complete under AllowTail.
func (g *JSON) Ended() bool { return g.ended }

// Accepts reports whether piece, a token's text, may come next. As in
// llama.cpp: the bytes are decoded to code points, continuing an
// unfinished sequence from the last token and possibly leaving one
// unfinished; a NUL byte ends the piece; an empty piece, an invalid lead
// byte or a continuation the last sequence did not expect is refused; an
// unfinished sequence at the end is accepted only inside a string (where
// every character from U+0080 on is), unless it is an overlong 2-byte
// lead.
func (g *JSON) Accepts(piece string) bool {
	return g.Clone().feed(piece)
}

// Accept advances g by piece; it returns an error, and leaves g as it was,
// when Accepts(piece) is false.
func (g *JSON) Accept(piece string) error {
	c := g.Clone()
	if !c.feed(piece) {
		return fmt.Errorf("grammar: %q cannot continue the JSON here", piece)
	}
	*g = *c
	return nil
}

// feed decodes piece and runs its code points, changing g; false when the
// grammar refuses it (g is then in no useful state). Once the value has
// ended under AllowTail the rest of the piece is free.
func (g *JSON) feed(piece string) bool {
	if piece == "" || piece[0] == 0 {
		return false
	}
	if g.ended {
		return true
	}
	refused := false
	partial, ok := eachCodePoint(piece, g.partial, func(r rune) bool {
		if !g.step(r) {
			refused = true
			return false
		}
		if g.tail && g.Complete() {
			g.ended = true
			return false
		}
		return true
	})
	switch {
	case !ok || refused:
		return false
	case g.ended:
		g.partial = partialUTF8{}
		return true
	case partial.remain != 0 && !g.partialFits(partial):
		return false
	}
	g.partial = partial
	return true
}

// eachCodePoint decodes a token's text as llama.cpp's decode_utf8 does,
// continuing the unfinished sequence p, and calls f with each code point
// until f returns false (the rest of the piece is then not read). Bytes
// after a lead are taken as continuations without checking them, except
// those that finish p; a code point 0 (an overlong NUL) ends what f sees,
// though the decoding goes on for the sequence left unfinished; a NUL byte
// ends the piece. It returns that unfinished sequence, and false for an
// invalid lead byte or a bad continuation of p (the token is refused).
func eachCodePoint(piece string, p partialUTF8, f func(r rune) bool) (partialUTF8, bool) {
	reading := true
	emit := func(r rune) bool {
		if r == 0 {
			reading = false
		}
		if reading && !f(r) {
			return false
		}
		return true
	}
	value, remain := p.value, p.remain
	i := 0
	for i < len(piece) && piece[i] != 0 && remain > 0 { // finish the last token's sequence
		b := piece[i]
		if b>>6 != 2 {
			return partialUTF8{}, false
		}
		value = value<<6 + uint32(b&0x3F)
		i++
		remain--
	}
	if p.remain > 0 && remain == 0 && !emit(rune(value)) {
		return partialUTF8{}, true
	}
	for i < len(piece) && piece[i] != 0 {
		first := piece[i]
		remain = utf8Lengths[first>>4] - 1
		if remain < 0 {
			return partialUTF8{}, false
		}
		value = uint32(first) & (1<<(7-remain) - 1)
		i++
		for i < len(piece) && piece[i] != 0 && remain > 0 {
			value = value<<6 + uint32(piece[i]&0x3F)
			i++
			remain--
		}
		if remain == 0 && !emit(rune(value)) {
			return partialUTF8{}, true
		}
	}
	return partialUTF8{value, remain}, true
}

// utf8Lengths is the length of a UTF-8 sequence by the high four bits of
// its first byte, 0 for a continuation byte (llama.cpp's lookup table).
var utf8Lengths = [16]int{1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 2, 2, 3, 4}

// partialFits reports whether an unfinished sequence could complete to a
// code point the grammar takes here: only in a string, and not an overlong
// 2-byte sequence (llama.cpp's match_partial_char).
func (g *JSON) partialFits(p partialUTF8) bool {
	if p.remain < 0 || (p.remain == 1 && p.value < 2) {
		return false
	}
	return g.at == inString // string characters are [^"\\\x7F\x00-\x1F]; a sequence of 2+ bytes is ≥ U+0080
}

// step advances by one code point; false if the grammar refuses it.
func (g *JSON) step(r rune) bool {
	// A whitespace run, where one may stand.
	switch g.ws {
	case wsFresh:
		switch r {
		case ' ':
			g.ws = wsSpace
			return true
		case '\n':
			g.ws, g.wsRun = wsNewline, 0
			return true
		}
	case wsNewline:
		if (r == ' ' || r == '\t') && g.wsRun < 20 {
			g.wsRun++
			return true
		}
	}
	g.ws = wsNone
	switch g.at {
	case rootObject:
		if r != '{' {
			return false
		}
		g.open(byte(r))
		return true
	case keyOrClose, key:
		switch {
		case r == '"':
			g.at, g.key = inString, true
			return true
		case r == '}' && g.at == keyOrClose:
			return g.close('{')
		}
		return false
	case colon:
		if r != ':' {
			return false
		}
		g.at, g.ws = value, wsFresh
		return true
	case value, valueOrEnd:
		if r == ']' && g.at == valueOrEnd {
			return g.close('[')
		}
		return g.startValue(r)
	case afterValue:
		if len(g.stack) == 0 {
			return false // the root object is complete: only its whitespace
		}
		top := g.stack[len(g.stack)-1]
		switch {
		case r == ',' && top == '{':
			g.at, g.ws = key, wsFresh
			return true
		case r == ',' && top == '[':
			g.at, g.ws = value, wsFresh
			return true
		case r == '}' && top == '{':
			return g.close('{')
		case r == ']' && top == '[':
			return g.close('[')
		}
		return false
	case inString:
		switch {
		case r == '"':
			g.endString()
			return true
		case r == '\\':
			g.at = inEscape
			return true
		}
		return r >= 0x20 && r != 0x7F
	case inEscape:
		switch r {
		case '"', '\\', 'b', 'f', 'n', 'r', 't':
			g.at = inString
			return true
		case 'u':
			g.at, g.n = inUnicode, 0
			return true
		}
		return false
	case inUnicode:
		if !isHex(r) {
			return false
		}
		if g.n++; g.n == 4 {
			g.at = inString
		}
		return true
	case inLiteral:
		if r != rune(g.lit[g.n]) {
			return false
		}
		if g.n++; g.n == len(g.lit) {
			g.valueDone()
		}
		return true
	case numSign:
		return g.intDigit(r)
	case numInt, numIntDone:
		switch {
		case isDigit(r) && g.at == numInt && g.n < 16:
			g.n++
			return true
		case r == '.':
			g.at = numFracStart
			return true
		case r == 'e' || r == 'E':
			g.at = numExpStart
			return true
		}
		return g.endNumber(r)
	case numFracStart:
		if !isDigit(r) {
			return false
		}
		g.at = numFrac
		return true
	case numFrac:
		switch {
		case isDigit(r):
			return true
		case r == 'e' || r == 'E':
			g.at = numExpStart
			return true
		}
		return g.endNumber(r)
	case numExpStart:
		if r == '-' || r == '+' {
			g.at = numExpSign
			return true
		}
		fallthrough
	case numExpSign:
		if !isDigit(r) {
			return false
		}
		g.at, g.n = numExp, 1
		return true
	case numExp:
		if r >= '1' && r <= '9' && g.n < 16 {
			g.n++
			return true
		}
		return g.endNumber(r)
	}
	return false
}

// startValue begins a value with r.
func (g *JSON) startValue(r rune) bool {
	switch {
	case r == '{':
		g.open('{')
	case r == '[':
		g.open('[')
	case r == '"':
		g.at, g.key = inString, false
	case r == 't' || r == 'f' || r == 'n':
		g.at, g.n, g.lit = inLiteral, 1, map[rune]string{'t': "true", 'f': "false", 'n': "null"}[r]
	case r == '-':
		g.at = numSign
	default:
		return g.intDigit(r)
	}
	return true
}

// intDigit reads the first digit of an integer: 0 stands alone, 1–9 may be
// followed by up to 15 more.
func (g *JSON) intDigit(r rune) bool {
	switch {
	case r == '0':
		g.at = numIntDone
	case r >= '1' && r <= '9':
		g.at, g.n = numInt, 1
	default:
		return false
	}
	return true
}

// endNumber ends the number before r and lets r continue after it.
func (g *JSON) endNumber(r rune) bool {
	g.valueDone()
	return g.step(r)
}

// open starts a container.
func (g *JSON) open(c byte) {
	g.stack = append(g.stack, c)
	g.at, g.ws = keyOrClose, wsFresh
	if c == '[' {
		g.at = valueOrEnd
	}
}

// close ends the innermost container, which must be c.
func (g *JSON) close(c byte) bool {
	if len(g.stack) == 0 || g.stack[len(g.stack)-1] != c {
		return false
	}
	g.stack = g.stack[:len(g.stack)-1]
	g.valueDone()
	return true
}

// endString ends a key (a colon follows) or a string value.
func (g *JSON) endString() {
	if g.key {
		g.at, g.ws, g.key = colon, wsFresh, false
		return
	}
	g.valueDone()
}

// valueDone: a value (or the root object) is complete; whitespace may follow.
func (g *JSON) valueDone() { g.at, g.ws = afterValue, wsFresh }

func isDigit(r rune) bool { return r >= '0' && r <= '9' }

func isHex(r rune) bool { return isDigit(r) || (r >= 'a' && r <= 'f') || (r >= 'A' && r <= 'F') }

// Vocab is what Mask needs of a tokenizer (*tokenizer.Tokenizer has it):
// each token's text as llama.cpp's token_to_piece gives it, and which
// tokens end a generation.
type Vocab interface {
	Piece(id int32) string
	IsEOG(id int32) bool
}

// Mask sets to −∞ the logits of the tokens that may not come next, as
// llama.cpp's grammar sampler does: a token that ends the generation only
// while the object is incomplete, any other that Accepts refuses (an empty
// piece among them). A reply's state must get the same Vocab every time
// (it keeps what it learns of the tokens).
func (g *JSON) Mask(logits []float32, v Vocab) {
	if g.ended {
		return
	}
	complete := g.Complete()
	var scratch JSON
	var stack []byte // reused: a token's trial runs on a copy of g
	// An ASCII first character the grammar refuses here refuses the token:
	// those are found once, not once a token.
	var firstRefused [128]bool
	if g.partial.remain == 0 {
		for c := 1; c < 128; c++ {
			firstRefused[c] = !g.Clone().step(rune(c))
		}
	}
	// Inside a string the tokens of plain text stay there: known once per
	// reply, they need no trial.
	var plain []bool
	if g.at == inString && g.partial.remain == 0 {
		if g.plain == nil {
			p := plainTokens(len(logits), v)
			g.plain = &p
		}
		plain = *g.plain
	}
	for id := range logits {
		if v.IsEOG(int32(id)) {
			if !complete {
				logits[id] = negInf
			}
			continue
		}
		if id < len(plain) && plain[id] {
			continue
		}
		piece := v.Piece(int32(id))
		if piece == "" || piece[0] < 128 && firstRefused[piece[0]] {
			logits[id] = negInf
			continue
		}
		scratch = *g
		scratch.stack = append(stack[:0], g.stack...)
		if !scratch.feed(piece) {
			logits[id] = negInf
		}
		stack = scratch.stack
	}
}

// State is a grammar's state over a vocabulary's tokens: *JSON or
// *Matcher.
type State interface {
	// Mask sets to −∞ the logits of the tokens that may not come next.
	Mask(logits []float32, v Vocab)
	// AllowsToken reports whether token id may come next.
	AllowsToken(id int32, v Vocab) bool
	// AcceptToken moves the state past token id; a token AllowsToken
	// refuses is an error and changes nothing.
	AcceptToken(id int32, v Vocab) error
}

// Tokens is a grammar's state over a vocabulary, as sample.Constraint:
// what sample.Sampler.SampleConstrained and engine.Options.Constraint
// take; it follows the tokens drawn itself.
type Tokens struct {
	State State
	Vocab Vocab
}

// Mask is State.Mask over t's vocabulary.
func (t Tokens) Mask(logits []float32) { t.State.Mask(logits, t.Vocab) }

// Accept moves t's state past token id. A token Allows refuses leaves it
// as it was.
func (t Tokens) Accept(id int32) { t.State.AcceptToken(id, t.Vocab) }

// Allows reports whether token id may come next.
func (t Tokens) Allows(id int32) bool { return t.State.AllowsToken(id, t.Vocab) }

// Fork returns an independent copy of t (a Tokens, nil when its state is
// neither a JSON nor a Matcher) that can follow other tokens than t: a
// draft model guesses under it (engine's speculative decoding) while t
// follows the tokens kept.
func (t Tokens) Fork() any {
	switch s := t.State.(type) {
	case *JSON:
		return Tokens{State: s.Clone(), Vocab: t.Vocab}
	case *Matcher:
		return Tokens{State: s.Clone(), Vocab: t.Vocab}
	}
	return nil
}

// AllowsToken reports whether token id may come next: an end of
// generation once the value is complete, any other token that Accepts.
func (g *JSON) AllowsToken(id int32, v Vocab) bool {
	if v.IsEOG(id) {
		return g.Complete() || g.Ended()
	}
	return g.Ended() || g.Accepts(v.Piece(id))
}

// AcceptToken moves g past token id (an end of generation changes
// nothing); a token AllowsToken refuses is an error and changes nothing.
func (g *JSON) AcceptToken(id int32, v Vocab) error {
	if v.IsEOG(id) {
		if !g.Complete() && !g.Ended() {
			return fmt.Errorf("grammar: the JSON is incomplete: token %d cannot end it", id)
		}
		return nil
	}
	return g.Accept(v.Piece(id))
}

var negInf = float32(math.Inf(-1))

// plainTokens reports for each of n tokens whether its piece, read inside
// a string, leaves the string as it found it: whole characters, none of
// them a quote, a backslash or a control character.
func plainTokens(n int, v Vocab) []bool {
	plain := make([]bool, n)
	for id := range plain {
		if v.IsEOG(int32(id)) {
			continue
		}
		g := JSON{at: inString}
		plain[id] = g.feed(v.Piece(int32(id))) && g.at == inString && g.partial.remain == 0
	}
	return plain
}
