// tools.go: tool calling — the tools a request offers, the formats chat
// templates teach models to call them in, and reading the calls back out of
// a reply.

package serve

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"math/big"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/toyml/toy/toy/chat"
	"github.com/toyml/toy/toy/grammar"
	"github.com/toyml/toy/toy/tokenizer"
)

// toolFormat is the way a model family writes a tool call, as its chat
// template shows it the calls of earlier turns.
type toolFormat int

const (
	unknownFormat toolFormat = iota
	// hermesFormat: Qwen2.5, Qwen3 and the Hermes models, one call per
	// tag, content before the first:
	//	<tool_call>\n{"name": "get_weather", "arguments": {"place": "Paris"}}\n</tool_call>
	hermesFormat
	// llama3Format: Llama 3.1 and 3.2, a bare JSON object as the whole
	// reply (or after <|python_tag|>); "parameters" holds the arguments:
	//	{"name": "get_weather", "parameters": {"place": "Paris"}}
	llama3Format
	// mistralFormat: Mistral v0.3, a list after the [TOOL_CALLS] token:
	//	[TOOL_CALLS] [{"name": "get_weather", "arguments": {"place": "Paris"}, "id": "a1b2c3d4e"}]
	mistralFormat
	// xmlFormat: Qwen3.5 and Qwen3-Coder, one call per tag, each argument
	// in its own element, its value as text (JSON for non-strings):
	//	<tool_call>\n<function=get_weather>\n<parameter=place>\nParis\n</parameter>\n</function>\n</tool_call>
	xmlFormat
	// glmFormat: GLM-4.5 and GLM-4.6, one call per tag, the name first,
	// then each argument as a key element and a value element (its value
	// as text, JSON for non-strings, as in xmlFormat):
	//	<tool_call>get_weather\n<arg_key>place</arg_key>\n<arg_value>Paris</arg_value>\n</tool_call>
	glmFormat
)

func (f toolFormat) String() string {
	return [...]string{"unknown", "hermes", "llama3", "mistral", "xml", "glm"}[f]
}

// detectToolFormat reads the format off the chat template's source: what it
// writes around the tool calls of an assistant message.
func detectToolFormat(tmpl *chat.Template) toolFormat {
	if tmpl == nil {
		return unknownFormat
	}
	src := tmpl.Source()
	switch {
	case strings.Contains(src, "<tool_call>") && strings.Contains(src, "<function="):
		return xmlFormat
	case strings.Contains(src, "<tool_call>") && strings.Contains(src, "<arg_key>"):
		return glmFormat
	case strings.Contains(src, "<tool_call>"):
		return hermesFormat
	case strings.Contains(src, "[TOOL_CALLS]"):
		return mistralFormat
	case strings.Contains(src, "<|start_header_id|>") && strings.Contains(src, `"parameters": `) && strings.Contains(src, "tool_call"):
		return llama3Format
	}
	return unknownFormat
}

// markers are the texts of a format that may be control tokens, which a
// decoder would drop: they are kept in the reply so that it can be parsed.
func (f toolFormat) markers() []string {
	switch f {
	case hermesFormat, xmlFormat, glmFormat:
		return []string{"<tool_call>", "</tool_call>"}
	case llama3Format:
		return []string{"<|python_tag|>"}
	case mistralFormat:
		return []string{"[TOOL_CALLS]"}
	}
	return nil
}

// opening is the start of a call to name ("" for any function): the text a
// forced call (tool_choice "required" or a named function) begins the reply
// with, as the template writes earlier calls.
func (f toolFormat) opening(name string) string {
	open := map[toolFormat]string{
		hermesFormat:  "<tool_call>\n{\"name\": \"",
		llama3Format:  "{\"name\": \"",
		mistralFormat: "[TOOL_CALLS] [{\"name\": \"",
		xmlFormat:     "<tool_call>\n<function=",
		glmFormat:     "<tool_call>",
	}[f]
	if name == "" {
		return open
	}
	switch f {
	case xmlFormat:
		return open + name + ">\n"
	case glmFormat:
		return open + name + "\n"
	}
	args := map[toolFormat]string{hermesFormat: "arguments", llama3Format: "parameters", mistralFormat: "arguments"}[f]
	return open + name + "\", \"" + args + "\": "
}

