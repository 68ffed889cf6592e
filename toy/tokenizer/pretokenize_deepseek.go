// pretokenize_deepseek.go: DeepSeek's pre-tokenizers (deepseek-llm,
// deepseek-coder, deepseek-v3), each a sequence of regular expressions that
// llama.cpp runs one after the other, every one splitting the words the one
// before left.
//
// Unlike GPT-2's expression, llama.cpp runs these with the C++ standard
// library's ECMAScript regex. An expression with \p{…} sees each non-ASCII
// character as its Unicode category alone (whitespace first, then L, N, P, M,
// S, else "other"), ASCII characters as themselves; one without \p{…} sees
// the code points, explicit ranges and all, with non-ASCII whitespace as \v.
// An alternation takes its first alternative that matches, at the leftmost
// position where one does; what no match covers is a word of its own.
package tokenizer

import (
	"sync"
	"unicode"
	"unicode/utf8"
)

// deepseekLLM is DeepSeek LLM's and DeepSeek-V2's sequence:
//
//	[\r\n]
//	\s?[A-Za-zµÀ-ÖØ-öø-ƺ…𞤀-𞥃]+   (the cased letters of casedLetters)
//	\s?[!-/:-~！-／：-～‘-‟　-。]+
//	\s+$
//	[一-龥ࠀ-一가-퟿]+
//	\p{N}+
var deepseekLLM = []splitter{
	splitEachNewline,
	matchSplitter(func(s string, i int) int { return spaceThenRun(s, i, isCasedLetter) }),
	matchSplitter(func(s string, i int) int { return spaceThenRun(s, i, isDeepseekPunct) }),
	splitTrailingSpaces,
	matchSplitter(func(s string, i int) int { return runOf(s, i, isCJKOrHangul) - i }),
	splitNumberRuns,
}

// deepseekCoder is DeepSeek Coder's (and DeepSeek-Coder-V2's) sequence:
//
//	[\r\n]
//	\s?\p{L}+
//	\s?\p{P}+
//	[一-龥ࠀ-一가-퟿]+
//	\p{N}
var deepseekCoder = []splitter{
	splitEachNewline,
	matchSplitter(func(s string, i int) int { return spaceThenRun(s, i, isCategory(catLetter)) }),
	matchSplitter(func(s string, i int) int { return spaceThenRun(s, i, isCategory(catPunct)) }),
	matchSplitter(func(s string, i int) int { return runOf(s, i, isCJKOrHangul) - i }),
	splitEachNumber,
}

// deepseekV3 is DeepSeek-V3's (and R1's) sequence:
//
//	\p{N}{1,3}
//	[一-龥぀-ゟ゠-ヿ]+
//	[!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+|
//	 ?[\p{P}\p{S}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
var deepseekV3 = []splitter{
	matchSplitter(matchNumbersUpTo3),
	matchSplitter(func(s string, i int) int { return runOf(s, i, isCJKOrKana) - i }),
	matchSplitter(matchDeepseekV3),
}

// Categories as the expressions with \p{…} see a character.
const (
	catOther  uint8 = iota // control, format, private use, unassigned
	catSpace               // \s: Unicode White_Space
	catLetter              // \p{L}
	catNumber              // \p{N}
	catPunct               // \p{P}
	catMark                // \p{M}
	catSymbol              // \p{S}
)

var (
	categoryOnce sync.Once
	bmpCategory  []uint8 // category of each rune below 0x10000
)

func slowCategory(r rune) uint8 {
	switch {
	case unicode.IsSpace(r):
		return catSpace
	case unicode.IsLetter(r) || isLetter151(r):
		return catLetter
	case unicode.IsNumber(r):
		return catNumber
	case unicode.IsPunct(r):
		return catPunct
	case unicode.IsMark(r):
		return catMark
	case unicode.IsSymbol(r) || isSymbol151(r):
		return catSymbol
	}
	return catOther
}

// isLetter151 and isSymbol151 are the letters and symbols that Unicode 15.1
// added (CJK Extension I; ideographic description characters), which
// llama.cpp's tables have and Go's 15.0 tables lack.
func isLetter151(r rune) bool { return 0x2EBF0 <= r && r <= 0x2EE5D }
func isSymbol151(r rune) bool { return (0x2FFC <= r && r <= 0x2FFF) || r == 0x31EF }

// category returns the rune at s[i] (U+FFFD for a byte that is not valid
// UTF-8, as llama.cpp reads it), its category and its size in bytes; past
// the end, -1, catOther and 0.
func category(s string, i int) (rune, uint8, int) {
	if i >= len(s) {
		return -1, catOther, 0
	}
	if b := s[i]; b < utf8.RuneSelf {
		return rune(b), asciiCategory[b], 1
	}
	r, n := utf8.DecodeRuneInString(s[i:])
	if r < 0x10000 {
		categoryOnce.Do(func() {
			bmpCategory = make([]uint8, 0x10000)
			for r := range bmpCategory {
				bmpCategory[r] = slowCategory(rune(r))
			}
		})
		return r, bmpCategory[r], n
	}
	return r, slowCategory(r), n
}

