// pretokenize.go: the pre-tokenizers of byte-level BPE, hand-written scanners
// that split text exactly where llama.cpp's regular expressions do.
package tokenizer

import (
	"fmt"
	"sync"
	"unicode"
	"unicode/utf8"
)

// A splitter appends to ends the end offsets of the words of s (relative to s;
// the last one is len(s)). Several splitters run as a pipeline: each splits
// every word of the one before, and a word's edges are the edges of its text
// (so \s+(?!\S) sees the end of the text at a word's end).
type splitter func(s string, ends []int) []int

// preTokenizers maps tokenizer.ggml.pre to its pipeline and whether a word that
// is itself a token skips merging (llama.cpp's ignore_merges).
var preTokenizers = map[string]struct {
	split        []splitter
	ignoreMerges bool
}{
	// 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)
	"gpt-2": {split: []splitter{splitGPT2}},
	"phi-2": {split: []splitter{splitGPT2}},
	"olmo":  {split: []splitter{splitGPT2}},
	"mpt":   {split: []splitter{splitGPT2}},
	// llama.cpp's other names for GPT-2's expression
	"jina-es":         {split: []splitter{splitGPT2}},
	"jina-de":         {split: []splitter{splitGPT2}},
	"jina-v2-es":      {split: []splitter{splitGPT2}},
	"jina-v2-de":      {split: []splitter{splitGPT2}},
	"jina-v1-en":      {split: []splitter{splitGPT2}},
	"jina-v2-code":    {split: []splitter{splitGPT2}},
	"roberta-bpe":     {split: []splitter{splitGPT2}},
	"modern-bert":     {split: []splitter{splitGPT2}},
	"gigachat":        {split: []splitter{splitGPT2}},
	"a.x-4.0":         {split: []splitter{splitGPT2}},
	"mellum":          {split: []splitter{splitGPT2}},
	"exaone4":         {split: []splitter{splitGPT2}},
	"jais":            {split: []splitter{splitGPT2}},
	"trillion":        {split: []splitter{splitGPT2}},
	"granite-docling": {split: []splitter{splitGPT2}},
	// (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
	"llama-bpe": {split: []splitter{splitLlama3}, ignoreMerges: true},
	"llama3":    {split: []splitter{splitLlama3}, ignoreMerges: true},
	"llama-v3":  {split: []splitter{splitLlama3}, ignoreMerges: true},
	"falcon3":   {split: []splitter{splitLlama3}, ignoreMerges: true},
	"falcon-h1": {split: []splitter{splitLlama3}, ignoreMerges: true},
	"pixtral":   {split: []splitter{splitLlama3}, ignoreMerges: true},
	"midm-2.0":  {split: []splitter{splitLlama3}, ignoreMerges: true},
	"lfm2":      {split: []splitter{splitLlama3}, ignoreMerges: true},
	// the same expression with the merges applied (OLMo 2, DBRX; GLM-4 and
	// GLM-4.5, whose contractions are spelled case by case, '[sS]…)
	"dbrx":        {split: []splitter{splitLlama3}},
	"smaug-bpe":   {split: []splitter{splitLlama3}},
	"glm4":        {split: []splitter{splitLlama3}},
	"chatglm-bpe": {split: []splitter{splitLlama3}},
	// the Llama 3 expression with \p{N} for \p{N}{1,3}
	"qwen2":            {split: []splitter{splitQwen2}},
	"deepseek-r1-qwen": {split: []splitter{splitQwen2}},
	"stablelm2":        {split: []splitter{splitQwen2}},
	"megrez":           {split: []splitter{splitQwen2}},
	"kormo":            {split: []splitter{splitQwen2}},
	// the qwen2 expression with combining marks joining letters:
	// [^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+ and  ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*
	"qwen35": {split: []splitter{splitQwen35}},
	// \p{N}, then the GPT-2 expression
	"smollm":     {split: []splitter{splitEachNumber, splitGPT2}},
	"starcoder":  {split: []splitter{splitEachNumber, splitGPT2}},
	"refact":     {split: []splitter{splitEachNumber, splitGPT2}},
	"command-r":  {split: []splitter{splitEachNumber, splitGPT2}},
	"codeshell":  {split: []splitter{splitEachNumber, splitGPT2}},
	"exaone":     {split: []splitter{splitEachNumber, splitGPT2}},
	"minerva-7b": {split: []splitter{splitEachNumber, splitGPT2}},
	"mellum2":    {split: []splitter{splitEachNumber, splitGPT2}},
	// [\p{P}\$\+<=>\^~\|]+, the GPT-2 expression, \p{N}+, [0-9][0-9][0-9]
	"default": {split: []splitter{splitPunctRuns, splitGPT2, splitNumberRuns, splitDigitTriples}},
	// [\p{P}\$\+<=>\^~\|`]+, the GPT-2 expression, [0-9][0-9][0-9]
	"falcon": {split: []splitter{splitPunctRunsFalcon, splitGPT2, splitDigitTriples}},
	// DeepSeek's sequences of expressions (pretokenize_deepseek.go)
	"deepseek-llm":   {split: deepseekLLM},
	"deepseek-coder": {split: deepseekCoder},
	"deepseek-v3":    {split: deepseekV3},
	"hunyuan-dense":  {split: deepseekV3},
	"joyai-llm":      {split: deepseekV3},
	// letters split where case changes (pretokenize_tekken.go)
	"tekken":     {split: []splitter{splitTekken}, ignoreMerges: true},
	"gpt-4o":     {split: []splitter{splitGPT4o}},
	"llama4":     {split: []splitter{splitGPT4o}},
	"kanana2":    {split: []splitter{splitGPT4o}},
	"talkie":     {split: []splitter{splitGPT4o}},
	"minimax-m2": {split: []splitter{splitGPT4o}},
}

