package grammar

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"
)

// accepts feeds text byte by byte (each byte a token) and reports whether
// all of it was accepted and whether the object is then complete.
func accepts(text string) (ok, complete bool) {
	g := NewJSON()
	for i := 0; i < len(text); i++ {
		if g.Accept(text[i:i+1]) != nil {
			return false, false
		}
	}
	return true, g.Complete()
}

func TestJSONAccepts(t *testing.T) {
	for _, text := range []string{
		`{}`,
		`{"a":1}`,
		`{ "a" : [1, -2.5e3, true, false, null, "x\u00e9\n\"\\\t"] }`,
		"{\n  \"a\": {\"b\": []},\n\t\t\"c\": 0.125E+7\n}\n",
		`{"n":-0,"m":1234567890123456,"f":0.000,"e":3e9}`,
		"{} ",
	} {
		ok, complete := accepts(text)
		if !ok || !complete {
			t.Errorf("%q: accepted %v, complete %v; want both", text, ok, complete)
		}
	}
}

func TestJSONRefuses(t *testing.T) {
	for text, why := range map[string]string{
		`[]`:                            "the root is an object",
		` {}`:                           "no whitespace before the root",
		`{  }`:                          "one whitespace run: a space, or a newline and [ \\t]{0,20}",
		"{\n\n}":                        "one newline a run",
		"{\n" + strings.Repeat(" ", 21): "at most 20 spaces after the newline",
		`{"a":01}`:                      "no leading zero",
		`{"a":12345678901234567}`:       "at most 16 digits",
		`{"a":1e10}`:                    "exponent digits after the first are [1-9]",
		`{"a":1.}`:                      "a fraction has a digit",
		`{"a":"\/"}`:                    `\/ is no escape here`,
		`{"a":"` + "\t" + `"}`:          "control characters are escaped",
		`{"a":"` + "\x7f" + `"}`:        "and DEL",
		`{"a":1,}`:                      "no trailing comma",
		`{"a" 1}`:                       "a colon after the key",
		`{"a":tru}`:                     "literals are whole",
		`{1:2}`:                         "keys are strings",
		`{}}`:                           "nothing after the root",
		`{}x`:                           "nothing after the root",
		`{"a":[1 2]}`:                   "commas between values",
		`{"a":"\u12g4"}`:                "four hex digits",
	} {
		if ok, _ := accepts(text); ok {
			t.Errorf("%q accepted: %s", text, why)
		}
	}
}

// TestJSONCompleteIsValid: whatever the grammar accepts as complete is
// valid JSON, on random byte strings drawn from JSON's alphabet, and random
// compact objects encoding/json writes (integers and strings) are accepted.
func TestJSONCompleteIsValid(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	alphabet := []string{"{", "}", "[", "]", ",", ":", `"`, "a", "1", "0", "-", ".", "e", "+", " ", "\n", "\\", "u", "t", "true", "null", "é"}
	complete := 0
	for range 200000 {
		var sb strings.Builder
		sb.WriteString("{")
		for range r.IntN(12) {
			sb.WriteString(alphabet[r.IntN(len(alphabet))])
		}
		text := sb.String()
		if ok, done := accepts(text); ok && done {
			complete++
			if !json.Valid([]byte(text)) {
				t.Fatalf("%q complete under the grammar, invalid JSON", text)
			}
		}
	}
	if complete < 100 {
		t.Errorf("only %d random strings were complete objects: the check saw too few", complete)
	}
	var value func(depth int) any
	value = func(depth int) any {
		switch k := r.IntN(6); {
		case k == 0 && depth < 3:
			m := map[string]any{}
			for i := range r.IntN(4) {
				m[fmt.Sprintf("k%d<&>", i)] = value(depth + 1)
			}
			return m
		case k == 1 && depth < 3:
			a := make([]any, r.IntN(4))
			for i := range a {
				a[i] = value(depth + 1)
			}
			return a
		case k == 2:
			return r.Int64N(math.MaxInt64>>10) - math.MaxInt64>>11
		case k == 3:
			c := rune(r.IntN(0x800))
			if c == 0x7f { // the grammar wants DEL escaped; encoding/json writes it raw
				c = 'x'
			}
			return string([]rune{c, '"', '\\', '\n', 0x1f, 'é'})
		case k == 4:
			return r.IntN(2) == 0
		}
		return nil
	}
	for range 2000 {
		obj := map[string]any{"v": value(0)}
		b, _ := json.Marshal(obj)
		if ok, done := accepts(string(b)); !ok || !done {
			g := NewJSON()
			i := 0
			for i < len(b) && g.Accept(string(b[i:i+1])) == nil {
				i++
			}
			t.Fatalf("%q: accepted %v, complete %v (refused at byte %d)", b, ok, done, i)
		}
		if b2, _ := json.MarshalIndent(obj, "", "\t"); !strings.Contains(string(b2), "\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t") {
			if ok, done := accepts(strings.ReplaceAll(strings.ReplaceAll(string(b2), "\": ", "\":"), ": ", ":")); !ok || !done {
				t.Fatalf("%s (indented): accepted %v, complete %v", b2, ok, done)
			}
		}
	}
}

