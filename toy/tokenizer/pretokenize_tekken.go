// pretokenize_tekken.go: the pre-tokenizers that split words where letter
// case changes: Mistral's Tekken (tekken: Mistral Nemo, Ministral, Pixtral,
// Mistral Small 3) and GPT-4o's o200k (gpt-4o: gpt-oss, Llama 4), as
// llama.cpp runs them.
//
// Their tokenizer.json expressions put a run of \p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}
// before a run of \p{Ll}\p{Lm}\p{Lo}\p{M}. llama.cpp runs instead
//
//	((?=[\p{L}])([^a-z]))   a letter that is not a-z: "upper"
//	((?=[\p{L}])([^A-Z]))   a letter that is not A-Z: "lower"
//
// with the C++ std::regex, which sees every non-ASCII letter as one and the
// same character (its category; see pretokenize_deepseek.go). So A-Z are
// upper, a-z lower, every non-ASCII letter both (É as much as é or 日), and
// combining marks neither: they are not \p{L}. toy follows what llama.cpp
// runs, not the tokenizer.json expression.
package tokenizer

import "unicode/utf8"

// splitTekken is Tekken's expression as llama.cpp runs it:
//
//	[^\r\n\p{L}\p{N}]?((?=[\p{L}])([^a-z]))*((?=[\p{L}])([^A-Z]))+|
//	[^\r\n\p{L}\p{N}]?((?=[\p{L}])([^a-z]))+((?=[\p{L}])([^A-Z]))*|
//	\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+
func splitTekken(s string, ends []int) []int { return splitCased(s, ends, 1, false) }

// splitGPT4o is GPT-4o's expression as llama.cpp runs it: Tekken's, with an
// optional contraction after the letters and up to three digits a word:
//
//	[^\r\n\p{L}\p{N}]?((?=[\p{L}])([^a-z]))*((?=[\p{L}])([^A-Z]))+
//	  (?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|
//	[^\r\n\p{L}\p{N}]?((?=[\p{L}])([^a-z]))+((?=[\p{L}])([^A-Z]))*
//	  (?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|
//	\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+
func splitGPT4o(s string, ends []int) []int { return splitCased(s, ends, 3, true) }

// splitCased is the expression of splitTekken and splitGPT4o: digits is the
// most digits a number word holds; contractions adds the optional
// contraction after a letter word.
func splitCased(s string, ends []int, digits int, contractions bool) []int {
	for i := 0; i < len(s); {
		r, c, n := at(s, i)
		c &^= clPunct
		// [^\r\n\p{L}\p{N}]? then the letters of casedWord
		p := i
		if c != clLetter && c != clNumber && r != '\r' && r != '\n' {
			p = i + n
		}
		if end := casedWord(s, p); end > p {
			if contractions {
				end += contraction(s, end, true)
			}
			i = end
			ends = append(ends, i)
			continue
		}
		// \p{N} or \p{N}{1,3}
		if c == clNumber {
			i = skipDigits(s, i, digits)
			ends = append(ends, i)
			continue
		}
		//  ?[^\s\p{L}\p{N}]+[\r\n/]*
		j := i
		if r == ' ' && class(s, i+1) == clOther {
			c, j = clOther, i+1
		}
		if c == clOther {
			i = skip(s, j, clOther)
			for i < len(s) && (s[i] == '\r' || s[i] == '\n' || s[i] == '/') {
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

// casedWord returns the end of the letters at s[i] that the two letter
// alternatives match, or i where s[i] is not a letter. With upper and lower
// as in the file comment:
//
//   - upper* lower+: the run of upper letters, then the run of lower ones
//     after it; where no lower letter follows the upper run, the run up to
//     its last non-ASCII letter (upper* gives that one back to lower+);
//   - upper+ lower*: else the upper run alone, all A-Z.
func casedWord(s string, i int) int {
	q, lastBoth := i, -1 // end of the upper run; end of its last non-ASCII letter
	for {
		r, c, n := at(s, q)
		if c&^clPunct != clLetter || ('a' <= r && r <= 'z') {
			break
		}
		q += n
		if r >= utf8.RuneSelf {
			lastBoth = q
		}
	}
	if isLower(s, q) {
		for isLower(s, q) {
			_, _, n := at(s, q)
			q += n
		}
		return q
	}
	if lastBoth >= 0 {
		return lastBoth
	}
	return q
}

// isLower reports whether s[i] is a letter that is not A-Z.
func isLower(s string, i int) bool {
	r, c, _ := at(s, i)
	return c&^clPunct == clLetter && !('A' <= r && r <= 'Z')
}