func preTokenizer(pre string) ([]splitter, bool, error) {
	if pre == "" { // no tokenizer.ggml.pre: llama.cpp uses "default"
		pre = "default"
	}
	p, ok := preTokenizers[pre]
	if !ok {
		return nil, false, fmt.Errorf("%w: %q (supported: gpt-2, llama-bpe, qwen2, qwen35, smollm, default, falcon, deepseek-llm, deepseek-coder, deepseek-v3, tekken, gpt-4o, and aliases)", ErrUnknownPre, pre)
	}
	return p.split, p.ignoreMerges, nil
}

// pretokenize splits text into words with the pipeline.
func pretokenize(text string, split []splitter, ends []int) []int {
	ends = split[0](text, ends[:0])
	if len(split) == 1 {
		return ends
	}
	var next []int
	for _, sp := range split[1:] {
		next = next[:0]
		start := 0
		for _, end := range ends {
			n := len(next)
			next = sp(text[start:end], next)
			for i := n; i < len(next); i++ {
				next[i] += start
			}
			start = end
		}
		ends, next = next, ends
	}
	return ends
}

// Character classes, as \p{L}, \p{N}, \s and the rest.
const (
	clNone   uint8 = iota // past the end of the text
	clOther               // [^\s\p{L}\p{N}], also a byte that is not valid UTF-8
	clLetter              // \p{L}
	clNumber              // \p{N}
	clSpace               // \s: Unicode White_Space
)

const clPunct uint8 = 0x80 // flag: \p{P}

var (
	classOnce sync.Once
	bmpClass  []uint8 // class of each rune below 0x10000
)

func initClasses() {
	bmpClass = make([]uint8, 0x10000)
	for r := range bmpClass {
		bmpClass[r] = slowClass(rune(r))
	}
}

func slowClass(r rune) uint8 {
	var c uint8
	switch {
	case unicode.IsSpace(r):
		c = clSpace
	case unicode.IsLetter(r) || isLetter151(r):
		c = clLetter
	case unicode.IsNumber(r):
		c = clNumber
	default:
		c = clOther
	}
	if unicode.IsPunct(r) {
		c |= clPunct
	}
	return c
}

// at returns the rune at s[i], its class (with the punctuation flag) and its
// size in bytes. Past the end it returns clNone and size 0; an invalid byte is
// one character of class clOther.
func at(s string, i int) (rune, uint8, int) {
	if i >= len(s) {
		return -1, clNone, 0
	}
	if b := s[i]; b < utf8.RuneSelf {
		return rune(b), asciiClass[b], 1
	}
	r, n := utf8.DecodeRuneInString(s[i:])
	if r == utf8.RuneError && n == 1 {
		return -1, clOther, 1
	}
	if r < 0x10000 {
		classOnce.Do(initClasses)
		return r, bmpClass[r], n
	}
	return r, slowClass(r), n
}

var asciiClass = func() (t [128]uint8) {
	for i := range t {
		t[i] = slowClass(rune(i))
	}
	return
}()

// class is at's class without the punctuation flag.
func class(s string, i int) uint8 {
	_, c, _ := at(s, i)
	return c &^ clPunct
}

