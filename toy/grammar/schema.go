// JSON schemas: structured outputs, as a GBNF grammar of the JSON texts a
// schema allows.

package grammar

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
)

// Schema is a compiled JSON schema: a GBNF grammar (see GBNF) of the JSON
// texts that are values of the schema, written as llama.cpp's
// json-schema-to-grammar writes them, so that a reply under a schema is the
// reply llama-server and Ollama give:
//
//   - whitespace as in llama.cpp: after "{", "[", ":" and ",", and before
//     "}" and "]", a run of nothing, one space, or one or two newlines and
//     at most 20 spaces or tabs; none around a value otherwise;
//   - an object's listed properties come in the schema's order, the
//     required ones first; each optional one may be left out;
//     additionalProperties (true or a schema) lets other keys follow them;
//     without it an object with properties takes no others, and one
//     without properties takes any;
//   - integers and exponents have at most 16 digits, fractions at most 16.
//
// What it reads, per schema: type (a name or a list), enum and const (any
// JSON values, written compactly), properties, required,
// additionalProperties, items (a schema, or a list: a tuple), prefixItems,
// minItems, maxItems; for strings pattern (see below), minLength,
// maxLength and format date, time, date-time and uuid (other formats are
// read past); for integers minimum, maximum, exclusiveMinimum and
// exclusiveMaximum; "$ref" to a JSON pointer into the schema itself
// (recursion included); anyOf and oneOf (the same here: a value of any of
// the schemas); allOf of objects (their properties merged, required where
// one of them requires it) or of enums (their intersection), or of one
// schema. Titles, descriptions, defaults, examples and the like are read
// past, and so are minimum and maximum on numbers that need not be
// integers (as in llama.cpp: a grammar cannot bound a decimal cheaply).
// Any other keyword (not, if, uniqueItems, patternProperties, multipleOf,
// …) is refused by CompileSchema rather than ignored.
//
// A pattern is an ECMAScript regular expression over the string's value:
// literals, escapes (\d \w \s and their negations, \n \t \xHH \uHHHH …),
// classes, ".", groups ("(?:" and named ones too), alternation and the
// quantifiers * + ? {n} {n,} {n,m} (lazy ones mean the same). Anchors may
// stand only at its ends; an end without one takes any characters, as a
// pattern matches anywhere in the string. Lookarounds, backreferences and
// word boundaries are refused. The grammar writes each character as JSON
// must: a quote or a backslash escaped, a control character as its escape.
// (Here toy parts from llama.cpp, whose grammar lets a pattern's "." or
// "[^a]" put a bare quote into the string, ending it early; it also
// refuses unanchored patterns and \d.)
//
// A Schema is safe for concurrent use; each reply gets its own state from
// NewJSONSchema.
type Schema struct {
	src  string // the grammar
	g    *GBNF
	tail *GBNF // a value, then any text
}

// Bounds on the work a schema may ask of CompileSchema (a schema may come
// from a request): its size, how deeply its JSON nests, the values of one
// enum, and the size of the grammar it becomes (MaxGrammarBytes). A schema
// past one is refused with an error naming the bound.
const (
	MaxSchemaBytes = 64 << 10
	MaxSchemaDepth = 64
	MaxEnumValues  = 4096
)

// CheckSchemaBounds refuses a schema over MaxSchemaBytes or nesting deeper
// than MaxSchemaDepth, before any work on it.
func CheckSchemaBounds(raw []byte) error {
	if len(raw) > MaxSchemaBytes {
		return fmt.Errorf("grammar: the schema is %d bytes, over the limit of %d (grammar.MaxSchemaBytes)", len(raw), MaxSchemaBytes)
	}
	depth, inString, escaped := 0, false, false
	for _, b := range raw {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case b == '\\':
				escaped = true
			case b == '"':
				inString = false
			}
		case b == '"':
			inString = true
		case b == '{' || b == '[':
			if depth++; depth > MaxSchemaDepth {
				return fmt.Errorf("grammar: the schema nests over %d objects and lists deep (grammar.MaxSchemaDepth)", MaxSchemaDepth)
			}
		case b == '}' || b == ']':
			depth--
		}
	}
	return nil
}

