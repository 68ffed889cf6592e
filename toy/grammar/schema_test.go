package grammar

import (
	"bytes"
	"math"
	"math/rand/v2"
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
		`{"age":36,"name":"Ada","height":1.65,"tags":["b\"c","déjà"]}`,
		`{"name":"x","age":-1,"height":null,"pets":[{"kind":"cat","lives":9},{"lives":1.5,"kind":"cat"}]}`,
		`{"name":"x","age":0,"meta":{"ok":true,"no":false},"any":{"k":[1,"x",null]}}`,
		"{\n  \"name\": \"x\",\n  \"age\": 7\n}",
	} {
		if ok, complete := acceptsSchema(s, text); !ok || !complete {
			t.Errorf("%s: accepted %v, complete %v; want both", text, ok, complete)
		}
	}
}

// TestSchemaPydantic: refs (recursive too), Optional fields as anyOf with
// null, a format read past.
func TestSchemaPydantic(t *testing.T) {
	s := compileOrFail(t, pydanticSchema)
	for _, text := range []string{
		`{"name":"a","pets":[],"born":"2020"}`,
		`{"name":"a","pets":[{"kind":"cat","age":null},{"kind":"dog","age":3}],"born":"x","best":{"kind":"dog"}}`,
		`{"name":"a","pets":[],"born":"x","boss":{"name":"b","pets":[],"born":"y","boss":null}}`,
	} {
		if ok, complete := acceptsSchema(s, text); !ok || !complete {
			t.Errorf("%s: accepted %v, complete %v; want both", text, ok, complete)
		}
	}
	for _, text := range []string{
		`{"name":"a","pets":[{"kind":"cow"}],"born":"x"}`,
		`{"name":"a","pets":[],"born":"x","best":[]}`,
		`{"name":"a","pets":[],"born":"x","boss":{"name":"b"}}`,
		`{"name":"a","pets":[{"kind":"cat","age":"3"}],"born":"x"}`,
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
		`{"name":"x","age":1,"tags":["c"]}`:                      "tags are from the enum",
		`{"name":"x","age":1,"tags":["a","a","a"]}`:              "at most 2 tags",
		`{"name":"x","age":1,"pets":[]}`:                         "at least one pet",
		`{"name":"x","age":1,"pets":[{"lives":9}]}`:              "a pet's kind is required",
		`{"name":"x","age":1,"pets":[{"kind":"dog"}]}`:           "the kind is cat",
		`{"name":"x","age":1,"pets":[{"kind":"cat","lives":3}]}`: "lives from the enum",
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
		`{"type": "object", "anyOf": [{}]}`:                                          "anyOf beside other constraints",
		`{"anyOf": [{"type": "object"}, {"type": ["object", "null"]}]}`:              "two schemas take values of one type (object)",
		`{"$ref": "other.json#/x"}`:                                                  "only references into the schema itself",
		`{"$ref": "#/$defs/Nope", "$defs": {}}`:                                      "points to nothing",
		`{"allOf": [{"type": "object"}, {"type": "object"}]}`:                        "only one schema",
		`{"type": "object", "properties": {"n": {"type": "integer", "minimum": 0}}}`: "minimum not supported",
		`{"type": "object", "properties": {"a": {"pattern": "x"}}}`:                  "schema.properties.a: pattern not supported",
		`{"type": "object", "properties": {"a": {}}, "required": ["b"]}`:             `"b" is not among`,
		`{"type": "string"}`:                                                         "top level must be an object or an array",
		`{"type": "objet"}`:                                                          `unknown type "objet"`,
		`{"type": "object", "properties": {"a": {"type": "string", "enum": [1]}}}`:   "not of the schema's type",
		`{"type": "array", "minItems": 3, "maxItems": 2}`:                            "maxItems 2 < minItems 3",
		`[1]`: "a schema is an object",
	} {
		if _, err := CompileSchema([]byte(schema)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want an error with %q", schema, err, want)
		}
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
	vocab = append(vocab, "\n", "\t", `"name"`, `"age":`, `"kind":"cat"`, "true", "null", "déjà", "b\\\"c", `":`, "\xc3", "\xa9", "99", `"tags":["`, `"k":{}`)
	for i, schema := range []string{
		personSchema,
		pydanticSchema,
		`{"type": "array", "items": {"type": "object", "properties": {"x": {"type": "number"}, "y": {"enum": [null, true, "n"]}}, "required": ["x"]}, "minItems": 2, "maxItems": 3}`,
		`{"type": "object", "properties": {"k": {"type": "object", "properties": {}, "additionalProperties": false}}, "required": ["k"], "additionalProperties": {"type": "array", "items": {"type": "integer"}}}`,
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
