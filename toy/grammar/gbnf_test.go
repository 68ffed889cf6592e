package grammar

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// jsonGBNF is the JSON grammar JSON implements, written in GBNF: the
// Matcher and the JSON automaton must agree on every mask.
const jsonGBNF = `# JSON as grammar.JSON reads it
root   ::= object
value  ::= object | array | string | number | ("true" | "false" | "null") ws
object ::=
  "{" ws (
    string ":" ws value
    ("," ws string ":" ws value)*
  )? "}" ws
array  ::= "[" ws ( value ("," ws value)* )? "]" ws
string ::= "\"" ( [^"\\\x7F\x00-\x1F] | "\\" (["\\bfnrt] | "u" [0-9a-fA-F]{4}) )* "\"" ws
number ::= ("-"? ([0-9] | [1-9] [0-9]{0,15})) ("." [0-9]+)? ([eE] [-+]? [0-9] [1-9]{0,15})? ws
ws     ::= | " " | "\n" [ \t]{0,20}
`

func parseOrFail(t testing.TB, src string) *GBNF {
	t.Helper()
	g, err := ParseGBNF(src, nil)
	if err != nil {
		t.Fatalf("%v\n%s", err, src)
	}
	return g
}

// matches feeds text one byte a piece and reports whether all of it was
// taken and whether the grammar is then complete.
func matches(g *GBNF, text string) (ok, complete bool) {
	m := NewMatcher(g)
	for i := 0; i < len(text); i++ {
		if m.Accept(text[i:i+1]) != nil {
			return false, false
		}
	}
	return true, m.Complete()
}

func TestGBNFLanguage(t *testing.T) {
	for _, c := range []struct {
		grammar string
		yes, no []string // complete texts; texts refused or incomplete
	}{
		{`root ::= "a" "b"* "c"`, []string{"ac", "abc", "abbbbc"}, []string{"", "a", "abb", "acc", "bc"}},
		{`root ::= "ab"+`, []string{"ab", "abab"}, []string{"", "a", "aba", "abb"}},
		{`root ::= "x"? "y"`, []string{"y", "xy"}, []string{"xxy", "x"}},
		{`root ::= [a-c]{2}`, []string{"ab", "cc"}, []string{"a", "abc", "ad"}},
		{`root ::= [0-9]{2,}`, []string{"12", "12345"}, []string{"1", "1a"}},
		{`root ::= [0-9]{1,3} "."`, []string{"1.", "123."}, []string{".", "1234."}},
		{`root ::= [0-9]{0,2}`, []string{"", "1", "12"}, []string{"123"}},
		{`root ::= [^a-z\n]+`, []string{"ABC", "1 2", "é"}, []string{"a", "A\n"}},
		{`root ::= .{3}`, []string{"abc", "a\nb", "ééé"}, []string{"ab", "abcd"}},
		{`root ::= ("(" root ")")*`, []string{"", "()", "(())()", "((()))"}, []string{"(", ")(", "(()"}},
		{"root ::= a-1 | b2\na-1 ::= \"x\" # a comment\nb2 ::= \"y\" b2?\n", []string{"x", "y", "yyy"}, []string{"xy", ""}},
		{`root ::= "\x41\u00e9\U0001F600\t\n\r\\\"\[\]\-"`, []string{"Aé😀\t\n\r\\\"[]-"}, []string{"A"}},
		{`root ::= [\]\-a]+`, []string{"]-a", "a-]"}, []string{"b", "["}},
		{`root ::= [a-]+`, []string{"a-", "-"}, []string{"b"}},
		{`root ::= "é" [à-ÿ] "中"`, []string{"éü中"}, []string{"eü中", "éa中"}},
		{"root ::= ( \"a\"\n  | \"b\" # comment\n  )\n", []string{"a", "b"}, []string{"ab"}},
		{`root ::= "" "a"`, []string{"a"}, []string{""}},
		{"root ::= x\nx ::= \"1\"\nx ::= \"2\"", []string{"2"}, []string{"1"}}, // the later definition wins, as in llama.cpp
		{`root ::= "a"{0,3000}`, []string{strings.Repeat("a", 2500)}, nil},     // over 2000: no bound, as in llama.cpp
		{"root ::= ws \"a\"\nws ::= [ ]*", []string{"a", "   a"}, []string{"a "}},
	} {
		g := parseOrFail(t, c.grammar)
		for _, text := range c.yes {
			if ok, complete := matches(g, text); !ok || !complete {
				t.Errorf("%q: %q taken %v, complete %v; want both", c.grammar, text, ok, complete)
			}
		}
		for _, text := range c.no {
			if ok, complete := matches(g, text); ok && complete {
				t.Errorf("%q: %q matched", c.grammar, text)
			}
		}
	}
}