var asciiCategory = func() (t [128]uint8) {
	for i := range t {
		t[i] = slowCategory(rune(i))
	}
	return
}()

// A charClass reports whether a character (its rune and category) is in a
// bracket expression. Whitespace is in none of the classes here: the
// expressions see non-ASCII whitespace as \v, and none of them lists it.
type charClass func(r rune, cat uint8) bool

func isCategory(c uint8) charClass { return func(_ rune, cat uint8) bool { return cat == c } }

// runOf returns the end of the run of class in at s[i] (i if there is none).
func runOf(s string, i int, in charClass) int {
	for i < len(s) {
		r, c, n := category(s, i)
		if c == catSpace || !in(r, c) {
			break
		}
		i += n
	}
	return i
}

// spaceThenRun returns the length of \s?X+ at s[i], X being in, or 0.
func spaceThenRun(s string, i int, in charClass) int {
	if _, c, n := category(s, i); c == catSpace {
		if end := runOf(s, i+n, in); end > i+n {
			return end - i
		}
		return 0 // the space is not in X either
	}
	return runOf(s, i, in) - i
}

// matchSplitter makes the splitter of an expression that match describes: it
// returns the length of the match at s[i], or 0 where none starts there.
func matchSplitter(match func(s string, i int) int) splitter {
	return func(s string, ends []int) []int { return splitMatches(s, ends, match) }
}

// splitEachNewline is [\r\n]: every CR and LF alone.
func splitEachNewline(s string, ends []int) []int {
	return splitMatches(s, ends, func(s string, i int) int {
		if s[i] == '\r' || s[i] == '\n' {
			return 1
		}
		return 0
	})
}

// splitTrailingSpaces is \s+$: the whitespace that ends a word is a word of
// its own.
func splitTrailingSpaces(s string, ends []int) []int {
	run := -1 // start of the whitespace run at i, or -1
	for i := 0; i < len(s); {
		_, c, n := category(s, i)
		switch {
		case c != catSpace:
			run = -1
		case run < 0:
			run = i
		}
		i += n
	}
	if run > 0 {
		ends = append(ends, run)
	}
	if len(s) > 0 {
		ends = append(ends, len(s))
	}
	return ends
}

// casedLetters is the letter class of DeepSeek LLM's second expression
// (Latin, Greek, Cyrillic, Armenian, Georgian, Cherokee, letterlike symbols,
// Glagolitic, Coptic, fullwidth Latin, Deseret, Osage, Old Hungarian, Warang
// Citi, Adlam; mostly the cased letters).
var casedLetters = &unicode.RangeTable{
	R16: []unicode.Range16{
		{0x0041, 0x005A, 1}, {0x0061, 0x007A, 1}, {0x00B5, 0x00B5, 1}, {0x00C0, 0x00D6, 1},
		{0x00D8, 0x00F6, 1}, {0x00F8, 0x01BA, 1}, {0x01BC, 0x01BF, 1}, {0x01C4, 0x0293, 1},
		{0x0295, 0x02AF, 1}, {0x0370, 0x0373, 1}, {0x0376, 0x0377, 1}, {0x037B, 0x037D, 1},
		{0x037F, 0x037F, 1}, {0x0386, 0x0386, 1}, {0x0388, 0x038A, 1}, {0x038C, 0x038C, 1},
		{0x038E, 0x03A1, 1}, {0x03A3, 0x03F5, 1}, {0x03F7, 0x0481, 1}, {0x048A, 0x052F, 1},
		{0x0531, 0x0556, 1}, {0x10A0, 0x10C5, 1}, {0x13A0, 0x13F5, 1}, {0x13F8, 0x13FD, 1},
		{0x1C90, 0x1CBA, 1}, {0x1CBD, 0x1CBF, 1}, {0x1D00, 0x1D2B, 1}, {0x1D6B, 0x1D77, 1},
		{0x1D79, 0x1D9A, 1}, {0x1E00, 0x1F15, 1}, {0x1F18, 0x1F1D, 1}, {0x1F20, 0x1F45, 1},
		{0x1F48, 0x1F4D, 1}, {0x1F50, 0x1F57, 1}, {0x1F59, 0x1F59, 1}, {0x1F5B, 0x1F5B, 1},
		{0x1F5D, 0x1F5D, 1}, {0x1F5F, 0x1F7D, 1}, {0x1F80, 0x1FB4, 1}, {0x1FB6, 0x1FBC, 1},
		{0x1FBE, 0x1FBE, 1}, {0x1FC2, 0x1FC4, 1}, {0x1FC6, 0x1FCC, 1}, {0x1FD0, 0x1FD3, 1},
		{0x1FD6, 0x1FDB, 1}, {0x1FE0, 0x1FEC, 1}, {0x1FF2, 0x1FF4, 1}, {0x1FF6, 0x1FFC, 1},
		{0x2102, 0x2102, 1}, {0x2107, 0x2107, 1}, {0x210A, 0x2113, 1}, {0x2115, 0x2115, 1},
		{0x2119, 0x211D, 1}, {0x2124, 0x2124, 1}, {0x2126, 0x2126, 1}, {0x2128, 0x2128, 1},
		{0x212A, 0x212D, 1}, {0x212F, 0x2134, 1}, {0x2139, 0x2139, 1}, {0x213C, 0x213F, 1},
		{0x2145, 0x2149, 1}, {0x214E, 0x214E, 1}, {0x2183, 0x2184, 1}, {0x2C00, 0x2C7B, 1},
		{0x2C7E, 0x2CE4, 1}, {0x2CEB, 0x2CEE, 1}, {0x2CF2, 0x2CF3, 1}, {0xA640, 0xA66D, 1},
		{0xA680, 0xA69B, 1}, {0xA722, 0xA76F, 1}, {0xA771, 0xA787, 1}, {0xA78B, 0xA78E, 1},
		{0xAB70, 0xABBF, 1}, {0xFB00, 0xFB06, 1}, {0xFB13, 0xFB17, 1}, {0xFF21, 0xFF3A, 1},
		{0xFF41, 0xFF5A, 1},
	},
	R32: []unicode.Range32{
		{0x10400, 0x1044F, 1}, {0x104B0, 0x104D3, 1}, {0x104D8, 0x104FB, 1}, {0x10C80, 0x10CB2, 1},
		{0x10CC0, 0x10CF2, 1}, {0x118A0, 0x118DF, 1}, {0x1E900, 0x1E943, 1},
	},
}

