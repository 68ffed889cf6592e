// JSON schemas: structured outputs, the JSON grammar narrowed to the
// values a schema allows.

package grammar

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"
)

// Schema is a compiled JSON schema: the subset of JSON Schema that
// structured outputs use (Ollama's format, OpenAI's json_schema, the
// schemas Pydantic writes). Per value: type (one or a list of object,
// array, string, integer, number, boolean, null), enum and const (of
// strings, numbers, booleans and null), for objects properties, required
// and additionalProperties (false or a schema; when absent, only the listed
// properties may appear, as structured outputs mean, and an object without
// properties takes any), for arrays items, minItems and maxItems; "$ref"
// into the schema's own $defs (recursion included); anyOf and oneOf whose
// schemas take different types of value (Optional[X]: X or null), and an
// allOf of one schema. Keys come as the schema spells them, each at most
// once, in any order; an enum value as the schema writes it. Titles,
// descriptions, defaults, examples and a string's format are read past
// (format is not enforced); any other keyword (pattern, minimum,
// minLength, …) is refused by CompileSchema rather than ignored.
//
// A JSON follows a schema when made by NewJSONSchema: its mask allows a
// token only when the text can still become a value the schema accepts, so
// a reply never runs into a dead end.
type Schema struct {
	root *node
}

// kinds of JSON values, as bits of node.types.
const (
	kObject uint8 = 1 << iota
	kArray
	kString
	kInteger
	kNumber // any number; implies integers
	kBoolean
	kNull
	kAny = kObject | kArray | kString | kInteger | kNumber | kBoolean | kNull
)

// node is one schema.
type node struct {
	types    uint8
	props    []prop   // the listed properties, in the schema's order
	required uint64   // bit i: props[i] is required
	extra    *node    // the schema of other properties; nil: none may appear
	items    *node    // the schema of array items
	minItems int      // at least this many items
	maxItems int      // −1: no limit
	enum     []string // the allowed values as JSON text; nil: any of types
	// alts, for anyOf and oneOf, is the schema of each kind of value (the
	// kind a value's first character shows; kInteger for numbers).
	alts map[uint8]*node
}

type prop struct {
	key  string // the name as JSON writes it inside the quotes
	node *node
}

// anyValue is the schema {}: any JSON value.
var anyValue = &node{types: kAny, maxItems: -1}

func init() { anyValue.extra, anyValue.items = anyValue, anyValue }

// annotations are the keywords CompileSchema reads past.
var annotations = map[string]bool{"title": true, "description": true, "$schema": true, "$id": true, "$comment": true,
	"default": true, "examples": true, "readOnly": true, "writeOnly": true, "deprecated": true,
	"format": true} // a string's format ("date-time" …) is read as a description: not enforced

// CompileSchema reads a JSON schema. The top level must be an object or an
// array (a reply is one).
func CompileSchema(raw []byte) (*Schema, error) {
	c := &compiler{doc: raw, refs: map[string]*node{}}
	n, err := c.compile(raw, "schema")
	if err != nil {
		return nil, err
	}
	if n.types&(kObject|kArray) == 0 || n.types&^(kObject|kArray) != 0 {
		return nil, fmt.Errorf("grammar: the schema's top level must be an object or an array")
	}
	return &Schema{root: n}, nil
}

// compiler compiles one schema document: refs are JSON pointers into doc,
// compiled once each (so recursive schemas make cyclic nodes).
type compiler struct {
	doc  []byte
	refs map[string]*node
}

// keywords are the ones compile reads; the others it refuses.
var keywords = map[string]bool{"type": true, "properties": true, "required": true, "additionalProperties": true,
	"items": true, "minItems": true, "maxItems": true, "enum": true, "const": true,
	"$ref": true, "anyOf": true, "oneOf": true, "allOf": true, "$defs": true, "definitions": true}

func (c *compiler) compile(raw []byte, at string) (*node, error) { return c.compileInto(nil, raw, at) }