// toolCalls reads the tool calls of replies to one request.
type toolCalls struct {
	format toolFormat
	names  map[string]bool // the functions offered; a call to another is not one
	single bool            // parallel_tool_calls false: only the first call counts
	// strings holds, per function, the parameters its schema types as
	// strings: xmlFormat's and glmFormat's values are JSON for the others.
	strings map[string]map[string]bool
}

// toolCall is one parsed call; Arguments is the JSON text of an object.
type toolCall struct {
	ID, Name, Arguments string
}

// isMarker reports whether id is a control token of the format.
func (t *toolCalls) isMarker(tok *tokenizer.Tokenizer, id int32) bool {
	return tok.Type(id) == tokenizer.TypeControl && slices.Contains(t.format.markers(), tok.Piece(id))
}

// holdFrom is where streaming must pause in text: at the opening of a tool
// call, or a tail that may become one, so that a call is never shown as
// content. Trailing white space waits too (a call may follow it).
func (t *toolCalls) holdFrom(text string) int {
	end := len(text)
	for _, o := range t.format.markers()[:min(1, len(t.format.markers()))] { // the opening one
		if i := strings.Index(text, o); i >= 0 {
			end = min(end, i)
			continue
		}
		for k := min(len(o)-1, len(text)); k > 0; k-- {
			if strings.HasSuffix(text, o[:k]) {
				end = min(end, len(text)-k)
				break
			}
		}
	}
	if t.format == llama3Format { // a reply that is (so far) one JSON object
		if s := strings.TrimLeft(text, " \t\r\n"); s == "" || s[0] == '{' {
			end = 0
		}
	}
	return len(strings.TrimRight(text[:end], " \t\r\n"))
}

// parse reads the calls out of a whole reply. ok is false when the reply
// holds none, or anything that is not one well-formed call to an offered
// function where a call should be: then the reply is content as it stands.
func (t *toolCalls) parse(text string) (calls []toolCall, content string, ok bool) {
	switch t.format {
	case hermesFormat:
		calls, content, ok = parseTagged(text, func(body string) (toolCall, bool) { return callFromJSON(body, "arguments") })
	case llama3Format:
		calls, content, ok = parseLlama3(text)
	case mistralFormat:
		calls, content, ok = parseMistral(text)
	case xmlFormat:
		calls, content, ok = parseTagged(text, func(body string) (toolCall, bool) { return callFromXML(body, t.strings) })
	case glmFormat:
		calls, content, ok = parseTagged(text, func(body string) (toolCall, bool) { return callFromGLM(body, t.strings) })
	}
	if !ok || len(calls) == 0 {
		return nil, text, false
	}
	for _, c := range calls {
		if t.names != nil && !t.names[c.Name] {
			return nil, text, false
		}
	}
	if t.single {
		calls = calls[:1]
	}
	return calls, content, true
}

// parseTagged reads replies whose calls each stand in a <tool_call> tag,
// content before the first: Hermes's JSON bodies and Qwen3.5's XML ones,
// each read by call.
func parseTagged(text string, call func(body string) (toolCall, bool)) ([]toolCall, string, bool) {
	const open, close = "<tool_call>", "</tool_call>"
	i := strings.Index(text, open)
	if i < 0 {
		return nil, "", false
	}
	content, rest := strings.TrimRight(text[:i], " \t\r\n"), text[i:]
	var calls []toolCall
	for {
		rest = strings.TrimLeft(rest, " \t\r\n")
		if rest == "" {
			return calls, content, true
		}
		body, ok := strings.CutPrefix(rest, open)
		if !ok {
			return nil, "", false
		}
		body, rest, _ = strings.Cut(body, close) // the last may lack its closing tag
		c, ok := call(body)
		if !ok {
			return nil, "", false
		}
		calls = append(calls, c)
	}
}