// CompileSchema reads a JSON schema. It refuses one past the bounds above.
func CompileSchema(raw []byte) (*Schema, error) {
	if err := CheckSchemaBounds(raw); err != nil {
		return nil, err
	}
	c := &schemaConv{doc: raw, rules: map[string]string{}, refs: map[string]string{}, direct: map[string]bool{"root": true}}
	c.names = append(c.names, "root")
	c.rules["root"] = "\x00root" // reserved
	body, err := c.visit(raw, "root", "schema")
	if err != nil {
		return nil, err
	}
	c.rules["root"] = body
	src := c.text()
	g, err := ParseGBNF(src, nil)
	if err != nil { // a repetition over llama.cpp's bound, say
		return nil, fmt.Errorf("grammar: the schema's grammar: %w", err)
	}
	c.rules["root"] = "( " + body + " ) " + c.rule("rest-of-text", `[\x01-\U0010FFFF]*`)
	tail, err := ParseGBNF(c.text(), nil)
	if err != nil {
		return nil, fmt.Errorf("grammar: the schema's grammar: %w", err)
	}
	return &Schema{src: src, g: g, tail: tail}, nil
}

// GBNF returns the schema's grammar, as ParseGBNF reads it.
func (s *Schema) GBNF() string { return s.src }

// NewJSONSchema returns the state before a reply that must be a value of s.
func NewJSONSchema(s *Schema) *Matcher { return NewMatcher(s.g) }

// NewJSONSchemaPrefix returns the state before a text that starts with a
// value of s; any text may follow the value. A forced tool call's
// arguments are such a value: the call's closing follows them.
func NewJSONSchemaPrefix(s *Schema) *Matcher { return NewMatcher(s.tail) }

// schemaConv writes one schema document as GBNF rules.
type schemaConv struct {
	doc   []byte
	rules map[string]string // by name
	names []string          // in the order made
	refs  map[string]string // a $ref's rule name, by the reference
	// direct holds the names of the rules being written: their bodies are
	// returned, not made rules.
	direct map[string]bool
	docs   int // the documents read before doc (Compose reads several)
}

// The keywords a schema may hold: those CompileSchema reads, and those it
// reads past.
var (
	schemaKeywords = map[string]bool{"type": true, "properties": true, "required": true, "additionalProperties": true,
		"items": true, "prefixItems": true, "minItems": true, "maxItems": true, "enum": true, "const": true,
		"$ref": true, "anyOf": true, "oneOf": true, "allOf": true,
		"pattern": true, "minLength": true, "maxLength": true, "format": true,
		"minimum": true, "maximum": true, "exclusiveMinimum": true, "exclusiveMaximum": true}
	schemaAnnotations = map[string]bool{"title": true, "description": true, "$schema": true, "$id": true, "$comment": true,
		"default": true, "examples": true, "readOnly": true, "writeOnly": true, "deprecated": true,
		"$defs": true, "definitions": true, "discriminator": true}
)

// text writes the rules, root first.
func (c *schemaConv) text() string {
	var b strings.Builder
	for _, name := range c.names {
		fmt.Fprintf(&b, "%s ::= %s\n", name, c.rules[name])
	}
	return b.String()
}

// rule adds a rule named after hint (made unique) and returns its name;
// a rule of the same body under that name is reused.
func (c *schemaConv) rule(hint, body string) string {
	name := ruleName(hint)
	for i := 1; ; i++ {
		old, ok := c.rules[name]
		if !ok {
			c.rules[name] = body
			c.names = append(c.names, name)
			return name
		}
		if old == body {
			return name
		}
		name = fmt.Sprintf("%s%d", ruleName(hint), i)
	}
}

// named is the expression body under the name hint: a rule of it, or
// body itself for a rule being written (the root, a reference).
func (c *schemaConv) named(hint, body string) string {
	if c.direct[hint] {
		return body
	}
	return c.rule(hint, body)
}

// ruleName makes hint a rule name: letters, digits and dashes.
func ruleName(hint string) string {
	var b strings.Builder
	dash := false
	for _, r := range hint {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9'
		if !ok {
			dash = b.Len() > 0
			continue
		}
		if dash {
			b.WriteByte('-')
			dash = false
		}
		b.WriteRune(r)
	}
	if b.Len() == 0 {
		return "value"
	}
	return b.String()
}

// sub joins a rule name hint and a part.
func sub(name, part string) string { return name + "-" + part }