// compileInto compiles raw into n (a new node when nil), or returns
// another node when raw is a reference, a union or true.
func (c *compiler) compileInto(n *node, raw []byte, at string) (*node, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		var b bool
		if json.Unmarshal(raw, &b) == nil && b {
			return anyValue, nil // true: anything
		}
		return nil, fmt.Errorf("grammar: %s: a schema is an object: %v", at, err)
	}
	var unknown, constraints []string
	for k := range m {
		switch {
		case annotations[k], k == "$defs", k == "definitions":
		case keywords[k]:
			constraints = append(constraints, k)
		default:
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return nil, fmt.Errorf("grammar: %s: %s not supported (toy's schemas: type, properties, required, additionalProperties, items, minItems, maxItems, enum, const, $ref, anyOf, oneOf)",
			at, strings.Join(unknown, ", "))
	}
	// $ref, anyOf/oneOf and a one-schema allOf stand alone (annotations aside).
	for _, k := range []string{"$ref", "anyOf", "oneOf", "allOf"} {
		v, ok := m[k]
		if !ok {
			continue
		}
		if len(constraints) > 1 {
			sort.Strings(constraints)
			return nil, fmt.Errorf("grammar: %s: %s beside other constraints (%s) not supported", at, k, strings.Join(constraints, ", "))
		}
		switch k {
		case "$ref":
			return c.ref(v, at)
		case "allOf":
			var list []json.RawMessage
			if err := json.Unmarshal(v, &list); err != nil || len(list) != 1 {
				return nil, fmt.Errorf("grammar: %s.allOf: only one schema is supported", at)
			}
			return c.compile(list[0], at+".allOf[0]")
		default:
			return c.union(v, at+"."+k)
		}
	}
	if n == nil {
		n = &node{}
	}
	*n = node{types: kAny, maxItems: -1}
	if t, ok := m["type"]; ok {
		var one string
		var list []string
		if json.Unmarshal(t, &one) == nil {
			list = []string{one}
		} else if err := json.Unmarshal(t, &list); err != nil {
			return nil, fmt.Errorf("grammar: %s.type: a name or a list of names", at)
		}
		n.types = 0
		for _, name := range list {
			k, ok := map[string]uint8{"object": kObject, "array": kArray, "string": kString, "integer": kInteger,
				"number": kNumber | kInteger, "boolean": kBoolean, "null": kNull}[name]
			if !ok {
				return nil, fmt.Errorf("grammar: %s.type: unknown type %q", at, name)
			}
			n.types |= k
		}
	}
	if p, ok := m["properties"]; ok {
		var order []string // the schema's order, which a Go map loses
		dec := json.NewDecoder(bytes.NewReader(p))
		if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
			return nil, fmt.Errorf("grammar: %s.properties: an object", at)
		}
		for dec.More() {
			tok, err := dec.Token()
			if err != nil {
				return nil, fmt.Errorf("grammar: %s.properties: %v", at, err)
			}
			name := tok.(string)
			var sub json.RawMessage
			if err := dec.Decode(&sub); err != nil {
				return nil, fmt.Errorf("grammar: %s.properties.%s: %v", at, name, err)
			}
			pn, err := c.compile(sub, at+".properties."+name)
			if err != nil {
				return nil, err
			}
			order = append(order, name)
			n.props = append(n.props, prop{key: quoteInner(name), node: pn})
		}
		if len(n.props) > 64 {
			return nil, fmt.Errorf("grammar: %s: %d properties, toy's schemas take at most 64", at, len(n.props))
		}
		if r, ok := m["required"]; ok {
			var req []string
			if err := json.Unmarshal(r, &req); err != nil {
				return nil, fmt.Errorf("grammar: %s.required: a list of names", at)
			}
			for _, name := range req {
				i := slices.Index(order, name)
				if i < 0 {
					return nil, fmt.Errorf("grammar: %s.required: %q is not among the properties", at, name)
				}
				n.required |= 1 << i
			}
		}
	} else if _, ok := m["required"]; ok {
		return nil, fmt.Errorf("grammar: %s: required without properties", at)
	} else {
		n.extra = anyValue // an object of any keys
	}
	if a, ok := m["additionalProperties"]; ok {
		var b bool
		switch {
		case json.Unmarshal(a, &b) == nil && !b:
			n.extra = nil
		default:
			extra, err := c.compile(a, at+".additionalProperties")
			if err != nil {
				return nil, err
			}
			n.extra = extra
		}
	}
	n.items = anyValue
	if it, ok := m["items"]; ok {
		items, err := c.compile(it, at+".items")
		if err != nil {
			return nil, err
		}
		n.items = items
	}
	for k, dst := range map[string]*int{"minItems": &n.minItems, "maxItems": &n.maxItems} {
		if v, ok := m[k]; ok {
			if err := json.Unmarshal(v, dst); err != nil || *dst < 0 {
				return nil, fmt.Errorf("grammar: %s.%s: a count", at, k)
			}
		}
	}
	if n.maxItems >= 0 && n.maxItems < n.minItems {
		return nil, fmt.Errorf("grammar: %s: maxItems %d < minItems %d", at, n.maxItems, n.minItems)
	}
	var values []json.RawMessage
	if e, ok := m["enum"]; ok {
		if err := json.Unmarshal(e, &values); err != nil || len(values) == 0 {
			return nil, fmt.Errorf("grammar: %s.enum: a list of values", at)
		}
	}
	if c, ok := m["const"]; ok {
		values = append(values, c)
	}
	var enumKinds uint8
	for _, v := range values {
		var b bytes.Buffer
		if err := json.Compact(&b, v); err != nil {
			return nil, err
		}
		text := b.String()
		k := kindOf(text[0])
		if k == kObject || k == kArray {
			return nil, fmt.Errorf("grammar: %s: enum and const take strings, numbers, booleans and null", at)
		}
		if k == kNumber && !strings.ContainsAny(text, ".eE") {
			k = kInteger
		}
		if n.types&k == 0 {
			return nil, fmt.Errorf("grammar: %s: enum value %s is not of the schema's type", at, text)
		}
		if k == kNumber {
			k |= kInteger // it starts as an integer does
		}
		enumKinds |= k
		n.enum = append(n.enum, text)
	}
	if n.enum != nil {
		n.types &= enumKinds // an enum of strings admits no array, say
	}
	return n, nil
}