// callFromXML reads <function=NAME> and its <parameter=P>value</parameter>
// elements into a call whose arguments keep the parameters' order. A value
// is the text between the tags less one newline at each end; it is taken as
// JSON when it is JSON and the function's schema does not type the
// parameter as a string, else as a string.
func callFromXML(body string, strs map[string]map[string]bool) (toolCall, bool) {
	rest, ok := strings.CutPrefix(strings.TrimSpace(body), "<function=")
	if !ok {
		return toolCall{}, false
	}
	name, rest, ok := strings.Cut(rest, ">")
	if !ok || name == "" || strings.ContainsAny(name, "<\n") {
		return toolCall{}, false
	}
	rest = strings.TrimSuffix(strings.TrimRight(rest, " \t\r\n"), "</function>") // the last may lack it
	return callWithArgs(name, rest, strs, func(s string) (key, val, after string, ok bool) {
		if s, ok = strings.CutPrefix(s, "<parameter="); !ok {
			return "", "", "", false
		}
		key, after, ok = strings.Cut(s, ">")
		val, after, _ = strings.Cut(after, "</parameter>")
		return key, strings.TrimSuffix(strings.TrimPrefix(val, "\n"), "\n"), after, ok
	})
}

// callWithArgs reads the arguments in rest into a call to name whose
// arguments keep their order. next reads the argument its string starts
// with: its key, its value and what follows, or false where none starts it.
func callWithArgs(name, rest string, strs map[string]map[string]bool, next func(string) (key, val, after string, ok bool)) (toolCall, bool) {
	var args bytes.Buffer
	args.WriteByte('{')
	for n := 0; ; n++ {
		rest = strings.TrimLeft(rest, " \t\r\n")
		if rest == "" {
			break
		}
		key, val, after, ok := next(rest)
		if !ok || key == "" || strings.ContainsAny(key, "<\n") {
			return toolCall{}, false
		}
		writeArg(&args, n, key, val, strs[name][key])
		rest = after
	}
	args.WriteByte('}')
	return toolCall{Name: name, Arguments: args.String()}, true
}

// writeArg adds "key": value to the object being written in args (its
// n-th member): value as JSON when it is JSON and the schema does not type
// the parameter as a string, else as a string.
func writeArg(args *bytes.Buffer, n int, key, val string, isString bool) {
	if n > 0 {
		args.WriteByte(',')
	}
	k, _ := json.Marshal(key)
	args.Write(k)
	args.WriteByte(':')
	if v := strings.TrimSpace(val); !isString && v != "" && json.Valid([]byte(v)) {
		json.Compact(args, []byte(v))
	} else {
		b, _ := json.Marshal(val)
		args.Write(b)
	}
}

// callFromGLM reads a GLM call: the function's name, then
// <arg_key>K</arg_key> <arg_value>V</arg_value> pairs, into a call whose
// arguments keep their order; values as callFromXML takes them.
func callFromGLM(body string, strs map[string]map[string]bool) (toolCall, bool) {
	body = strings.TrimSpace(body)
	name, rest := body, ""
	if i := strings.Index(body, "<arg_key>"); i >= 0 {
		name, rest = strings.TrimSpace(body[:i]), body[i:]
	}
	if name == "" || strings.ContainsAny(name, "<>\n") {
		return toolCall{}, false
	}
	return callWithArgs(name, rest, strs, func(s string) (key, val, after string, ok bool) {
		if s, ok = strings.CutPrefix(s, "<arg_key>"); !ok {
			return "", "", "", false
		}
		if key, after, ok = strings.Cut(s, "</arg_key>"); !ok {
			return "", "", "", false
		}
		if s, ok = strings.CutPrefix(strings.TrimLeft(after, " \t\r\n"), "<arg_value>"); !ok {
			return "", "", "", false
		}
		val, after, _ = strings.Cut(s, "</arg_value>") // the last may lack it
		return key, val, after, true
	})
}

// stringParams lists, per offered function, the parameters its schema
// types as "string".
func stringParams(raw json.RawMessage) map[string]map[string]bool {
	var tools []struct {
		Function struct {
			Name       string `json:"name"`
			Parameters struct {
				Properties map[string]struct {
					Type any `json:"type"`
				} `json:"properties"`
			} `json:"parameters"`
		} `json:"function"`
	}
	json.Unmarshal(raw, &tools) // offeredTools checked it
	out := map[string]map[string]bool{}
	for _, t := range tools {
		m := map[string]bool{}
		for k, p := range t.Function.Parameters.Properties {
			if p.Type == "string" {
				m[k] = true
			}
		}
		out[t.Function.Name] = m
	}
	return out
}