// TestJSONPieces: tokens are read as llama.cpp reads them.
func TestJSONPieces(t *testing.T) {
	open := func() *JSON {
		g := NewJSON()
		if err := g.Accept(`{"a":"`); err != nil {
			t.Fatal(err)
		}
		return g
	}
	g := open()
	// é split over two tokens: the first ends in a lead byte (allowed in a
	// string), the second must continue it.
	if err := g.Accept("\xc3"); err != nil {
		t.Fatalf("a lead byte at the end of a token, in a string: %v", err)
	}
	if g.Accepts(`"`) {
		t.Error("a quote where the é's continuation byte must come was accepted")
	}
	if err := g.Accept("\xa9\"}"); err != nil || !g.Complete() {
		t.Errorf("finishing é then the object: %v, complete %v", err, g.Complete())
	}
	for piece, want := range map[string]bool{
		"\xc3\"}": true,  // llama.cpp takes the byte after a lead as its continuation: one character, the string goes on
		"\x80":    false, // a continuation byte where a character starts
		"\xc1":    false, // an overlong 2-byte lead
		"x\x00y":  true,  // a NUL ends the piece
		"\x00":    false, // an empty piece
		"":        false,
	} {
		if got := open().Accepts(piece); got != want {
			t.Errorf("Accepts(%q) in a string = %v, want %v", piece, got, want)
		}
	}
	g = open()
	g.Accept("\xc3\"}")
	if g.Complete() {
		t.Error(`"\xc3\"}" closed the string and the object; llama.cpp reads it as one character`)
	}
	if NewJSON().Accepts("\xc3") {
		t.Error("an unfinished character where '{' must come was accepted")
	}
}

type vocab []string

func (v vocab) Piece(id int32) string { return v[id] }
func (v vocab) IsEOG(id int32) bool   { return id == 0 }

func TestJSONMask(t *testing.T) {
	v := vocab{"</s>", "{", "}", `"`, "a", " ", "  ", "", ":", "1"}
	g := NewJSON()
	logits := make([]float32, len(v))
	g.Mask(logits, v)
	for id, l := range logits {
		if allowed := !math.IsInf(float64(l), -1); allowed != (v[id] == "{") {
			t.Errorf("at the start, %q allowed %v", v[id], allowed)
		}
	}
	for _, p := range []string{"{", "}"} {
		if err := g.Accept(p); err != nil {
			t.Fatal(err)
		}
	}
	logits = make([]float32, len(v))
	g.Mask(logits, v)
	for id, l := range logits {
		want := v[id] == "</s>" || v[id] == " " // complete: the end, or its one space
		if allowed := !math.IsInf(float64(l), -1); allowed != want {
			t.Errorf("after {}, %q allowed %v, want %v", v[id], allowed, want)
		}
	}
}

