package grammar

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

const personSchema = `{
	"type": "object",
	"title": "a person",
	"properties": {
		"name": {"type": "string", "description": "the full name"},
		"age": {"type": "integer"},
		"height": {"type": ["number", "null"]},
		"tags": {"type": "array", "items": {"enum": ["a", "b\"c", "déjà"]}, "maxItems": 2},
		"pets": {"type": "array", "items": {"type": "object", "properties": {"kind": {"const": "cat"}, "lives": {"enum": [9, 7, 1.5]}}, "required": ["kind"]}, "minItems": 1},
		"meta": {"type": "object", "additionalProperties": {"type": "boolean"}},
		"any": {}
	},
	"required": ["name", "age"]
}`

// pydanticSchema is what Pydantic 2 writes for
//
//	class Pet(BaseModel): kind: Literal["cat", "dog"]; age: int | None = None
//	class Person(BaseModel): name: str; pets: list[Pet]; best: Pet | None = None; born: datetime; boss: "Person | None" = None
const pydanticSchema = `{
	"$defs": {
		"Pet": {"properties": {"kind": {"enum": ["cat", "dog"], "title": "Kind", "type": "string"},
			"age": {"anyOf": [{"type": "integer"}, {"type": "null"}], "default": null, "title": "Age"}},
			"required": ["kind"], "title": "Pet", "type": "object"},
		"Person": {"properties": {"name": {"title": "Name", "type": "string"},
			"pets": {"items": {"$ref": "#/$defs/Pet"}, "title": "Pets", "type": "array"},
			"best": {"anyOf": [{"$ref": "#/$defs/Pet"}, {"type": "null"}], "default": null},
			"born": {"format": "date-time", "title": "Born", "type": "string"},
			"boss": {"anyOf": [{"$ref": "#/$defs/Person"}, {"type": "null"}], "default": null}},
			"required": ["name", "pets", "born"], "title": "Person", "type": "object"}
	},
	"$ref": "#/$defs/Person"
}`