func parseLlama3(text string) ([]toolCall, string, bool) {
	const tag = "<|python_tag|>"
	content, rest := "", text
	if i := strings.Index(text, tag); i >= 0 {
		content, rest = strings.TrimRight(text[:i], " \t\r\n"), text[i+len(tag):]
	}
	// One object, or several separated by ";" (as Llama 3.2 sometimes writes).
	var calls []toolCall
	for {
		rest = strings.TrimLeft(rest, " \t\r\n;")
		if rest == "" {
			return calls, content, len(calls) > 0
		}
		v, after, ok := nextJSON(rest)
		if !ok {
			return nil, "", false
		}
		c, ok := callFromJSON(v, "parameters", "arguments")
		if !ok {
			return nil, "", false
		}
		calls, rest = append(calls, c), after
	}
}

func parseMistral(text string) ([]toolCall, string, bool) {
	const tag = "[TOOL_CALLS]"
	i := strings.Index(text, tag)
	if i < 0 {
		return nil, "", false
	}
	content := strings.TrimRight(text[:i], " \t\r\n")
	v, after, ok := nextJSON(strings.TrimLeft(text[i+len(tag):], " \t\r\n"))
	if !ok || strings.TrimSpace(after) != "" {
		return nil, "", false
	}
	var list []json.RawMessage
	if json.Unmarshal([]byte(v), &list) != nil || len(list) == 0 {
		return nil, "", false
	}
	var calls []toolCall
	for _, raw := range list {
		c, ok := callFromJSON(string(raw), "arguments")
		if !ok {
			return nil, "", false
		}
		calls = append(calls, c)
	}
	return calls, content, true
}

// nextJSON cuts one JSON value off the front of s.
func nextJSON(s string) (value, rest string, ok bool) {
	dec := json.NewDecoder(strings.NewReader(s))
	var v json.RawMessage
	if dec.Decode(&v) != nil {
		return "", "", false
	}
	n := int(dec.InputOffset())
	return s[:n], s[n:], true
}

// callFromJSON reads {"name": …, <argsKey>: {…}, "id"?: …}. Arguments may
// be an object or a string holding one (some models write that).
func callFromJSON(s string, argsKeys ...string) (toolCall, bool) {
	var obj map[string]json.RawMessage
	if json.Unmarshal([]byte(strings.TrimSpace(s)), &obj) != nil {
		return toolCall{}, false
	}
	var c toolCall
	if json.Unmarshal(obj["name"], &c.Name) != nil || c.Name == "" {
		return toolCall{}, false
	}
	var args json.RawMessage
	for _, k := range argsKeys {
		if a, ok := obj[k]; ok {
			args = a
			break
		}
	}
	var str string
	if json.Unmarshal(args, &str) == nil {
		args = json.RawMessage(str)
	}
	var m map[string]any
	if len(args) == 0 {
		args = json.RawMessage("{}")
	} else if json.Unmarshal(args, &m) != nil {
		return toolCall{}, false
	}
	var b bytes.Buffer
	json.Compact(&b, args)
	c.Arguments = b.String()
	var id string
	if json.Unmarshal(obj["id"], &id) == nil && validCallID(id) {
		c.ID = id
	}
	return c, true
}

// newCallID returns a tool call id: nine letters and digits, the one form
// every template accepts (Mistral's raises an error on any other, OpenAI's
// "call_…" ids included).
func newCallID() string {
	const alnum = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	b := make([]byte, 9)
	for i := range b {
		n, _ := rand.Int(rand.Reader, big.NewInt(int64(len(alnum))))
		b[i] = alnum[n.Int64()]
	}
	return string(b)
}

func validCallID(id string) bool {
	if len(id) != 9 {
		return false
	}
	for _, r := range id {
		if !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9') {
			return false
		}
	}
	return true
}