// The rules of any JSON value, as llama.cpp writes them.
var primitives = map[string]string{
	"space":         `| " " | "\n"{1,2} [ \t]{0,20}`,
	"value":         `object | array | string | number | boolean | null`,
	"object":        `"{" space ( string ":" space value ( "," space string ":" space value )* )? space "}"`,
	"array":         `"[" space ( value ( "," space value )* )? space "]"`,
	"string":        `"\"" char* "\""`,
	"char":          `[^"\\\x7F\x00-\x1F] | [\\] (["\\bfnrt] | "u" [0-9a-fA-F]{4})`,
	"number":        `"-"? integral-part ( "." decimal-part )? ( [eE] [-+]? integral-part )?`,
	"integer":       `"-"? integral-part`,
	"integral-part": `[0] | [1-9] [0-9]{0,15}`,
	"decimal-part":  `[0-9]{1,16}`,
	"boolean":       `"true" | "false"`,
	"null":          `"null"`,
	"date":          `[0-9]{4} "-" ( "0" [1-9] | "1" [0-2] ) "-" ( "0" [1-9] | [1-2] [0-9] | "3" [0-1] )`,
	"time":          `( [01] [0-9] | "2" [0-3] ) ":" [0-5] [0-9] ":" [0-5] [0-9] ( "." [0-9]{3} )? ( "Z" | [+-] ( [01] [0-9] | "2" [0-3] ) ":" [0-5] [0-9] )`,
	"date-time":     `date "T" time`,
	"uuid":          `[0-9a-fA-F]{8} "-" [0-9a-fA-F]{4} "-" [0-9a-fA-F]{4} "-" [0-9a-fA-F]{4} "-" [0-9a-fA-F]{12}`,
}

// prim adds the primitive rule name and those it uses, and returns name.
func (c *schemaConv) prim(name string) string {
	if _, ok := c.rules[name]; ok {
		return name
	}
	body := primitives[name]
	c.rules[name] = body
	c.names = append(c.names, name)
	for _, w := range strings.Fields(body) {
		w = strings.Trim(w, "()*?")
		if _, ok := primitives[w]; ok {
			c.prim(w)
		}
	}
	return name
}

// object is a schema object's keywords, in the order written.
type object struct {
	keys []string
	m    map[string]json.RawMessage
}

// readObject reads a JSON object keeping its keys' order.
func readObject(raw []byte) (*object, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, fmt.Errorf("not an object")
	}
	o := &object{m: map[string]json.RawMessage{}}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		if _, dup := o.m[key]; !dup {
			o.keys = append(o.keys, key)
		}
		o.m[key] = v
	}
	return o, nil
}

func (o *object) has(k string) bool { _, ok := o.m[k]; return ok }