func compileOrFail(t *testing.T, s string) *Schema {
	t.Helper()
	c, err := CompileSchema([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// acceptsSchema feeds text byte by byte under s.
func acceptsSchema(s *Schema, text string) (ok, complete bool) {
	g := NewJSONSchema(s)
	for i := 0; i < len(text); i++ {
		if g.Accept(text[i:i+1]) != nil {
			return false, false
		}
	}
	return true, g.Complete()
}

func TestSchemaAccepts(t *testing.T) {
	s := compileOrFail(t, personSchema)
	for _, text := range []string{
		`{"name":"Ada","age":36}`,
		`{"name":"Ada","age":36,"height":1.65,"tags":["b\"c","déjà"]}`,
		`{"name":"x","age":-1,"height":null,"pets":[{"kind":"cat","lives":9},{"kind":"cat","lives":1.5}]}`,
		`{"name":"x","age":0,"meta":{"ok":true,"no":false},"any":{"k":[1,"x",null]}}`,
		"{\n  \"name\": \"x\",\n  \"age\": 7\n}",
	} {
		if ok, complete := acceptsSchema(s, text); !ok || !complete {
			t.Errorf("%s: accepted %v, complete %v; want both", text, ok, complete)
		}
	}
}

// TestSchemaPydantic: refs (recursive too), Optional fields as anyOf with
// null, a date-time.
func TestSchemaPydantic(t *testing.T) {
	s := compileOrFail(t, pydanticSchema)
	for _, text := range []string{
		`{"name":"a","pets":[],"born":"2020-01-31T23:59:59Z"}`,
		`{"name":"a","pets":[{"kind":"cat","age":null},{"kind":"dog","age":3}],"born":"2020-01-31T23:59:59.123+01:00","best":{"kind":"dog"}}`,
		`{"name":"a","pets":[],"born":"2020-01-31T23:59:59Z","boss":{"name":"b","pets":[],"born":"1999-12-01T00:00:00Z","boss":null}}`,
	} {
		if ok, complete := acceptsSchema(s, text); !ok || !complete {
			t.Errorf("%s: accepted %v, complete %v; want both", text, ok, complete)
		}
	}
	for _, text := range []string{
		`{"name":"a","pets":[{"kind":"cow"}],"born":"2020-01-31T23:59:59Z"}`,
		`{"name":"a","pets":[],"born":"2020-01-31T23:59:59Z","best":[]}`,
		`{"name":"a","pets":[],"born":"2020-01-31T23:59:59Z","boss":{"name":"b"}}`,
		`{"name":"a","pets":[{"kind":"cat","age":"3"}],"born":"2020-01-31T23:59:59Z"}`,
		`{"name":"a","pets":[],"born":"2020-13-01T00:00:00Z"}`,
		`{"name":"a","pets":[],"born":"2020"}`,
	} {
		if ok, _ := acceptsSchema(s, text); ok {
			t.Errorf("%s accepted", text)
		}
	}
}

func TestSchemaRefuses(t *testing.T) {
	s := compileOrFail(t, personSchema)
	for text, why := range map[string]string{
		`{"name":"x"}`:                                           "age is required",
		`{"name":1,"age":1}`:                                     "name is a string",
		`{"name":"x","age":1.5}`:                                 "age is an integer",
		`{"name":"x","age":1e3}`:                                 "age is an integer",
		`{"name":"x","age":1,"color":1}`:                         "no other keys",
		`{"name":"x","name":"y","age":1}`:                        "each key once",
		`{"age":36,"name":"Ada"}`:                                "keys in the schema's order",
		`{"name":"x","age":1,"meta":{},"tags":[]}`:               "optional keys in the schema's order too",
		`{"name":"x" ,"age":1}`:                                  "no space before a comma",
		`{"name":"x","age":1,"tags":["c"]}`:                      "tags are from the enum",
		`{"name":"x","age":1,"tags":["a","a","a"]}`:              "at most 2 tags",
		`{"name":"x","age":1,"pets":[]}`:                         "at least one pet",
		`{"name":"x","age":1,"pets":[{"lives":9}]}`:              "a pet's kind is required",
		`{"name":"x","age":1,"pets":[{"kind":"dog"}]}`:           "the kind is cat",
		`{"name":"x","age":1,"pets":[{"kind":"cat","lives":3}]}`: "lives from the enum",
		`{"name":"x","age":1,"pets":[{"lives":9,"kind":"cat"}]}`: "kind first",
		`{"name":"x","age":1,"meta":{"a":1}}`:                    "meta's values are booleans",
		`{"name":"x","age":1,"height":"tall"}`:                   "height is a number or null",
		`["name"]`:                                               "the top level is an object",
	} {
		if ok, _ := acceptsSchema(s, text); ok {
			t.Errorf("%s accepted: %s", text, why)
		}
	}
	arr := compileOrFail(t, `{"type": "array", "items": {"type": "integer"}, "maxItems": 0}`)
	if ok, complete := acceptsSchema(arr, `[]`); !ok || !complete {
		t.Error("[] under an empty array schema refused")
	}
	if ok, _ := acceptsSchema(arr, `[1`); ok {
		t.Error("an item under maxItems 0 accepted")
	}
}

func TestCompileSchemaErrors(t *testing.T) {
	for schema, want := range map[string]string{
		`{"type": "object", "anyOf": [{}]}`:                                        "anyOf beside other constraints",
		`{"$ref": "other.json#/x"}`:                                                "only references into the schema itself",
		`{"$ref": "#/$defs/Nope", "$defs": {}}`:                                    "points to nothing",
		`{"$ref": "#"}`:                                                            "left-recursive",
		`{"allOf": [{"type": "object"}, {"type": "string"}]}`:                      "allOf merges objects with properties, or enums",
		`{"allOf": [{"enum": [1, 2]}, {"enum": [3]}]}`:                             "no value is in every enum",
		`{"type": "object", "properties": {"n": {"type": "integer", "not": {}}}}`:  "schema.properties.n: not not supported",
		`{"type": "object", "properties": {"a": {}}, "required": ["b"]}`:           `"b" is not among`,
		`{"type": "objet"}`:                                                        `unknown type "objet"`,
		`{"type": "object", "properties": {"a": {"type": "string", "enum": [1]}}}`: "no enum value is of the schema's type",
		`{"type": "array", "minItems": 3, "maxItems": 2}`:                          "maxItems 2 < minItems 3",
		`{"type": "integer", "minimum": 5, "exclusiveMaximum": 5}`:                 "no integer lies between the bounds",
		`{"type": "string", "pattern": "^a(?=b)$"}`:                                "lookarounds are not supported",
		`{"type": "string", "pattern": "(a)\\1"}`:                                  "backreferences are not supported",
		`{"type": "string", "pattern": "a\\bc"}`:                                   "word boundaries",
		`{"type": "string", "pattern": "a^b"}`:                                     "anchors are supported only at the ends",
		`{"type": "string", "pattern": "(ab"}`:                                     "missing )",
		`{"type": "string", "pattern": "ab)"}`:                                     "unbalanced )",
		`{"type": "string", "pattern": "[z-a]"}`:                                   "range out of order",
		`{"type": "string", "pattern": "*a"}`:                                      "nothing to repeat",
		`{"type": "string", "pattern": "a{3,2}"}`:                                  "numbers out of order",
		`{"type": "string", "pattern": "a{2001}"}`:                                 "the schema's grammar",
		`false`: "admits no value",
		`[1]`:   "a schema is an object",
	} {
		if _, err := CompileSchema([]byte(schema)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want an error with %q", schema, err, want)
		}
	}
}

// schemaCases are strings a schema must take and refuse, as JSON texts.
var schemaCases = []struct {
	schema     string
	takes, not []string
}{
	{`{"type": "string", "pattern": "^[A-Z]\\d{2,3}(-[a-z]+)?$"}`,
		[]string{`"A12"`, `"B123-xy"`}, []string{`"A1"`, `"A1234"`, `"a12"`, `"A12-"`, `"A12-X"`, `" A12"`}},
	{`{"type": "string", "pattern": "ab"}`, // unanchored: anywhere
		[]string{`"ab"`, `"xxabyy"`, `"\"ab\\"`}, []string{`"a b"`, `"ba"`}},
	{`{"type": "string", "pattern": "^a.c$"}`, // "." takes a quote or a backslash, escaped
		[]string{`"abc"`, `"a\"c"`, `"a\\c"`, `"a\tc"`, `"a\u0001c"`, `"aéc"`}, []string{`"a"c"`, `"a\nc"`, `"a\u000Ac"`, `"ac"`}},
	{`{"type": "string", "pattern": "^[^a-c]+$"}`,
		[]string{`"xyz"`, `"\""`, `"\\d"`}, []string{`"xaz"`, `""`}},
	{`{"type": "string", "pattern": "^(?:\\w+|\\s)\\.\\W?$"}`,
		[]string{`"a_1."`, `" ."`, `"\t.!"`}, []string{`"a."."`, `"a.b"`, `".!"`}},
	{`{"type": "string", "pattern": "^\\u00e9{2}\\x41*?[\\]\\-]$"}`,
		[]string{`"ééAA]"`, `"éé-"`}, []string{`"é]"`, `"ééa]"`}},
	{`{"type": "string", "minLength": 2, "maxLength": 3}`,
		[]string{`"ab"`, `"a\nc"`, `"éé"`}, []string{`"a"`, `"abcd"`}},
	{`{"type": "string", "format": "date"}`, []string{`"2024-02-29"`}, []string{`"2024-2-29"`, `"2024-02-32"`}},
	{`{"type": "string", "format": "time"}`, []string{`"23:59:59Z"`, `"00:00:00.000+05:30"`}, []string{`"24:00:00Z"`, `"12:00:00"`}},
	{`{"type": "string", "format": "uuid"}`, []string{`"123e4567-e89b-12d3-a456-426614174000"`}, []string{`"123e4567e89b12d3a456426614174000"`}},
	{`{"type": "string", "format": "email"}`, []string{`"anything"`}, nil}, // read past
	{`{"type": "integer", "minimum": -5, "maximum": 123}`, []string{"-5", "0", "-0", "9", "10", "99", "123"}, []string{"-6", "124", "0123", "1.0", "-01"}},
	{`{"type": "integer", "exclusiveMinimum": 9.5}`, []string{"10", "1234567890123456"}, []string{"9", "-1", "12345678901234567"}},
	{`{"type": "number", "minimum": 0}`, []string{"-1.5"}, nil}, // read past, as llama.cpp
	{`{"enum": [{"b": [1, 2], "a": null}, "x", 1.50]}`, []string{`{"a":null,"b":[1,2]}`, `"x"`, `1.50`}, []string{`{"b":[1,2],"a":null}`, `1.5`}},
	{`{"type": ["string", "null"], "maxLength": 1}`, []string{`"a"`, `null`}, []string{`"ab"`}},
	{`{"type": "array", "prefixItems": [{"type": "string"}, {"type": "integer"}], "items": {"type": "boolean"}, "maxItems": 3}`,
		[]string{`["a",1]`, `["a",1,true]`}, []string{`["a"]`, `["a",1,true,false]`, `[1,"a"]`}},
	{`{"type": "array", "items": [{"const": 1}, {"const": 2}]}`, []string{`[1,2]`}, []string{`[1]`, `[1,2,3]`}},
	{`{"type": "array", "minItems": 2}`, []string{`[1,"a"]`}, []string{`[1]`}},
	{`{"type": "object", "properties": {"a": {"type": "integer"}}, "additionalProperties": true}`,
		[]string{`{"a":1,"b":[]}`, `{"ab":2}`, `{"b":1,"c":2}`, `{}`, `{"":0}`}, []string{`{"a":"x"}`, `{"b":1,"a":1}`}},
	{`{"type": "object", "additionalProperties": false}`, []string{`{}`}, []string{`{"a":1}`}},
	{`{"allOf": [{"properties": {"a": {"type": "integer"}}, "required": ["a"]}, {"$ref": "#/$defs/B"}], "$defs": {"B": {"properties": {"b": {"type": "string"}}}}}`,
		[]string{`{"a":1}`, `{"a":1,"b":"x"}`}, []string{`{"b":"x"}`, `{"a":1,"c":2}`}},
	{`{"allOf": [{"enum": ["x", "y", "z"]}, {"enum": ["z", "y"]}]}`, []string{`"y"`, `"z"`}, []string{`"x"`}},
	{`{"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"], "title": "t", "description": "d", "$comment": "c"}`,
		[]string{"{ \"n\" : 1 }", "{\n\n\t\"n\":\n 1}"}, []string{"{  \"n\":1}", "{\"n\":1 }x", "{\n\n\n\"n\":1}"}},
}

func TestSchemaCases(t *testing.T) {
	for _, c := range schemaCases {
		s, err := CompileSchema([]byte(c.schema))
		if err != nil {
			t.Errorf("%s: %v", c.schema, err)
			continue
		}
		for _, text := range c.takes {
			if ok, complete := acceptsSchema(s, text); !ok || !complete {
				t.Errorf("%s: %s: accepted %v, complete %v; want both\n%s", c.schema, text, ok, complete, s.GBNF())
			}
		}
		for _, text := range c.not {
			if ok, complete := acceptsSchema(s, text); ok && complete {
				t.Errorf("%s: %s accepted\n%s", c.schema, text, s.GBNF())
			}
		}
	}
}

// TestSchemaIntegers: every integer in a window is taken exactly when it
// lies between a schema's bounds, for random bounds.
func TestSchemaIntegers(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	for range 40 {
		lo, hi := int64(r.IntN(4000)-2000), int64(r.IntN(4000)-2000)
		if lo > hi {
			lo, hi = hi, lo
		}
		schema := fmt.Sprintf(`{"type": "integer", "minimum": %d, "maximum": %d}`, lo, hi)
		if r.IntN(3) == 0 {
			schema = fmt.Sprintf(`{"type": "integer", "exclusiveMinimum": %d, "exclusiveMaximum": %d}`, lo-1, hi+1)
		}
		s := compileOrFail(t, schema)
		start := NewJSONSchema(s) // its clones share the steps it learns
		for i := int64(-2100); i <= 2101; i++ {
			n, text := i, strconv.FormatInt(i, 10)
			if i == 2101 {
				n, text = 0, "-0" // 0, as JSON reads it
			}
			g, taken := start.Clone(), true
			for _, c := range text {
				taken = taken && g.Accept(string(c)) == nil
			}
			taken = taken && g.Complete()
			if want := lo <= n && n <= hi; taken != want {
				t.Fatalf("%s: %s taken %v, want %v\n%s", schema, text, taken, want, s.GBNF())
			}
		}
	}
}

// TestSchemaPrefix: NewJSONSchemaPrefix lets any text follow the value,
// even within the token that ends it.
func TestSchemaPrefix(t *testing.T) {
	s := compileOrFail(t, `{"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}`)
	g := NewJSONSchemaPrefix(s)
	for _, piece := range []string{`{"a":`, `12`, `}}`, "</tool>", "\n"} {
		if err := g.Accept(piece); err != nil {
			t.Fatalf("%q: %v", piece, err)
		}
	}
	if !g.Complete() {
		t.Error("not complete after the value")
	}
	if NewJSONSchemaPrefix(s).Accept(`{"a":"x"}`) == nil {
		t.Error("the value itself is not checked")
	}
}

// TestSchemaRandomWalks: under the mask, a walk that picks any allowed
// token of a vocabulary of single characters and some words never meets a
// dead end — some token, or the end, is always allowed — and every object
// it finishes is valid under an independent validator
// (santhosh-tekuri/jsonschema) of the same schema.
func TestSchemaRandomWalks(t *testing.T) {
	vocab := vocab{"</s>"}
	for c := 0x20; c < 0x7f; c++ {
		vocab = append(vocab, string(rune(c)))
	}
	for b := 0x80; b < 0xc0; b++ { // continuation bytes: any character begun can be finished
		vocab = append(vocab, string([]byte{byte(b)}))
	}
	vocab = append(vocab, "\n", "\t", `"name"`, `"age":`, `"kind":"cat"`, "true", "null", "déjà", "b\\\"c", `":`, "\xc3", "\xa9", "99", `"tags":["`, `"k":{}`,
		`"born":"`, "2024-01-31", "T12:00:00Z", `"pets":[`, `"id":"`, "123e4567-e89b-12d3-a456-426614174000")
	for i, schema := range []string{
		personSchema,
		pydanticSchema,
		`{"type": "array", "items": {"type": "object", "properties": {"x": {"type": "number"}, "y": {"enum": [null, true, "n"]}}, "required": ["x"]}, "minItems": 2, "maxItems": 3}`,
		`{"type": "object", "properties": {"k": {"type": "object", "properties": {}, "additionalProperties": false}}, "required": ["k"], "additionalProperties": {"type": "array", "items": {"type": "integer"}}}`,
		`{"type": "object", "properties": {"code": {"type": "string", "pattern": "^[A-Z]{2}-\\d{3}(x|yz)?$"}, "n": {"type": "integer", "minimum": -20, "maximum": 300},
			"s": {"type": "string", "minLength": 1, "maxLength": 4}, "id": {"type": "string", "format": "uuid"}, "d": {"type": "string", "format": "date"},
			"t": {"type": "array", "prefixItems": [{"type": "boolean"}, {"enum": ["a", 2]}]}}, "required": ["code", "n"], "additionalProperties": true}`,
		`{"type": "object", "properties": {"p": {"type": "string", "pattern": "[^\"\\\\a-m]b+"}, "q": {"type": "string", "pattern": "^.\\.$"}}, "required": ["p", "q"]}`,
	} {
		s := compileOrFail(t, schema)
		c := jsonschema.NewCompiler()
		doc, err := jsonschema.UnmarshalJSON(strings.NewReader(schema))
		if err != nil {
			t.Fatal(err)
		}
		c.AddResource("schema.json", doc)
		validator, err := c.Compile("schema.json")
		if err != nil {
			t.Fatal(err)
		}
		r := rand.New(rand.NewPCG(uint64(i), 5))
		finished := 0
		for walk := range 150 {
			g := NewJSONSchema(s)
			var text strings.Builder
			for step := 0; step < 400; step++ {
				logits := make([]float32, len(vocab))
				g.Mask(logits, vocab)
				var allowed []int32
				for id, l := range logits {
					if !math.IsInf(float64(l), -1) {
						allowed = append(allowed, int32(id))
					}
				}
				if len(allowed) == 0 {
					t.Fatalf("schema %d, walk %d: a dead end after %q", i, walk, text.String())
				}
				id := allowed[r.IntN(len(allowed))]
				// Half the time, close something when that is allowed, so
				// that walks through free keys and long strings end.
				if r.IntN(2) == 0 {
					for _, a := range allowed {
						if p := vocab[a]; a == 0 || p == `"` || p == "}" || p == "]" {
							id = a
							break
						}
					}
				}
				if vocab.IsEOG(id) {
					finished++
					v, err := jsonschema.UnmarshalJSON(bytes.NewReader([]byte(text.String())))
					if err != nil {
						t.Fatalf("schema %d: %q is complete under the mask but not JSON: %v", i, text.String(), err)
					}
					if err := validator.Validate(v); err != nil {
						t.Fatalf("schema %d: %q is complete under the mask but invalid: %v", i, text.String(), err)
					}
					break
				}
				if err := g.Accept(vocab[id]); err != nil {
					t.Fatal(err)
				}
				text.WriteString(vocab[id])
			}
		}
		if finished < 30 {
			t.Errorf("schema %d: only %d of 150 walks finished: the check saw too few", i, finished)
		}
		t.Logf("schema %d: %d of 150 walks finished, all valid", i, finished)
	}
}

// FuzzSchema: any bytes as a schema (they come from HTTP clients) give a
// schema or an error, never a panic; a schema that compiles follows any
// text without panicking, and never lets the text through to a complete
// value that is not JSON.
//
//	go test -fuzz=FuzzSchema ./toy/grammar
func FuzzSchema(f *testing.F) {
	f.Add([]byte(personSchema), []byte(`{"name":"x","age":1}`))
	f.Add([]byte(`{"type":"array","items":{"enum":[1,"a",null]},"maxItems":2}`), []byte(`[1,"a"]`))
	f.Add([]byte(`{"type":"object","additionalProperties":{"type":"integer"}}`), []byte(`{"k":3}`))
	f.Add([]byte(pydanticSchema), []byte(`{"name":"a","pets":[],"born":"x","boss":null}`))
	for _, cyclic := range []string{`{"$ref":"#"}`, `{"anyOf":[{"$ref":"#"},{"type":"null"}]}`, `{"$defs":{"a":{"$ref":"#/$defs/a"}},"$ref":"#/$defs/a"}`,
		`{"type":"array","items":{"$ref":"#"}}`} {
		f.Add([]byte(cyclic), []byte(`[[[]]]`))
	}
	f.Fuzz(func(t *testing.T, schema, text []byte) {
		s, err := CompileSchema(schema)
		if err != nil {
			return
		}
		g := NewJSONSchema(s)
		var accepted []byte
		for i := range text {
			if g.Accept(string(text[i:i+1])) == nil && text[i] != 0 {
				accepted = append(accepted, text[i])
			}
		}
		if g.Complete() && g.partial.remain == 0 && utf8.Valid(accepted) {
			if _, err := jsonschema.UnmarshalJSON(bytes.NewReader(accepted)); err != nil {
				t.Fatalf("%q complete under %s but not JSON: %v", accepted, schema, err)
			}
		}
	})
}