// offeredTools checks a request's tools (OpenAI's shape, which Ollama
// shares): a list of {"type": "function", "function": {"name", …}}. It
// returns them as a template value and the names they offer.
func offeredTools(raw json.RawMessage) (any, map[string]bool, *apiError) {
	if len(raw) == 0 || string(raw) == "null" || string(raw) == "[]" {
		return nil, nil, nil
	}
	var tools []struct {
		Type     string `json:"type"`
		Function *struct {
			Name string `json:"name"`
		} `json:"function"`
	}
	if err := json.Unmarshal(raw, &tools); err != nil {
		return nil, nil, badRequest("tools", "tools must be a list of {\"type\": \"function\", \"function\": {\"name\": …, \"parameters\": …}}")
	}
	names := map[string]bool{}
	for i, t := range tools {
		if t.Type != "function" || t.Function == nil || t.Function.Name == "" {
			return nil, nil, badRequest(fmt.Sprintf("tools[%d]", i), "tools[%d] must be {\"type\": \"function\", \"function\": {\"name\": …}}", i)
		}
		names[t.Function.Name] = true
	}
	v, err := chat.FromJSON(raw)
	if err != nil {
		return nil, nil, badRequest("tools", "%v", err)
	}
	return v, names, nil
}

// toolChoice is OpenAI's tool_choice: "auto" (the default), "none",
// "required", or {"type": "function", "function": {"name": …}}.
type toolChoice struct {
	mode string // "auto", "none", "required" or "function"
	name string // for "function"
}

func parseToolChoice(raw json.RawMessage) (toolChoice, *apiError) {
	if len(raw) == 0 || string(raw) == "null" {
		return toolChoice{mode: "auto"}, nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		if s == "auto" || s == "none" || s == "required" {
			return toolChoice{mode: s}, nil
		}
	} else {
		var f struct {
			Type     string `json:"type"`
			Function struct {
				Name string `json:"name"`
			} `json:"function"`
		}
		if json.Unmarshal(raw, &f) == nil && f.Type == "function" && f.Function.Name != "" {
			return toolChoice{mode: "function", name: f.Function.Name}, nil
		}
	}
	return toolChoice{}, badRequest("tool_choice", `tool_choice must be "auto", "none", "required" or {"type": "function", "function": {"name": …}}`)
}

// toolSetup is what a chat request's tools come to.
type toolSetup struct {
	vars    any        // the tools for the template; nil: none
	calls   *toolCalls // how to read calls out of the reply; nil: do not
	prefill string     // the opening of a forced call
	// args, for a forced call, keeps the rest of the reply to the rest of
	// the call (forcedCallGrammar): the function's name among those it may
	// be, its arguments to its parameters' schema, and the format's closing.
	args *grammar.GBNF
	// call, for gpt-oss, is the harmony reply a forced call keeps to
	// (harmony.go) in place of prefill and args.
	call *harmonyCall
}

// closing is the text that ends a call after its arguments.
func (f toolFormat) closing() string {
	return map[toolFormat]string{
		hermesFormat:  "}\n</tool_call>",
		llama3Format:  "}",
		mistralFormat: "}]",
		xmlFormat:     "</function>\n</tool_call>",
		glmFormat:     "</tool_call>",
	}[f]
}

// forcedCallGrammar is the grammar of a forced call after its opening (which
// names the function when named is set, the only one in fns): for each
// function in fns, its name, its arguments and the format's closing, so
// that the reply is a call whatever the model would write. Arguments in
// JSON follow the function's parameters schema (any JSON object where it
// has none, or keywords grammar.Schema does not read); XML and GLM
// arguments are elements naming the schema's properties, values without
// "<". A schema past grammar's bounds is an error. One call is made: a
// forced reply ends after it.
func forcedCallGrammar(f toolFormat, rawTools json.RawMessage, fns []string, named bool) (*grammar.GBNF, error) {
	var alts [][]grammar.Part
	for _, name := range fns {
		var parts []grammar.Part
		if !named {
			parts = append(parts, grammar.Part{Text: strings.TrimPrefix(f.opening(name), f.opening(""))})
		}
		params := parametersOf(rawTools, name)
		switch f {
		case xmlFormat, glmFormat:
			if len(params) > 0 {
				if err := grammar.CheckSchemaBounds(params); err != nil {
					return nil, err
				}
			}
			parts = append(parts, elementArgs(f, params)...)
		default:
			schema := json.RawMessage(`{"type": "object"}`)
			if len(params) > 0 {
				if err := grammar.CheckSchemaBounds(params); err != nil {
					return nil, err
				}
				if _, err := grammar.CompileSchema(params); err == nil {
					schema = params
				}
			}
			parts = append(parts, grammar.Part{Schema: schema})
		}
		parts = append(parts, grammar.Part{Text: f.closing()})
		alts = append(alts, parts)
	}
	return grammar.Compose(alts)
}