// FuzzJSON: pieces of any bytes, fed in turn. Whatever the grammar takes
// as a complete object is valid JSON; a refused piece leaves the state as
// it was; feeding a piece whole or byte by byte ends the same way when
// both are accepted and the piece holds only ASCII (UTF-8 sequences are
// judged per token, as llama.cpp judges them).
//
//	go test -fuzz=FuzzJSON ./toy/grammar
func FuzzJSON(f *testing.F) {
	f.Add([]byte(`{"a":[1,2.5e3,true,null,"\u00e9"]}`), uint8(3))
	f.Add([]byte("{\n\t\"k\": {}} "), uint8(1))
	f.Add([]byte("{\"\xc3\xa9\":\"\xe2\x82\xac\"}"), uint8(2))
	f.Fuzz(func(t *testing.T, text []byte, cut uint8) {
		g := NewJSON()
		var accepted []byte
		step := int(cut%7) + 1
		for i := 0; i < len(text); i += step {
			piece := string(text[i:min(i+step, len(text))])
			before := *g
			if g.Accept(piece) != nil {
				if g.at != before.at || g.ws != before.ws || g.partial != before.partial || len(g.stack) != len(before.stack) {
					t.Fatalf("a refused piece %q changed the state", piece)
				}
				continue
			}
			if nul := strings.IndexByte(piece, 0); nul >= 0 {
				piece = piece[:nul] // the grammar reads a token up to a NUL, as llama.cpp does
			}
			accepted = append(accepted, piece...)
		}
		// (Only for valid UTF-8: llama.cpp takes the byte after a lead as its
		// continuation unchecked, so a quote can vanish into a broken character.)
		if g.Complete() && g.partial.remain == 0 && utf8.Valid(accepted) && !json.Valid(accepted) {
			t.Fatalf("%q is complete under the grammar but not valid JSON", accepted)
		}
		ascii := true
		for _, c := range accepted {
			ascii = ascii && c < 0x80 && c != 0
		}
		if ascii {
			h := NewJSON()
			for i := range accepted {
				if err := h.Accept(string(accepted[i : i+1])); err != nil {
					t.Fatalf("%q accepted in pieces of %d, byte %d refused alone: %v", accepted, step, i, err)
				}
			}
			if h.Complete() != g.Complete() || h.at != g.at {
				t.Fatalf("%q: in pieces of %d and byte by byte the states differ", accepted, step)
			}
		}
	})
}

// TestJSONAllowTail: with AllowTail the value may end inside a token and
// anything may follow; without, nothing but whitespace.
func TestJSONAllowTail(t *testing.T) {
	g := NewJSON()
	g.AllowTail()
	if err := g.Accept(`{"a":"b`); err != nil || g.Ended() {
		t.Fatalf("the value so far: %v, ended %v", err, g.Ended())
	}
	if err := g.Accept("\"}}\n</tool_call>"); err != nil || !g.Ended() {
		t.Fatalf(`"}} and the call's closing in one token: %v, ended %v`, err, g.Ended())
	}
	if err := g.Accept("anything \x00 at all"); err != nil {
		t.Errorf("after the end: %v", err)
	}
	logits := []float32{1, 2}
	g.Mask(logits, vocab{"</s>", "x"})
	if logits[0] != 1 || logits[1] != 2 {
		t.Errorf("Mask after the end changed %v", logits)
	}
	h := NewJSON()
	h.Accept(`{"a":"b`)
	if h.Accepts("\"}}") {
		t.Error(`without AllowTail, "}} was accepted`)
	}
}

// TestTokensFork: a fork follows its own tokens; the original is left as
// it was.
func TestTokensFork(t *testing.T) {
	v := vocab{"</s>", "{", "}", `"a"`, ":", "1"}
	for _, st := range []State{NewJSON(), NewMatcher(mustGBNF(t, `root ::= "{" ("\"a\"" ":" "1")? "}"`))} {
		orig := Tokens{State: st, Vocab: v}
		orig.Accept(1) // {
		f, ok := orig.Fork().(Tokens)
		if !ok {
			t.Fatalf("%T: no fork", st)
		}
		f.Accept(3) // "a"
		if !orig.Allows(2) || orig.Allows(4) || f.Allows(2) || !f.Allows(4) {
			t.Errorf("%T: original and fork are not independent", st)
		}
	}
	if (Tokens{State: nil, Vocab: v}).Fork() != nil {
		t.Error("a state that cannot be cloned forked")
	}
}

func mustGBNF(t *testing.T, src string) *GBNF {
	t.Helper()
	g, err := ParseGBNF(src, nil)
	if err != nil {
		t.Fatal(err)
	}
	return g
}