// contraction returns the length of 's 't 're 've 'm 'll 'd at s[i] (which holds
// the apostrophe), or 0. With fold, the letters match in either case.
func contraction(s string, i int, fold bool) int {
	if i+1 >= len(s) || s[i] != '\'' {
		return 0
	}
	low := func(b byte) byte {
		if fold && 'A' <= b && b <= 'Z' {
			return b + 'a' - 'A'
		}
		return b
	}
	switch low(s[i+1]) {
	case 's', 't', 'm', 'd':
		return 2
	}
	if i+2 < len(s) {
		a, b := low(s[i+1]), low(s[i+2])
		if (a == 'r' && b == 'e') || (a == 'v' && b == 'e') || (a == 'l' && b == 'l') {
			return 3
		}
	}
	return 0
}

// skip returns the offset of the first character at or after i whose class is
// not c.
func skip(s string, i int, c uint8) int {
	for i < len(s) {
		_, ci, n := at(s, i)
		if ci&^clPunct != c {
			break
		}
		i += n
	}
	return i
}

// spaces scans the run of whitespace at s[i]. It returns the run's end, the
// start of its last character, its length in characters, and the end of its
// last \r or \n (0 if none).
func spaces(s string, i int) (end, last, count, lastNewline int) {
	end = i
	for end < len(s) {
		r, c, n := at(s, end)
		if c&^clPunct != clSpace {
			break
		}
		last = end
		end += n
		count++
		if r == '\r' || r == '\n' {
			lastNewline = end
		}
	}
	return
}

// splitSpaces ends a whitespace run the way \s+(?!\S)|\s+ does: a run followed
// by a non-space gives its last space to the next word, unless it is one space.
func splitSpaces(s string, i int) int {
	end, last, count, _ := spaces(s, i)
	if count > 1 && end < len(s) {
		return last
	}
	return end
}

// splitLines ends a whitespace run the way \s*[\r\n]+|\s+(?!\S)|\s+ does:
// after its last \r or \n if it holds one, else as splitSpaces.
func splitLines(s string, i int) int {
	if _, _, _, nl := spaces(s, i); nl > 0 {
		return nl
	}
	return splitSpaces(s, i)
}

// skipDigits returns the end of the run of digits at s[i], cut after limit
// digits: \p{N}{1,limit}.
func skipDigits(s string, i, limit int) int {
	for k := 0; k < limit && class(s, i) == clNumber; k++ {
		_, _, n := at(s, i)
		i += n
	}
	return i
}

// splitGPT2 is 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+.
func splitGPT2(s string, ends []int) []int {
	for i := 0; i < len(s); {
		if n := contraction(s, i, false); n > 0 {
			i += n
			ends = append(ends, i)
			continue
		}
		r, c, _ := at(s, i)
		c &^= clPunct
		j := i
		if r == ' ' { // " ?" before a letter, digit or other
			if c2 := class(s, i+1); c2 == clLetter || c2 == clNumber || c2 == clOther {
				c, j = c2, i+1
			}
		}
		switch c {
		case clLetter, clNumber, clOther:
			i = skip(s, j, c)
		default:
			i = splitSpaces(s, i)
		}
		ends = append(ends, i)
	}
	return ends
}

// splitLlama3 is (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}|
// ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+.
func splitLlama3(s string, ends []int) []int { return splitLlama3Like(s, ends, 3, false) }

// splitQwen2 is splitLlama3 with \p{N} in place of \p{N}{1,3}.
func splitQwen2(s string, ends []int) []int { return splitLlama3Like(s, ends, 1, false) }

// splitQwen35 is splitQwen2 with combining marks in the letter runs:
// [^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+ and  ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*. A mark
// is also in [^\r\n\p{L}\p{N}], but the optional character changes nothing
// there: a word that starts at a mark runs to the end of the letters and
// marks either way, so the scanner can take a mark for a letter throughout.
func splitQwen35(s string, ends []int) []int { return splitLlama3Like(s, ends, 1, true) }