// closingCall is a forced call's grammar state within the reply's token
// budget: while the budget is ample, the grammar alone; once the tokens
// left come within closeMargin of the characters the call still needs
// (grammar.Matcher.Remaining, a bound on the tokens it needs), only the
// tokens that bring its end nearest (grammar.Matcher.RemainingAfter), so
// that the call is complete — and the reply a call — before max_tokens or
// the context runs out.
type closingCall struct {
	m    *grammar.Matcher
	left int // tokens the reply may still have, its end of generation included
}

// closeMargin is how many tokens before it must, a call starts closing.
const closeMargin = 8

func (c *closingCall) closing() bool { return c.left <= c.m.Remaining()+1+closeMargin }

// Mask is the grammar's mask, or while closing the tokens that close the
// call fastest. Where the grammar allows a great many tokens (free text)
// only those of one character are weighed.
func (c *closingCall) Mask(logits []float32, v grammar.Vocab) {
	if !c.closing() {
		c.m.Mask(logits, v)
		return
	}
	allowed := slices.Clone(logits)
	c.m.Mask(allowed, v)
	var ids []int32
	for id, x := range allowed {
		if !math.IsInf(float64(x), -1) {
			ids = append(ids, int32(id))
		}
	}
	if len(ids) > 4096 {
		ids = slices.DeleteFunc(ids, func(id int32) bool { return utf8.RuneCountInString(v.Piece(id)) != 1 && !v.IsEOG(id) })
	}
	best, keep := c.m.Remaining(), []int32(nil)
	for _, id := range ids {
		switch n, ok := c.m.RemainingAfter(id, v); {
		case !ok || n > best:
		case n < best:
			best, keep = n, append(keep[:0], id)
		default:
			keep = append(keep, id)
		}
	}
	if len(keep) == 0 || best == c.m.Remaining() && !c.m.Complete() { // nothing brings the end nearer: the grammar's mask
		copy(logits, allowed)
		return
	}
	for id := range logits {
		logits[id] = float32(math.Inf(-1))
	}
	for _, id := range keep {
		logits[id] = allowed[id]
	}
}

// AllowsToken is the grammar's while the budget is ample; while closing it
// refuses, so that the sampler asks for the mask.
func (c *closingCall) AllowsToken(id int32, v grammar.Vocab) bool {
	return !c.closing() && c.m.AllowsToken(id, v)
}

func (c *closingCall) AcceptToken(id int32, v grammar.Vocab) error {
	if err := c.m.AcceptToken(id, v); err != nil {
		return err
	}
	c.left--
	return nil
}