// visit returns a GBNF expression for the values of schema raw, found at
// at (for errors); name is the hint for the rules it adds.
func (c *schemaConv) visit(raw json.RawMessage, name, at string) (string, error) {
	switch string(bytes.TrimSpace(raw)) {
	case "true":
		return c.prim("value"), nil
	case "false":
		return "", fmt.Errorf("grammar: %s: the schema false admits no value", at)
	}
	o, err := readObject(raw)
	if err != nil {
		return "", fmt.Errorf("grammar: %s: a schema is an object or a boolean: %v", at, err)
	}
	var unknown, constraints []string
	for _, k := range o.keys {
		switch {
		case schemaAnnotations[k]:
		case schemaKeywords[k]:
			constraints = append(constraints, k)
		default:
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return "", fmt.Errorf("grammar: %s: %s not supported (see grammar.Schema for the keywords toy reads)", at, strings.Join(unknown, ", "))
	}
	// $ref, anyOf/oneOf and allOf stand alone (annotations aside).
	for _, k := range []string{"$ref", "anyOf", "oneOf", "allOf"} {
		if !o.has(k) {
			continue
		}
		if len(constraints) > 1 {
			sort.Strings(constraints)
			return "", fmt.Errorf("grammar: %s: %s beside other constraints (%s) not supported", at, k, strings.Join(constraints, ", "))
		}
		switch k {
		case "$ref":
			return c.ref(o.m[k], at)
		case "allOf":
			return c.allOf(o.m[k], name, at+".allOf")
		}
		var list []json.RawMessage
		if err := json.Unmarshal(o.m[k], &list); err != nil || len(list) == 0 {
			return "", fmt.Errorf("grammar: %s.%s: a list of schemas", at, k)
		}
		alts := make([]string, len(list))
		for i, s := range list {
			if alts[i], err = c.visit(s, sub(name, fmt.Sprint(i)), fmt.Sprintf("%s.%s[%d]", at, k, i)); err != nil {
				return "", err
			}
		}
		return c.named(name, strings.Join(alts, " | ")), nil
	}
	var types []string
	if t, ok := o.m["type"]; ok {
		var one string
		if json.Unmarshal(t, &one) == nil {
			types = []string{one}
		} else if err := json.Unmarshal(t, &types); err != nil || len(types) == 0 {
			return "", fmt.Errorf("grammar: %s.type: a name or a list of names", at)
		}
		for _, t := range types {
			if !slices.Contains([]string{"object", "array", "string", "integer", "number", "boolean", "null"}, t) {
				return "", fmt.Errorf("grammar: %s.type: unknown type %q", at, t)
			}
		}
	}
	if len(types) <= 1 {
		return c.typed(o, strings.Join(types, ""), name, at)
	}
	alts := make([]string, len(types))
	for i, t := range types {
		if alts[i], err = c.typed(o, t, sub(name, t), at); err != nil {
			return "", err
		}
	}
	return c.named(name, strings.Join(alts, " | ")), nil
}

// typed returns the expression for schema o's values of type t ("": any
// type).
func (c *schemaConv) typed(o *object, t, name, at string) (string, error) {
	if o.has("const") || o.has("enum") {
		var values []json.RawMessage
		if o.has("enum") {
			if err := json.Unmarshal(o.m["enum"], &values); err != nil || len(values) == 0 {
				return "", fmt.Errorf("grammar: %s.enum: a list of values", at)
			}
			if len(values) > MaxEnumValues {
				return "", fmt.Errorf("grammar: %s.enum: %d values, over the limit of %d (grammar.MaxEnumValues)", at, len(values), MaxEnumValues)
			}
		}
		if o.has("const") {
			values = []json.RawMessage{o.m["const"]}
		}
		alts := make([]string, 0, len(values))
		for _, v := range values {
			text, err := compactJSON(v)
			if err != nil {
				return "", fmt.Errorf("grammar: %s.enum: %v", at, err)
			}
			if t != "" && !ofType(text, t) {
				continue // a value of another type
			}
			alts = append(alts, QuoteGBNF(text))
		}
		if len(alts) == 0 {
			return "", fmt.Errorf("grammar: %s: no enum value is of the schema's type", at)
		}
		return c.named(name, strings.Join(alts, " | ")), nil
	}
	obj := t == "" || t == "object"
	switch {
	case obj && (o.has("properties") || o.has("additionalProperties") && string(o.m["additionalProperties"]) != "true"):
		return c.object(o, name, at)
	case t == "object":
		if o.has("required") {
			return "", fmt.Errorf("grammar: %s: required without properties", at)
		}
		return c.prim("object"), nil
	case (t == "" || t == "array") && (o.has("items") || o.has("prefixItems") || o.has("minItems") || o.has("maxItems")):
		return c.array(o, name, at)
	case t == "array":
		return c.prim("array"), nil
	case (t == "" || t == "string") && o.has("pattern"):
		var p string
		if err := json.Unmarshal(o.m["pattern"], &p); err != nil {
			return "", fmt.Errorf("grammar: %s.pattern: a string", at)
		}
		body, err := c.pattern(p, name)
		if err != nil {
			return "", fmt.Errorf("grammar: %s.pattern: %w", at, err)
		}
		return c.named(name, `"\"" `+body+` "\""`), nil
	case (t == "" || t == "string") && o.has("format") && formatRule(o.m["format"]) != "":
		return c.named(name, `"\"" `+c.prim(formatRule(o.m["format"]))+` "\""`), nil
	case t == "string" && (o.has("minLength") || o.has("maxLength")):
		lo, hi, err := counts(o, "minLength", "maxLength", at)
		if err != nil {
			return "", err
		}
		return c.named(name, `"\"" `+repeat(c.prim("char"), lo, hi)+` "\""`), nil
	case (t == "" || t == "integer") && (o.has("minimum") || o.has("maximum") || o.has("exclusiveMinimum") || o.has("exclusiveMaximum")):
		lo, hi, err := intBounds(o, at)
		if err != nil {
			return "", err
		}
		return c.named(name, intRange(lo, hi)), nil
	case t == "":
		return c.prim("value"), nil
	}
	return c.prim(t), nil
}

// ofType reports whether the JSON text of a value is of type t.
func ofType(text, t string) bool {
	switch text[0] {
	case '{':
		return t == "object"
	case '[':
		return t == "array"
	case '"':
		return t == "string"
	case 't', 'f':
		return t == "boolean"
	case 'n':
		return t == "null"
	}
	return t == "number" || t == "integer" && !strings.ContainsAny(text, ".eE")
}

// compactJSON writes a JSON value compactly (jsonText).
func compactJSON(raw json.RawMessage) (string, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return "", err
	}
	return jsonText(v), nil
}