// ref compiles the schema a "$ref" points to: a JSON pointer into this
// document ("#/$defs/Pet"), compiled once, so that a recursive schema
// makes a cycle of nodes.
func (c *compiler) ref(raw json.RawMessage, at string) (*node, error) {
	var ref string
	if err := json.Unmarshal(raw, &ref); err != nil || !strings.HasPrefix(ref, "#") {
		return nil, fmt.Errorf("grammar: %s.$ref: only references into the schema itself (\"#/$defs/…\") are supported", at)
	}
	if n, ok := c.refs[ref]; ok {
		return n, nil
	}
	target := json.RawMessage(c.doc)
	for _, part := range strings.Split(strings.TrimPrefix(ref, "#"), "/")[1:] {
		part = strings.ReplaceAll(strings.ReplaceAll(part, "~1", "/"), "~0", "~")
		var m map[string]json.RawMessage
		if json.Unmarshal(target, &m) != nil || m[part] == nil {
			return nil, fmt.Errorf("grammar: %s.$ref: %q points to nothing", at, ref)
		}
		target = m[part]
	}
	n := &node{}
	c.refs[ref] = n // placed before compiling it: a recursive reference finds it, its type already set
	body, err := c.compileInto(n, target, ref)
	if err != nil {
		return nil, err
	}
	if body != n { // the target is itself a reference or a union
		*n = *body
	}
	return n, nil
}