func isCasedLetter(r rune, _ uint8) bool { return unicode.Is(casedLetters, r) }

// isDeepseekPunct is [!-/:-~！-／：-～‘-‟　-。]: ASCII punctuation and symbols
// (and, from :-~, the ASCII letters), their fullwidth forms (and fullwidth
// Latin), the curly quotes, and 、 。 (U+3000 is whitespace, seen as \v).
func isDeepseekPunct(r rune, _ uint8) bool {
	return ('!' <= r && r <= '/') || (':' <= r && r <= '~') ||
		(0xFF01 <= r && r <= 0xFF0F) || (0xFF1A <= r && r <= 0xFF5E) ||
		(0x2018 <= r && r <= 0x201F) || (0x3000 <= r && r <= 0x3002)
}

// isCJKOrHangul is [一-龥ࠀ-一가-퟿]: U+0800 to U+9FA5 (everything from
// Samaritan to the CJK Unified Ideographs, whitespace aside) and the Hangul
// syllables with Jamo Extended-B.
func isCJKOrHangul(r rune, _ uint8) bool {
	return (0x0800 <= r && r <= 0x9FA5) || (0xAC00 <= r && r <= 0xD7FF)
}

// isCJKOrKana is [一-龥぀-ゟ゠-ヿ]: CJK Unified Ideographs, Hiragana, Katakana.
func isCJKOrKana(r rune, _ uint8) bool {
	return (0x4E00 <= r && r <= 0x9FA5) || (0x3040 <= r && r <= 0x30FF)
}

// matchNumbersUpTo3 is \p{N}{1,3}.
func matchNumbersUpTo3(s string, i int) int {
	j := i
	for k := 0; k < 3; k++ {
		_, c, n := category(s, j)
		if c != catNumber {
			break
		}
		j += n
	}
	return j - i
}

// matchDeepseekV3 is DeepSeek-V3's third expression at s[i], one branch per
// alternative, in order.
func matchDeepseekV3(s string, i int) int {
	r, c, n := category(s, i)
	punctOrSymbol := func(c uint8) bool { return c == catPunct || c == catSymbol }
	letterOrMark := func(_ rune, c uint8) bool { return c == catLetter || c == catMark }
	// [!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+: an ASCII punctuation
	// or symbol character before ASCII letters
	if r < utf8.RuneSelf && punctOrSymbol(c) {
		j := i + 1
		for j < len(s) && ('A' <= s[j] && s[j] <= 'Z' || 'a' <= s[j] && s[j] <= 'z') {
			j++
		}
		if j > i+1 {
			return j - i
		}
	}
	// [^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+
	if letterOrMark(r, c) {
		return runOf(s, i, letterOrMark) - i
	}
	if r != '\r' && r != '\n' && !punctOrSymbol(c) { // a space, digit or other character
		if end := runOf(s, i+n, letterOrMark); end > i+n {
			return end - i
		}
	}
	//  ?[\p{P}\p{S}]+[\r\n]*
	j := i
	if r == ' ' {
		if _, c2, _ := category(s, i+1); punctOrSymbol(c2) {
			j, c = i+1, c2
		}
	}
	if punctOrSymbol(c) {
		j = runOf(s, j, func(_ rune, c uint8) bool { return punctOrSymbol(c) })
		for j < len(s) && (s[j] == '\r' || s[j] == '\n') {
			j++
		}
		return j - i
	}
	// \s*[\r\n]+, else \s+(?!\S)|\s+
	if c == catSpace {
		return splitLines(s, i) - i
	}
	return 0
}