func TestGBNFErrors(t *testing.T) {
	for src, want := range map[string]string{
		``:                        "no rule named root",
		`a ::= "x"`:               "no rule named root",
		`root ::= a`:              "undefined rule a",
		`root = "x"`:              "expecting ::=",
		`root ::= "x`:             "unterminated literal",
		`root ::= [a-`:            "unterminated character class",
		`root ::= []`:             "empty character class",
		`root ::= "\q"`:           "unknown escape",
		`root ::= "\x4"`:          "expecting 2 hex digits",
		`root ::= "\U00110000"`:   "out of range",
		`root ::= * "a"`:          "nothing before it",
		`root ::= "a"{2`:          "expecting , or }",
		`root ::= "a"{2,3`:        "expecting }",
		`root ::= "a"{3,2}`:       "below the minimum",
		`root ::= "a"{2001}`:      "over 2000",
		`root ::= ("a"`:           "expecting )",
		"root ::= \"a\" )":        "expecting a newline",
		"root ::= \"a\"\n| \"b\"": "expecting a rule name",
		`root ::= root "a"`:       "left-recursive",
		"root ::= x \"a\"\nx ::= y? root\ny ::= \"b\"": "left-recursive",
		`root ::= <think>`:         "needs a vocabulary",
		`root ::= <[12`:            "unterminated token",
		`root ::= <[x]>`:           "bad token id",
		"root ::= \"\xff\"":        "invalid UTF-8",
		`root ::= "a"{2000}{2000}`: "expands to over",
	} {
		_, err := ParseGBNF(src, nil)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want %q", src, err, want)
		}
	}
	_, err := ParseGBNF("root ::= \"a\"\n\nroot ::= \"a\" bad ::=", nil)
	if err == nil || !strings.Contains(err.Error(), "line 3 col") {
		t.Errorf("error %v does not name line 3", err)
	}
}

// randomVocab mixes JSON's pieces, multi-byte characters whole and split,
// bytes that decode to nothing valid, and NULs.
func randomVocab(r *rand.Rand, n int) vocab {
	parts := []string{"{", "}", "[", "]", ",", ":", `"`, " ", "\n", "\t", "a", "é", "中", "1", "0", "-", ".", "e", "E", "+", "\\", "u", "b", "f", "t", "true", "false", "null", "x"}
	v := vocab{"</s>"}
	for len(v) < n {
		var sb strings.Builder
		for range 1 + r.IntN(4) {
			sb.WriteString(parts[r.IntN(len(parts))])
		}
		s := sb.String()
		switch r.IntN(10) {
		case 0: // a multi-byte character split at its end or start
			s = s + "\xe4\xb8"
		case 1:
			s = "\xad" + s
		case 2:
			s = "\xb8\xad"
		case 3:
			s = s + "\x00z"
		case 4:
			s = "\xff" + s
		case 5:
			s = "\xc3"
		case 6: // an overlong NUL: a code point 0 ends what the grammar reads
			s = s + "\xc0\x80" + s
		}
		v = append(v, s)
	}
	return v
}

func allowedSet(logits []float32) []bool {
	out := make([]bool, len(logits))
	for i, l := range logits {
		out[i] = !math.IsInf(float64(l), -1)
	}
	return out
}