// jsonText writes v as JSON compactly, object keys sorted, strings with
// only the escapes JSON needs (as llama.cpp writes a const or a key).
func jsonText(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(err) // v came from decoding JSON, or is a string
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// formatRule names the primitive rule of a string format, "" for one not
// enforced.
func formatRule(raw json.RawMessage) string {
	var f string
	json.Unmarshal(raw, &f)
	switch f {
	case "date", "time", "date-time", "uuid":
		return f
	case "uuid1", "uuid2", "uuid3", "uuid4", "uuid5":
		return "uuid"
	}
	return ""
}

// ref returns the rule of the schema a "$ref" points to: a JSON pointer
// into this document ("#/$defs/Pet"), made once, so that a recursive
// schema refers to its own rule.
func (c *schemaConv) ref(raw json.RawMessage, at string) (string, error) {
	var ref string
	if err := json.Unmarshal(raw, &ref); err != nil || !strings.HasPrefix(ref, "#") {
		return "", fmt.Errorf("grammar: %s.$ref: only references into the schema itself (\"#/$defs/…\") are supported", at)
	}
	if name, ok := c.refs[ref]; ok {
		return name, nil
	}
	target, err := c.pointer(ref)
	if err != nil {
		return "", fmt.Errorf("grammar: %s.$ref: %w", at, err)
	}
	name := c.rule("ref-"+strings.TrimPrefix(ref, "#"), fmt.Sprintf("\x00%d%s", c.docs, ref)) // placed before its body: a recursive reference finds it
	c.refs[ref] = name
	c.direct[name] = true
	body, err := c.visit(target, name, ref)
	c.direct[name] = false
	if err != nil {
		return "", err
	}
	c.rules[name] = body
	return name, nil
}

// pointer resolves a reference "#/a/b" in the document.
func (c *schemaConv) pointer(ref string) (json.RawMessage, error) {
	target := json.RawMessage(c.doc)
	for _, part := range strings.Split(strings.TrimPrefix(ref, "#"), "/")[1:] {
		part = strings.ReplaceAll(strings.ReplaceAll(part, "~1", "/"), "~0", "~")
		var m map[string]json.RawMessage
		var list []json.RawMessage
		switch {
		case json.Unmarshal(target, &m) == nil && m[part] != nil:
			target = m[part]
		case json.Unmarshal(target, &list) == nil:
			var i int
			if _, err := fmt.Sscan(part, &i); err != nil || i < 0 || i >= len(list) {
				return nil, fmt.Errorf("%q points to nothing", ref)
			}
			target = list[i]
		default:
			return nil, fmt.Errorf("%q points to nothing", ref)
		}
	}
	return target, nil
}

// object writes an object with listed properties: the required ones in
// the schema's order, then any of the optional ones in that order, then,
// with additionalProperties, any number of other keys.
func (c *schemaConv) object(o *object, name, at string) (string, error) {
	var props *object
	if o.has("properties") {
		var err error
		if props, err = readObject(o.m["properties"]); err != nil {
			return "", fmt.Errorf("grammar: %s.properties: an object of schemas", at)
		}
	} else {
		props = &object{m: map[string]json.RawMessage{}}
	}
	var required []string
	if o.has("required") {
		if err := json.Unmarshal(o.m["required"], &required); err != nil {
			return "", fmt.Errorf("grammar: %s.required: a list of names", at)
		}
		for _, r := range required {
			if !props.has(r) {
				return "", fmt.Errorf("grammar: %s.required: %q is not among the properties", at, r)
			}
		}
	}
	var extra json.RawMessage
	if a, ok := o.m["additionalProperties"]; ok && string(bytes.TrimSpace(a)) != "false" {
		extra = a
	}
	return c.objectRule(props, required, extra, name, at)
}

// objectRule writes the rule of an object of the properties props (the
// names in required required) and, when extra is not nil, other keys whose
// values follow the schema extra.
func (c *schemaConv) objectRule(props *object, required []string, extra json.RawMessage, name, at string) (string, error) {
	kv := map[string]string{}
	var req, opt []string
	for _, key := range props.keys {
		value, err := c.visit(props.m[key], sub(name, key), at+".properties."+key)
		if err != nil {
			return "", err
		}
		quoted := jsonText(key)
		kv[key] = c.rule(sub(name, key+"-kv"), QuoteGBNF(quoted)+` space ":" space `+value)
		if slices.Contains(required, key) {
			req = append(req, key)
		} else {
			opt = append(opt, key)
		}
	}
	c.prim("space")
	const other = "\x00other" // the key of additional properties
	if extra != nil {
		value, err := c.visit(extra, sub(name, "additional-value"), at+".additionalProperties")
		if err != nil {
			return "", err
		}
		key := c.prim("string")
		if len(props.keys) > 0 {
			key = c.rule(sub(name, "additional-key"), c.notKeys(props.keys))
		}
		kv[other] = c.rule(sub(name, "additional-kv"), key+` ":" space `+value)
		opt = append(opt, other)
	}
	if len(req)+len(opt) == 0 {
		return c.named(name, `"{" space "}"`), nil
	}
	// rest(i): the optional pairs from the i-th on, each after a comma;
	// made once each (the alternatives below ask for every one).
	made := map[int]string{}
	var rest func(i int) string
	rest = func(i int) string {
		if i == len(opt) {
			return ""
		}
		if r, ok := made[i]; ok {
			return r
		}
		body := `( "," space ` + kv[opt[i]] + ` )`
		if opt[i] == other {
			body += "*"
		} else {
			body += "?"
		}
		if r := rest(i + 1); r != "" {
			body += " " + r
		}
		made[i] = c.rule(sub(name, fmt.Sprintf("rest-%d", i)), body)
		return made[i]
	}
	var b strings.Builder
	b.WriteString(`"{" space `)
	if len(req) > 0 {
		for i, k := range req {
			if i > 0 {
				b.WriteString(` "," space `)
			}
			b.WriteString(kv[k])
		}
		if r := rest(0); r != "" {
			b.WriteString(" " + r)
		}
	} else {
		// The first pair present, then the rest after it.
		alts := make([]string, len(opt))
		for i, k := range opt {
			alts[i] = kv[k]
			if k == other {
				alts[i] += ` ( "," space ` + kv[k] + ` )*`
			} else if r := rest(i + 1); r != "" {
				alts[i] += " " + r
			}
		}
		b.WriteString("( " + strings.Join(alts, " | ") + " )?")
	}
	b.WriteString(` space "}"`)
	return c.named(name, b.String()), nil
}

// allOf merges a list of schemas: objects into one object, enums into
// their intersection; a list of one schema is that schema.
func (c *schemaConv) allOf(raw json.RawMessage, name, at string) (string, error) {
	var list []json.RawMessage
	if err := json.Unmarshal(raw, &list); err != nil || len(list) == 0 {
		return "", fmt.Errorf("grammar: %s: a list of schemas", at)
	}
	if len(list) == 1 {
		return c.visit(list[0], name, at+"[0]")
	}
	merged := &object{m: map[string]json.RawMessage{}}
	var required []string
	var enum []string // the JSON texts all enums allow
	enums, objects := 0, 0
	for i, s := range list {
		where := fmt.Sprintf("%s[%d]", at, i)
		o, err := readObject(s)
		for err == nil && o.has("$ref") && len(o.keys) == 1 {
			var ref string
			json.Unmarshal(o.m["$ref"], &ref)
			if s, err = c.pointer(ref); err == nil {
				o, err = readObject(s)
			}
		}
		if err != nil {
			return "", fmt.Errorf("grammar: %s: %v", where, err)
		}
		switch {
		case o.has("enum") || o.has("const"):
			var values []json.RawMessage
			if o.has("const") {
				values = []json.RawMessage{o.m["const"]}
			} else if err := json.Unmarshal(o.m["enum"], &values); err != nil {
				return "", fmt.Errorf("grammar: %s.enum: a list of values", where)
			}
			var texts []string
			for _, v := range values {
				t, err := compactJSON(v)
				if err != nil {
					return "", fmt.Errorf("grammar: %s.enum: %v", where, err)
				}
				if enums == 0 || slices.Contains(enum, t) {
					texts = append(texts, t)
				}
			}
			enum, enums = texts, enums+1
		case o.has("properties"):
			props, err := readObject(o.m["properties"])
			if err != nil {
				return "", fmt.Errorf("grammar: %s.properties: an object of schemas", where)
			}
			for _, k := range props.keys {
				if old, ok := merged.m[k]; ok && !bytes.Equal(old, props.m[k]) {
					return "", fmt.Errorf("grammar: %s: property %q is also in another schema of allOf: not supported", where, k)
				}
				if !merged.has(k) {
					merged.keys = append(merged.keys, k)
				}
				merged.m[k] = props.m[k]
			}
			var req []string
			if o.has("required") && json.Unmarshal(o.m["required"], &req) != nil {
				return "", fmt.Errorf("grammar: %s.required: a list of names", where)
			}
			required = append(required, req...)
			objects++
		default:
			return "", fmt.Errorf("grammar: %s: allOf merges objects with properties, or enums", where)
		}
	}
	if enums > 0 && objects > 0 {
		return "", fmt.Errorf("grammar: %s: allOf of objects and enums together not supported", at)
	}
	if enums > 0 {
		if len(enum) == 0 {
			return "", fmt.Errorf("grammar: %s: no value is in every enum", at)
		}
		alts := make([]string, len(enum))
		for i, t := range enum {
			alts[i] = QuoteGBNF(t)
		}
		return c.named(name, strings.Join(alts, " | ")), nil
	}
	for _, r := range required {
		if !merged.has(r) {
			return "", fmt.Errorf("grammar: %s: required %q is not among the properties", at, r)
		}
	}
	return c.objectRule(merged, required, nil, name, at)
}

// array writes an array: a tuple (prefixItems, or items as a list), then
// items, minItems to maxItems of them in all.
func (c *schemaConv) array(o *object, name, at string) (string, error) {
	var tuple []json.RawMessage
	items, hasItems := o.m["items"]
	if p, ok := o.m["prefixItems"]; ok {
		if err := json.Unmarshal(p, &tuple); err != nil {
			return "", fmt.Errorf("grammar: %s.prefixItems: a list of schemas", at)
		}
	} else if hasItems && bytes.HasPrefix(bytes.TrimSpace(items), []byte("[")) {
		if err := json.Unmarshal(items, &tuple); err != nil {
			return "", fmt.Errorf("grammar: %s.items: a schema or a list of schemas", at)
		}
		hasItems = false
	}
	c.prim("space")
	var parts []string
	for i, s := range tuple {
		e, err := c.visit(s, sub(name, fmt.Sprintf("tuple-%d", i)), fmt.Sprintf("%s.prefixItems[%d]", at, i))
		if err != nil {
			return "", err
		}
		parts = append(parts, e)
	}
	body := strings.Join(parts, ` "," space `)
	if tuple == nil || hasItems {
		var item string
		switch {
		case !hasItems:
			item = c.prim("value")
		case string(bytes.TrimSpace(items)) == "false":
		default:
			var err error
			if item, err = c.visit(items, sub(name, "item"), at+".items"); err != nil {
				return "", err
			}
		}
		lo, hi, err := counts(o, "minItems", "maxItems", at)
		if err != nil {
			return "", err
		}
		lo, hi = max(lo-len(tuple), 0), max(hi-len(tuple), -1)
		if hi < 0 && hi != -1 {
			hi = 0
		}
		if item != "" && hi != 0 {
			if tuple == nil {
				body = list(item, lo, hi)
			} else {
				body += " " + repeat(`"," space `+item, lo, hi)
			}
		}
	}
	return c.named(name, `"[" space `+body+` space "]"`), nil
}

// counts reads a pair of counts (minItems, maxItems); hi is −1 when unset.
func counts(o *object, loKey, hiKey, at string) (lo, hi int, err error) {
	hi = -1
	for k, dst := range map[string]*int{loKey: &lo, hiKey: &hi} {
		if v, ok := o.m[k]; ok {
			if err := json.Unmarshal(v, dst); err != nil || *dst < 0 {
				return 0, 0, fmt.Errorf("grammar: %s.%s: a count", at, k)
			}
		}
	}
	if hi >= 0 && hi < lo {
		return 0, 0, fmt.Errorf("grammar: %s: %s %d < %s %d", at, hiKey, hi, loKey, lo)
	}
	return lo, hi, nil
}

// list is lo to hi (−1: any number of) items separated by commas.
func list(item string, lo, hi int) string {
	if hi == 0 {
		return ""
	}
	more := repeat(`"," space `+item, max(lo-1, 0), max(hi-1, -1))
	if hi == 1 {
		more = ""
	}
	body := item
	if more != "" {
		body += " " + more
	}
	if lo == 0 {
		return "( " + body + " )?"
	}
	return body
}

// repeat is lo to hi (−1: no limit) of x, in GBNF's repetition forms.
func repeat(x string, lo, hi int) string {
	if !isAtom(x) {
		x = "( " + x + " )"
	}
	switch {
	case hi == 0:
		return `""`
	case lo == 0 && hi == 1:
		return x + "?"
	case lo == 0 && hi < 0:
		return x + "*"
	case lo == 1 && hi < 0:
		return x + "+"
	case hi < 0:
		return fmt.Sprintf("%s{%d,}", x, lo)
	case lo == hi:
		return fmt.Sprintf("%s{%d}", x, lo)
	}
	return fmt.Sprintf("%s{%d,%d}", x, lo, hi)
}

// isAtom reports whether a GBNF expression is one item: a rule name, a
// literal, a class or a parenthesised group.
func isAtom(x string) bool {
	if ruleName(x) == x {
		return true
	}
	n := len(x)
	if n < 2 {
		return false
	}
	closer := map[byte]byte{'"': '"', '[': ']', '(': ')'}[x[0]]
	if closer == 0 || x[n-1] != closer {
		return false
	}
	// One item when the opening's match is the last character.
	depth, inLit, inClass := 0, false, false
	for i := 0; i < n; i++ {
		switch ch := x[i]; {
		case ch == '\\' && (inLit || inClass):
			i++
		case inLit:
			inLit = ch != '"'
		case inClass:
			inClass = ch != ']'
		case ch == '"':
			inLit = true
		case ch == '[':
			inClass = true
		case ch == '(':
			depth++
		case ch == ')':
			depth--
		}
		if depth == 0 && !inLit && !inClass && i < n-1 {
			return false
		}
	}
	return true
}

// notKeys is a JSON string whose text is none of keys: a trie of the
// keys' characters, leaving it at any character that parts from them.
func (c *schemaConv) notKeys(keys []string) string {
	type trie struct {
		next map[rune]*trie
		end  bool
	}
	root := &trie{next: map[rune]*trie{}}
	for _, k := range keys {
		quoted := jsonText(k)
		t := root
		for _, r := range quoted[1 : len(quoted)-1] {
			if t.next[r] == nil {
				t.next[r] = &trie{next: map[rune]*trie{}}
			}
			t = t.next[r]
		}
		t.end = true
	}
	char := c.prim("char")
	var walk func(t *trie) string
	walk = func(t *trie) string {
		var alts []string
		var firsts []rune
		for r := range t.next {
			firsts = append(firsts, r)
		}
		slices.Sort(firsts)
		for _, r := range firsts {
			alts = append(alts, QuoteGBNF(string(r))+" "+walk(t.next[r]))
		}
		// A character that parts from every key here, then any.
		other := setMinus(jsonRaw, runeSet(firsts...))
		part := gbnfClass(other)
		if !slices.Contains(firsts, '\\') {
			part += ` | [\\] (["\\bfnrt] | "u" [0-9a-fA-F]{4})`
		}
		alts = append(alts, "( "+part+" ) "+char+"*")
		body := "( " + strings.Join(alts, " | ") + " )"
		if !t.end {
			body += "?"
		}
		return body
	}
	return `"\"" ` + walk(root) + ` "\""`
}

// Part is a piece of a grammar Compose writes: a literal text, the JSON
// values of a schema, or a GBNF expression (of characters and character
// classes, no rule names).
type Part struct {
	Text     string
	Schema   json.RawMessage
	Expr     string
	Optional []Part // a group of parts that may be left out
}

// Compose returns the grammar of the texts that are one of alts, each its
// parts one after the other: a forced tool call, say, its opening, the
// function's name, its arguments to the function's schema and its closing.
// Each schema is held to CompileSchema's bounds; a schema CompileSchema
// refuses is an error.
func Compose(alts [][]Part) (*GBNF, error) {
	c := &schemaConv{rules: map[string]string{}, direct: map[string]bool{"root": true}}
	c.names = append(c.names, "root")
	c.rules["root"] = "\x00root" // reserved
	var parts func(alt []Part, hint string) (string, error)
	parts = func(alt []Part, hint string) (string, error) {
		var seq []string
		for k, p := range alt {
			switch {
			case p.Schema != nil:
				if err := CheckSchemaBounds(p.Schema); err != nil {
					return "", err
				}
				c.doc, c.refs = p.Schema, map[string]string{}
				e, err := c.visit(p.Schema, fmt.Sprintf("%s-%d", hint, k), "schema")
				if err != nil {
					return "", err
				}
				c.docs++
				seq = append(seq, "( "+e+" )")
			case p.Expr != "":
				seq = append(seq, "( "+p.Expr+" )")
			case p.Text != "":
				seq = append(seq, QuoteGBNF(p.Text))
			case len(p.Optional) > 0:
				e, err := parts(p.Optional, fmt.Sprintf("%s-%d", hint, k))
				if err != nil {
					return "", err
				}
				seq = append(seq, "( "+e+" )?")
			}
		}
		if len(seq) == 0 {
			return `""`, nil
		}
		return strings.Join(seq, " "), nil
	}
	bodies := make([]string, len(alts))
	for i, alt := range alts {
		var err error
		if bodies[i], err = parts(alt, fmt.Sprintf("part%d", i)); err != nil {
			return nil, err
		}
	}
	if len(bodies) == 0 {
		return nil, fmt.Errorf("grammar: Compose: no alternatives")
	}
	c.rules["root"] = strings.Join(bodies, " | ")
	return ParseGBNF(c.text(), nil)
}