// elementArgs are the parts of a call's arguments written as elements
// (xmlFormat, glmFormat): each required property of the parameters schema,
// in the order required lists them, then each optional one or not, in the
// order of their names. A value is text without "<" for a string (one of
// its enum's values when it has one), else JSON of the property's schema
// (without "<" when grammar.Schema does not read the schema).
func elementArgs(f toolFormat, params json.RawMessage) []grammar.Part {
	var schema struct {
		Properties map[string]json.RawMessage `json:"properties"`
		Required   []string                   `json:"required"`
	}
	json.Unmarshal(params, &schema)
	element := func(key string) []grammar.Part {
		var prop struct {
			Type any   `json:"type"`
			Enum []any `json:"enum"`
		}
		raw := schema.Properties[key]
		json.Unmarshal(raw, &prop)
		value := grammar.Part{Expr: `[^<]*`}
		switch {
		case prop.Type == "string" && len(prop.Enum) > 0:
			var alts []string
			for _, v := range prop.Enum {
				if s, ok := v.(string); ok && !strings.Contains(s, "<") {
					alts = append(alts, grammar.QuoteGBNF(s))
				}
			}
			if len(alts) > 0 {
				value = grammar.Part{Expr: strings.Join(alts, " | ")}
			}
		case prop.Type == "string":
		default:
			if _, err := grammar.CompileSchema(raw); err == nil {
				value = grammar.Part{Schema: raw}
			}
		}
		if f == xmlFormat {
			return []grammar.Part{{Text: "<parameter=" + key + ">\n"}, value, {Text: "\n</parameter>\n"}}
		}
		return []grammar.Part{{Text: "<arg_key>" + key + "</arg_key>\n<arg_value>"}, value, {Text: "</arg_value>\n"}}
	}
	var parts []grammar.Part
	for _, k := range schema.Required {
		if _, ok := schema.Properties[k]; ok {
			parts = append(parts, element(k)...)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(schema.Properties)) {
		if !slices.Contains(schema.Required, k) {
			parts = append(parts, grammar.Part{Optional: element(k)})
		}
	}
	return parts
}

// parametersOf returns the parameters schema of the function name among
// the tools (nil if it has none).
func parametersOf(raw json.RawMessage, name string) json.RawMessage {
	var tools []struct {
		Function struct {
			Name       string          `json:"name"`
			Parameters json.RawMessage `json:"parameters"`
		} `json:"function"`
	}
	json.Unmarshal(raw, &tools) // offeredTools checked it
	for _, t := range tools {
		if t.Function.Name == name {
			return t.Function.Parameters
		}
	}
	return nil
}

// setupTools decides how a chat request's tools are offered and read back.
// With "none" the template is not shown them. "required" and a named
// function start the reply with the opening of a call, and the rest of the
// reply is kept to the rest of one call (forcedCallGrammar): a name among the
// offered functions (or the named one), its arguments to its parameters
// schema (or, when the schema uses keywords grammar.Schema refuses, a JSON
// object), then the format's closing, so that the reply is a call, its
// finish_reason "tool_calls", whatever the model. gpt-oss's harmony
// replies are kept instead to analysis and then a call to one of the
// functions (that one), its arguments to its schema (harmonyCall).
func (s *Server) setupTools(rawTools json.RawMessage, choice toolChoice, parallel *bool) (toolSetup, *apiError) {
	vars, names, e := offeredTools(rawTools)
	if e != nil {
		return toolSetup{}, e
	}
	if vars == nil {
		if choice.mode == "required" || choice.mode == "function" {
			return toolSetup{}, badRequest("tool_choice", "tool_choice %q needs tools", choice.mode)
		}
		return toolSetup{}, nil
	}
	if choice.mode == "none" {
		return toolSetup{}, nil
	}
	f := detectToolFormat(s.tmpl)
	setup := toolSetup{vars: vars}
	if f != unknownFormat {
		setup.calls = &toolCalls{format: f, names: names, single: parallel != nil && !*parallel}
		if f == xmlFormat || f == glmFormat {
			setup.calls.strings = stringParams(rawTools)
		}
	}
	if choice.mode != "required" && choice.mode != "function" {
		return setup, nil
	}
	if f == unknownFormat && !s.hasHarmony {
		return toolSetup{}, badRequest("tool_choice", "tool_choice %q needs a chat template whose tool-call format toy reads (Qwen/Hermes <tool_call>, Qwen3.5/Qwen3-Coder <function=…>, GLM-4.5/4.6 <arg_key>, Llama 3.1/3.2 JSON, Mistral [TOOL_CALLS], gpt-oss's harmony); this model's is not one", choice.mode)
	}
	if choice.mode == "function" && !names[choice.name] {
		return toolSetup{}, badRequest("tool_choice", "tool_choice names %q, which is not among the tools", choice.name)
	}
	if s.hasHarmony {
		forced := []string{choice.name}
		if choice.mode == "required" {
			forced = slices.Sorted(maps.Keys(names))
		}
		call, err := newHarmonyCall(s.model.Tokenizer, rawTools, forced)
		if err != nil {
			return toolSetup{}, badRequest("tool_choice", "%v", err)
		}
		setup.call = call
		return setup, nil
	}
	setup.prefill = f.opening(choice.name)
	fns := []string{choice.name}
	if choice.mode == "required" {
		fns = slices.Sorted(maps.Keys(names))
	}
	g, err := forcedCallGrammar(f, rawTools, fns, choice.mode == "function")
	if err != nil {
		return toolSetup{}, badRequest("tools", "the tools' parameters: %v", err)
	}
	setup.args = g
	return setup, nil
}