// TestGBNFJSONAgreesWithJSON: the JSON grammar written in GBNF masks every
// token as the JSON automaton does, along random walks over a vocabulary
// of pieces whole and broken, and both agree that the text is complete.
// Two implementations of one language, by different means.
func TestGBNFJSONAgreesWithJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	v := randomVocab(r, 600)
	g := parseOrFail(t, jsonGBNF)
	steps, ended := 0, 0
	for walk := range 60 {
		m, j := NewMatcher(g), NewJSON()
		for step := range 80 {
			lm, lj := make([]float32, len(v)), make([]float32, len(v))
			m.Mask(lm, v)
			j.Mask(lj, v)
			am, aj := allowedSet(lm), allowedSet(lj)
			var allowed []int32
			for id := range am {
				if am[id] != aj[id] {
					t.Fatalf("walk %d step %d: token %q: GBNF allows %v, JSON %v", walk, step, v[id], am[id], aj[id])
				}
				if am[id] != m.AllowsToken(int32(id), v) {
					t.Fatalf("walk %d step %d: token %q: Mask %v, AllowsToken %v", walk, step, v[id], am[id], !am[id])
				}
				if am[id] {
					allowed = append(allowed, int32(id))
				}
			}
			steps++
			if len(allowed) == 0 {
				break // a split character no token of the vocabulary finishes
			}
			id := allowed[r.IntN(len(allowed))]
			if id == 0 {
				ended++
				break
			}
			if err := m.AcceptToken(id, v); err != nil {
				t.Fatal(err)
			}
			if err := j.AcceptToken(id, v); err != nil {
				t.Fatal(err)
			}
			if m.Complete() != j.Complete() {
				t.Fatalf("walk %d: after %q complete GBNF %v, JSON %v", walk, v[id], m.Complete(), j.Complete())
			}
		}
	}
	t.Logf("%d masks of %d tokens agree; %d walks ended", steps, len(v), ended)
	if ended == 0 {
		t.Error("no walk completed an object: the test exercises too little")
	}
}

// TestGBNFMaskAgreesWithAllows: the one-walk Mask judges every token as
// AllowsToken does, on grammars with classes, any character, unicode and
// repetitions, after texts that end in unfinished characters too.
func TestGBNFMaskAgreesWithAllows(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	v := randomVocab(r, 400)
	for _, src := range []string{
		`root ::= ([a-z"{}:] | "é" | [^\x00-\x7F]{2})+ "."`,
		`root ::= (. | "\n")* "}"`,
		`root ::= [^中a]* ("x" | "中"){1,3}`,
		jsonGBNF,
	} {
		g := parseOrFail(t, src)
		for range 20 {
			m := NewMatcher(g)
			for range 30 {
				logits := make([]float32, len(v))
				m.Mask(logits, v)
				var allowed []int32
				for id, ok := range allowedSet(logits) {
					if ok != m.AllowsToken(int32(id), v) {
						t.Fatalf("%s: token %q: Mask %v, AllowsToken %v", src, v[id], ok, !ok)
					}
					if ok && id != 0 {
						allowed = append(allowed, int32(id))
					}
				}
				if len(allowed) == 0 {
					break
				}
				m.AcceptToken(allowed[r.IntN(len(allowed))], v)
			}
		}
	}
}

// TestGBNFPartialCharacters: a character split over tokens, judged as
// llama.cpp judges it.
func TestGBNFPartialCharacters(t *testing.T) {
	g := parseOrFail(t, `root ::= "x" [é-ü]* "."`)
	m := NewMatcher(g)
	for piece, want := range map[string]bool{
		"x\xc3":  true,  // é and ü start with C3
		"x\xe4":  false, // a 3-byte character is past ü
		"x\xc1":  false, // overlong
		"\x80":   false,
		"x\x00?": true, // the NUL ends the text read
		"\x00x":  false,
	} {
		if got := m.Accepts(piece); got != want {
			t.Errorf("Accepts(%q) = %v, want %v", piece, got, want)
		}
	}
	if err := m.Accept("x\xc3"); err != nil {
		t.Fatal(err)
	}
	if m.Accepts(".") {
		t.Error("a full stop where a continuation byte must come was taken")
	}
	if !m.Accepts("\xa9.") || m.Accepts("\x80.") { // é; U+00C0 is outside [é-ü]
		t.Error("the continuation byte is not judged by the class")
	}
}