// union compiles anyOf or oneOf. Its schemas must be told apart by the
// first character of a value — an object, an array, a string, a number, a
// boolean or null, each in at most one of them (as Optional[X] is, X or
// null) — so that the value's first character picks its schema, and anyOf
// and oneOf mean the same.
func (c *compiler) union(raw json.RawMessage, at string) (*node, error) {
	var list []json.RawMessage
	if err := json.Unmarshal(raw, &list); err != nil || len(list) == 0 {
		return nil, fmt.Errorf("grammar: %s: a list of schemas", at)
	}
	u := &node{alts: map[uint8]*node{}, maxItems: -1}
	for i, sub := range list {
		n, err := c.compile(sub, fmt.Sprintf("%s[%d]", at, i))
		if err != nil {
			return nil, err
		}
		for _, k := range []uint8{kObject, kArray, kString, kInteger, kBoolean, kNull} {
			if n.types&k == 0 {
				continue
			}
			if u.alts[k] != nil {
				return nil, fmt.Errorf("grammar: %s: two schemas take values of one type (%s); toy's unions pick a schema by the value's type", at, kindName(k))
			}
			u.alts[k] = n
			u.types |= n.types & k
			if k == kInteger {
				u.types |= n.types & kNumber // a number alternative keeps its fractions
			}
		}
	}
	return u, nil
}

// kindName names a kind for messages.
func kindName(k uint8) string {
	return map[uint8]string{kObject: "object", kArray: "array", kString: "string", kInteger: "number",
		kBoolean: "boolean", kNull: "null"}[k]
}

// quoteInner is name as JSON writes it between the quotes, HTML characters
// unescaped.
func quoteInner(name string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(name)
	s := strings.TrimSuffix(b.String(), "\n")
	return s[1 : len(s)-1]
}

// kindOf is the kind of value a JSON text starting with c is.
func kindOf(c byte) uint8 {
	switch {
	case c == '{':
		return kObject
	case c == '[':
		return kArray
	case c == '"':
		return kString
	case c == 't' || c == 'f':
		return kBoolean
	case c == 'n':
		return kNull
	}
	return kNumber
}

// NewJSONSchema returns the state before a reply that must be a value of s.
func NewJSONSchema(s *Schema) *JSON {
	return &JSON{at: rootObject, sch: &schemaState{root: s.root}}
}

// schemaState follows a reply through its schema beside the JSON grammar's
// automaton.
type schemaState struct {
	root   *node
	frames []frame // one per open container
	cur    *node   // the scalar being read (nil: none)
	text   string  // its text so far, when cur has an enum
}

// frame is an open object or array.
type frame struct {
	n     *node
	obj   bool
	seen  uint64 // the listed properties already given
	key   string // the key being read, as written so far
	value *node  // the schema of the value after the last key
	count int    // items started
}

func (s *schemaState) clone() *schemaState {
	c := *s
	c.frames = slices.Clone(s.frames)
	return &c
}

// expected is the schema of the value that starts now, counting an array's
// item; nil when none may start here.
func (s *schemaState) expected() *node {
	if len(s.frames) == 0 {
		return s.root
	}
	f := &s.frames[len(s.frames)-1]
	if f.obj {
		return f.value
	}
	if f.n.maxItems >= 0 && f.count >= f.n.maxItems {
		return nil
	}
	f.count++
	return f.n.items
}

// start begins a value with r.
func (s *schemaState) start(r rune) bool {
	n := s.expected()
	if n == nil || r > 0x7f {
		return false
	}
	k := kindOf(byte(r))
	if k == kNumber {
		k = kInteger // a number starts as an integer; '.' or 'e' make it a number
	}
	if n.alts != nil {
		n = n.alts[k] // a union: the value's kind picks its schema
		if n == nil {
			return false
		}
	}
	if n.types&k == 0 {
		return false
	}
	switch k {
	case kObject:
		s.frames = append(s.frames, frame{n: n, obj: true})
	case kArray:
		s.frames = append(s.frames, frame{n: n})
	default:
		s.cur, s.text = n, string(r)
		return s.enumPrefix()
	}
	return true
}