// splitLlama3Like is the expression of splitLlama3, splitQwen2 and
// splitQwen35: digits is the most digits a number word holds; with marks, a
// combining mark (\p{M}) is a letter (see atWithMarks).
func splitLlama3Like(s string, ends []int, digits int, marks bool) []int {
	for i := 0; i < len(s); {
		if n := contraction(s, i, true); n > 0 {
			i += n
			ends = append(ends, i)
			continue
		}
		r, c, n := atWithMarks(s, i, marks)
		// [^\r\n\p{L}\p{N}]?\p{L}+
		if c == clLetter {
			i = skipWithMarks(s, i, clLetter, marks)
			ends = append(ends, i)
			continue
		}
		if r != '\r' && r != '\n' && c != clNumber && classWithMarks(s, i+n, marks) == clLetter {
			i = skipWithMarks(s, i+n, clLetter, marks)
			ends = append(ends, i)
			continue
		}
		// \p{N}{1,3}
		if c == clNumber {
			i = skipDigits(s, i, digits)
			ends = append(ends, i)
			continue
		}
		//  ?[^\s\p{L}\p{N}]+[\r\n]*
		j := i
		if r == ' ' && classWithMarks(s, i+1, marks) == clOther {
			c, j = clOther, i+1
		}
		if c == clOther {
			i = skipWithMarks(s, j, clOther, marks)
			for i < len(s) && (s[i] == '\r' || s[i] == '\n') {
				i++
			}
			ends = append(ends, i)
			continue
		}
		// \s*[\r\n]+ then \s+(?!\S)|\s+
		i = splitLines(s, i)
		ends = append(ends, i)
	}
	return ends
}

// atWithMarks is at with the class alone (no punctuation flag) and, with
// marks, a combining mark (\p{M}: Mn, Mc, Me) as clLetter rather than
// clOther. Go's \p{M} is llama.cpp's accent-mark flag: both come from the
// Unicode general category, and the Unicode 15.1 additions that Go's 15.0
// tables lack (see isLetter151) hold no marks.
func atWithMarks(s string, i int, marks bool) (rune, uint8, int) {
	r, c, n := at(s, i)
	c &^= clPunct
	if marks && c == clOther && r >= 0x300 && unicode.IsMark(r) { // no mark is below U+0300
		c = clLetter
	}
	return r, c, n
}

// classWithMarks is atWithMarks's class.
func classWithMarks(s string, i int, marks bool) uint8 {
	_, c, _ := atWithMarks(s, i, marks)
	return c
}

// skipWithMarks is skip with atWithMarks's classes.
func skipWithMarks(s string, i int, c uint8, marks bool) int {
	for i < len(s) {
		_, ci, n := atWithMarks(s, i, marks)
		if ci != c {
			break
		}
		i += n
	}
	return i
}

// splitMatches splits s into the runs that match and the gaps between them;
// match returns the length of the match at i, or 0.
func splitMatches(s string, ends []int, match func(s string, i int) int) []int {
	gap := 0
	for i := 0; i < len(s); {
		m := match(s, i)
		if m == 0 {
			_, _, n := at(s, i)
			i += n
			continue
		}
		if i > gap {
			ends = append(ends, i)
		}
		i += m
		ends = append(ends, i)
		gap = i
	}
	if gap < len(s) {
		ends = append(ends, len(s))
	}
	return ends
}

// splitEachNumber is \p{N}: every digit alone.
func splitEachNumber(s string, ends []int) []int {
	return splitMatches(s, ends, func(s string, i int) int {
		if _, c, n := at(s, i); c&^clPunct == clNumber {
			return n
		}
		return 0
	})
}

// splitNumberRuns is \p{N}+.
func splitNumberRuns(s string, ends []int) []int {
	return splitMatches(s, ends, func(s string, i int) int { return skip(s, i, clNumber) - i })
}

// splitPunctRuns is [\p{P}\$\+<=>\^~\|]+.
func splitPunctRuns(s string, ends []int) []int {
	return splitMatches(s, ends, func(s string, i int) int {
		j := i
		for j < len(s) && isPunctRunChar(s, j) {
			_, _, n := at(s, j)
			j += n
		}
		return j - i
	})
}

// splitPunctRunsFalcon is [\p{P}\$\+<=>\^~\|`]+: splitPunctRuns with the
// backtick.
func splitPunctRunsFalcon(s string, ends []int) []int {
	return splitMatches(s, ends, func(s string, i int) int {
		j := i
		for j < len(s) && (s[j] == '`' || isPunctRunChar(s, j)) {
			_, _, n := at(s, j)
			j += n
		}
		return j - i
	})
}

// isPunctRunChar reports whether s[i] is in [\p{P}\$\+<=>\^~\|].
func isPunctRunChar(s string, i int) bool {
	r, c, _ := at(s, i)
	return c&clPunct != 0 || r == '$' || r == '+' || r == '<' || r == '=' || r == '>' || r == '^' || r == '~' || r == '|'
}

// splitDigitTriples is [0-9][0-9][0-9].
func splitDigitTriples(s string, ends []int) []int {
	digit := func(i int) bool { return i < len(s) && '0' <= s[i] && s[i] <= '9' }
	return splitMatches(s, ends, func(s string, i int) int {
		if digit(i) && digit(i+1) && digit(i+2) {
			return 3
		}
		return 0
	})
}