// TestGBNFTokens: token elements match whole tokens by id, and by text
// through a TokenIDs.
func TestGBNFTokens(t *testing.T) {
	v := vocab{"</s>", "<think>", "a", "b", "</think>", "ab"}
	g, err := ParseGBNF(`root ::= <think> (!<[4]>)* <[4]> "a"`, v)
	if err != nil {
		t.Fatal(err)
	}
	m := NewMatcher(g)
	mask := func() []bool {
		l := make([]float32, len(v))
		m.Mask(l, v)
		return allowedSet(l)
	}
	if a := mask(); !a[1] || a[2] || a[4] || a[0] {
		t.Fatalf("at the start only <think>: %v", a)
	}
	if m.Accepts("<think>") {
		t.Error("a token element matched text")
	}
	for _, id := range []int32{1, 2, 5, 1} {
		if err := m.AcceptToken(id, v); err != nil {
			t.Fatal(err)
		}
	}
	if a := mask(); !a[2] || !a[3] || !a[4] || a[0] {
		t.Fatalf("inside, anything but </s>: %v", a)
	}
	m.AcceptToken(4, v)
	if a := mask(); !a[2] || a[5] || a[0] {
		t.Fatalf("after </think> only a: %v", a)
	}
	m.AcceptToken(2, v)
	if a := mask(); !a[0] || a[2] || !m.Complete() {
		t.Fatalf("at the end only </s>: %v", a)
	}
}

// vocab's ID finds a token by its text, for token elements.
func (v vocab) ID(text string) int32 {
	for id, p := range v {
		if p == text {
			return int32(id)
		}
	}
	return -1
}

// FuzzGBNF: any source either parses or fails with an error; a parsed
// grammar follows any text without a panic, its mask agreeing with
// AllowsToken.
//
//	go test -fuzz=FuzzGBNF ./toy/grammar
func FuzzGBNF(f *testing.F) {
	f.Add(jsonGBNF, []byte(`{"a": [1, "é"]}`))
	f.Add(`root ::= ("(" root ")")* [^a-z]{1,3} .`, []byte("(())AB"))
	f.Add("root ::= x+ | <[2]>\nx ::= [\\x00-\\U0010FFFF] \"\\u00e9\"?", []byte("\xc3\xa9z"))
	v := vocab{"</s>", "a", "(", ")", "\xc3", "\xa9", "é", "{", "}", `"`, " ", "1", "\n", "A", "中"}
	f.Fuzz(func(t *testing.T, src string, text []byte) {
		g, err := ParseGBNF(src, v)
		if err != nil {
			if g != nil {
				t.Fatal("a grammar and an error")
			}
			return
		}
		m := NewMatcher(g)
		for i := 0; i < len(text) && i < 64; i++ {
			logits := make([]float32, len(v))
			m.Mask(logits, v)
			for id, ok := range allowedSet(logits) {
				if ok != m.AllowsToken(int32(id), v) {
					t.Fatalf("token %q: Mask %v, AllowsToken %v", v[id], ok, !ok)
				}
			}
			id := int32(text[i]) % int32(len(v))
			before := len(m.stacks)
			if m.AcceptToken(id, v) != nil && len(m.stacks) != before {
				t.Fatal("a refused token changed the state")
			}
		}
	})
}

// TestQuoteGBNF: a quoted string parses back to itself, specials and all.
func TestQuoteGBNF(t *testing.T) {
	for _, s := range []string{"plain", `a "quoted" \ back`, "tab\tnew\nline\rcr\x01\x7f", "déjà 漢字", ""} {
		g, err := ParseGBNF("root ::= "+QuoteGBNF(s), nil)
		if err != nil {
			t.Fatalf("%q: %v", s, err)
		}
		m := NewMatcher(g)
		if s != "" && m.Accept(s) != nil || !m.Complete() {
			t.Errorf("%q does not match its own literal %s", s, QuoteGBNF(s))
		}
	}
}