// enumPrefix reports whether the scalar's text can still become one of its
// enum values.
func (s *schemaState) enumPrefix() bool {
	if s.cur.enum == nil {
		return true
	}
	for _, v := range s.cur.enum {
		if strings.HasPrefix(v, s.text) {
			return true
		}
	}
	return false
}

// char adds r, read inside a key, a string, a number or a literal.
func (s *schemaState) char(r rune, key bool) bool {
	if key {
		f := &s.frames[len(s.frames)-1]
		f.key += string(r)
		return s.keyPossible(f, f.key)
	}
	if s.cur.enum == nil {
		return true
	}
	s.text += string(r)
	return s.enumPrefix()
}

// fraction: the number gets a fraction or an exponent.
func (s *schemaState) fraction() bool { return s.cur.types&kNumber != 0 }

// end completes the scalar.
func (s *schemaState) end() bool {
	ok := s.cur.enum == nil || slices.Contains(s.cur.enum, s.text)
	s.cur, s.text = nil, ""
	return ok
}

// keyPossible reports whether a key that starts with prefix may still come
// in f: a listed one not yet given, or any other when f takes others.
func (s *schemaState) keyPossible(f *frame, prefix string) bool {
	for i, p := range f.n.props {
		if f.seen&(1<<i) == 0 && strings.HasPrefix(p.key, prefix) {
			return true
		}
	}
	return f.n.extra != nil
}

// keyStart: a key's opening quote.
func (s *schemaState) keyStart() bool {
	f := &s.frames[len(s.frames)-1]
	f.key = ""
	return s.keyPossible(f, "")
}

// keyEnd: the key's closing quote; the value's schema follows from it.
func (s *schemaState) keyEnd() bool {
	f := &s.frames[len(s.frames)-1]
	for i, p := range f.n.props {
		if p.key == f.key {
			if f.seen&(1<<i) != 0 {
				return false // each key once
			}
			f.seen |= 1 << i
			f.value = p.node
			return true
		}
	}
	f.value = f.n.extra
	return f.value != nil
}

// more: a comma, another key or item must be able to follow.
func (s *schemaState) more() bool {
	f := &s.frames[len(s.frames)-1]
	if f.obj {
		return s.keyPossible(f, "")
	}
	return f.n.maxItems < 0 || f.count < f.n.maxItems
}

// close ends the innermost container: an object needs its required keys,
// an array its minItems.
func (s *schemaState) close() bool {
	f := s.frames[len(s.frames)-1]
	if f.obj && f.seen&f.n.required != f.n.required || !f.obj && f.count < f.n.minItems {
		return false
	}
	s.frames = s.frames[:len(s.frames)-1]
	return true
}

// partialOK reports whether a character in [low, high], of which a token
// gave the first bytes, can continue the key or string being read.
func (s *schemaState) partialOK(key bool, low, high rune) bool {
	next := func(text, prefix string) bool { // text continues prefix with a character in range
		if !strings.HasPrefix(text, prefix) || len(text) == len(prefix) {
			return false
		}
		r, _ := utf8.DecodeRuneInString(text[len(prefix):])
		return low <= r && r <= high
	}
	if key {
		f := &s.frames[len(s.frames)-1]
		if f.n.extra != nil {
			return true
		}
		for i, p := range f.n.props {
			if f.seen&(1<<i) == 0 && next(p.key, f.key) {
				return true
			}
		}
		return false
	}
	if s.cur.enum == nil {
		return true
	}
	for _, v := range s.cur.enum {
		if next(v, s.text) {
			return true
		}
	}
	return false
}
