package serve

import (
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/toyml/toy/toy"
	"github.com/toyml/toy/toy/defaultmodel"
	"github.com/toyml/toy/toy/gguf"
	"github.com/toyml/toy/toy/grammar"
	"github.com/toyml/toy/toy/tokenizer"
)

// harmonyServer serves gpt-oss's chat template over the scripted model,
// with Llama 3's vocabulary and harmony's control tokens added.
func harmonyServer(t *testing.T) *Server {
	t.Helper()
	v, err := llama3Vocab()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"<|start|>", "<|end|>", "<|message|>", "<|channel|>", "<|constrain|>", "<|return|>", "<|call|>"} {
		v.Tokens = append(v.Tokens, s)
		v.Types = append(v.Types, tokenizer.TypeControl)
	}
	tok, err := tokenizer.New(v)
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile("../chat/testdata/templates/gpt-oss.jinja")
	if err != nil {
		t.Fatal(err)
	}
	f, err := gguf.Parse(defaultmodel.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	m := &toy.Model{Path: "gpt-oss.gguf", Arch: "gpt-oss", File: f, Net: fakeNet{tok.VocabSize()}, Tokenizer: tok}
	s := newServer(t, m, Options{ChatTemplate: string(src), Name: "gpt-oss"})
	if !s.hasHarmony {
		t.Fatal("the gpt-oss template and vocabulary were not recognised as harmony")
	}
	return s
}

// TestHarmony: gpt-oss's replies are read by their channels — the
// analysis as reasoning_content (Ollama: thinking), the final message as
// content, whole and streamed — and a message to functions.NAME as a tool
// call; the prompt carries the reasoning effort asked for.
func TestHarmony(t *testing.T) {
	s := harmonyServer(t)
	const reply = "<|channel|>analysis<|message|>Two and two make four.<|end|><|start|>assistant<|channel|>final<|message|>2 + 2 = 4.<|return|>"
	user := `"messages": [{"role": "user", "content": "2 + 2?"}]`

	sc := say(s, reply)
	_, out := post(t, s, "/v1/chat/completions", `{`+user+`, "temperature": 0, "reasoning_effort": "high"}`)
	if field(out, "choices", 0, "message", "content") != "2 + 2 = 4." || field(out, "choices", 0, "message", "reasoning_content") != "Two and two make four." ||
		field(out, "choices", 0, "finish_reason") != "stop" {
		t.Errorf("whole: %v", out)
	}
	if p := promptText(s, sc); !strings.Contains(p, "Reasoning: high") || !strings.HasSuffix(p, "<|start|>assistant") {
		t.Errorf("prompt %q: want reasoning high, ending with the assistant's start", p)
	}

	say(s, reply)
	content, reasoning, done := streamedChat(t, s, `{`+user+`, "temperature": 0, "stream": true}`)
	if !done || content != "2 + 2 = 4." || reasoning != "Two and two make four." {
		t.Errorf("streamed: content %q, reasoning %q", content, reasoning)
	}

	say(s, reply)
	_, out = post(t, s, "/api/chat", `{"model": "m", `+user+`, "stream": false, "think": "low"}`)
	if field(out, "message", "content") != "2 + 2 = 4." || field(out, "message", "thinking") != "Two and two make four." {
		t.Errorf("Ollama: %v", out)
	}

	// A call, the recipient before the channel and after it.
	tools := `"tools": [{"type": "function", "function": {"name": "get_weather", "description": "The weather at a place.", "parameters": {"type": "object", "properties": {"place": {"type": "string"}}}}}]`
	for _, call := range []string{
		"<|channel|>analysis<|message|>Look it up.<|end|><|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{\"place\": \"Paris\"}<|call|>",
		"<|channel|>analysis<|message|>Look it up.<|end|><|start|>assistant to=functions.get_weather<|channel|>commentary json<|message|>{\"place\": \"Paris\"}<|call|>",
	} {
		say(s, call)
		_, out = post(t, s, "/v1/chat/completions", `{`+user+`, `+tools+`, "temperature": 0}`)
		c := field(out, "choices", 0, "message", "tool_calls", 0)
		if field(out, "choices", 0, "finish_reason") != "tool_calls" || field(c, "function", "name") != "get_weather" ||
			field(c, "function", "arguments") != `{"place": "Paris"}` || field(out, "choices", 0, "message", "reasoning_content") != "Look it up." {
			t.Errorf("%q: %v", call, out)
		}
	}
	// JSON mode holds in the final message only, as llama.cpp's lazy
	// grammar: the analysis (not JSON) goes through unmasked, the answer is
	// an object, and one that is not JSON is bent into one.
	say(s, "<|channel|>analysis<|message|>Answer in JSON, not prose.<|end|><|start|>assistant<|channel|>final<|message|>{\"sum\": 4}<|return|>")
	_, out = post(t, s, "/v1/chat/completions", `{`+user+`, "temperature": 0, "response_format": {"type": "json_object"}}`)
	if field(out, "choices", 0, "message", "content") != `{"sum": 4}` || field(out, "choices", 0, "message", "reasoning_content") != "Answer in JSON, not prose." ||
		field(out, "choices", 0, "finish_reason") != "stop" {
		t.Errorf("JSON mode: %v", out)
	}
	say(s, "<|channel|>analysis<|message|>Prose.<|end|><|start|>assistant<|channel|>final<|message|>Four.<|return|>")
	_, out = post(t, s, "/v1/chat/completions", `{`+user+`, "temperature": 0, "max_tokens": 20, "response_format": {"type": "json_object"}}`)
	content, _ = field(out, "choices", 0, "message", "content").(string)
	if content == "" || content == "Four." || grammar.NewJSON().Accept(content) != nil || field(out, "choices", 0, "message", "reasoning_content") != "Prose." {
		t.Errorf("JSON mode over a prose answer: %q is not the start of a JSON object (%v)", content, out)
	}
}

// secondChoices is a scripted model with a fallback: besides its script's
// token it favours these, the first most, so that where a grammar refuses
// the script the test knows what comes instead (a plain scripted model
// would take the allowed token with the lowest id).
type secondChoices struct {
	*scripted
	ids []int32
}

func (s *secondChoices) Next(ids []int32) ([]float32, error) {
	logits, err := s.scripted.Next(ids)
	for i, id := range s.ids {
		logits[id] = max(logits[id], float32(len(s.ids)-i))
	}
	return logits, err
}

// sayOr scripts reply, with the single-token texts second as the model's
// second choices.
func sayOr(t *testing.T, s *Server, reply string, second ...string) {
	t.Helper()
	sc := say(s, reply)
	w := &secondChoices{scripted: sc}
	for _, text := range second {
		ids := s.model.Tokenizer.Encode(text, tokenizerOptions(false))
		if len(ids) != 1 {
			t.Fatalf("%q is %d tokens, not one", text, len(ids))
		}
		w.ids = append(w.ids, ids[0])
	}
	script(s, w)
}

// forcedTools offers two functions, each with a schema for its arguments.
const forcedTools = `[
	{"type": "function", "function": {"name": "get_weather", "description": "The weather at a place.", "parameters": {"type": "object", "properties": {"place": {"type": "string"}}, "required": ["place"]}}},
	{"type": "function", "function": {"name": "get_time", "description": "The time in a zone.", "parameters": {"type": "object", "properties": {"zone": {"type": "string"}}, "required": ["zone"]}}}]`

// harmonyCallOf is a call in a harmony reply after its analysis: the
// header as gpt-oss writes it (or, inRole, as its template does).
func harmonyCallOf(name, args string, inRole bool) string {
	if inRole {
		return "<|start|>assistant to=functions." + name + "<|channel|>commentary json<|message|>" + args + "<|call|>"
	}
	return "<|start|>assistant<|channel|>commentary to=functions." + name + " <|constrain|>json<|message|>" + args + "<|call|>"
}

// completeValue reports whether args is a whole value of the parameters
// schema of the function name among forcedTools.
func completeValue(t *testing.T, name, args string) bool {
	t.Helper()
	schema, err := grammar.CompileSchema(parametersOf(json.RawMessage(forcedTools), name))
	if err != nil {
		t.Fatal(err)
	}
	m := grammar.NewJSONSchema(schema)
	return m.Accept(args) == nil && m.Complete()
}

// TestHarmonyForcedCall: tool_choice "required" or a named function keeps a
// gpt-oss reply to its analysis, then one call — to an offered function,
// the named one — whose arguments are a value of the function's parameters
// schema, even from a model that would rather write a number for the
// string "place", call another function, or answer in its final channel.
func TestHarmonyForcedCall(t *testing.T) {
	s := harmonyServer(t)
	ask := func(extra string) string { // (max_tokens: a reply turned aside may wander)
		return `{"messages": [{"role": "user", "content": "Weather in Oslo?"}], "tools": ` + forcedTools + `, "temperature": 0, "max_tokens": 80` + extra + `}`
	}
	named := func(name string) string {
		return `, "tool_choice": {"type": "function", "function": {"name": "` + name + `"}}`
	}
	const analysis = "<|channel|>analysis<|message|>Look it up.<|end|>"

	// A number for "place": the model's second choices are '"', then '}'.
	// Left alone (tool_choice "auto") it writes the number; forced, the
	// mask turns the number into a string and closes the object.
	number := analysis + harmonyCallOf("get_weather", `{"place": 5`, false)
	sayOr(t, s, number, `"`, "}")
	_, out := post(t, s, "/v1/chat/completions", ask(""))
	if args := field(out, "choices", 0, "message", "tool_calls", 0, "function", "arguments"); args != `{"place": 5` {
		t.Fatalf("unforced, the scripted model should write a number: %v", out)
	}
	sayOr(t, s, number, `"`, "}")
	_, out = post(t, s, "/v1/chat/completions", ask(named("get_weather")))
	call := field(out, "choices", 0, "message", "tool_calls", 0)
	args, _ := field(call, "function", "arguments").(string)
	if field(out, "choices", 0, "finish_reason") != "tool_calls" || field(call, "function", "name") != "get_weather" ||
		!completeValue(t, "get_weather", args) || field(out, "choices", 0, "message", "reasoning_content") != "Look it up." ||
		field(out, "choices", 0, "message", "content") != nil {
		t.Errorf("named call over a number: arguments %q (%v)", args, out)
	}

	// Streamed: the analysis as reasoning, the call in one delta, no content.
	sayOr(t, s, number, `"`, "}")
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, httptest.NewRequest("POST", "/v1/chat/completions", strings.NewReader(ask(named("get_weather")+`, "stream": true`))))
	chunks, done := events(t, rec.Body)
	var reasoning, content strings.Builder
	var calls []any
	for _, ch := range chunks {
		if v, ok := field(ch, "choices", 0, "delta", "reasoning_content").(string); ok {
			reasoning.WriteString(v)
		}
		if v, ok := field(ch, "choices", 0, "delta", "content").(string); ok {
			content.WriteString(v)
		}
		calls = append(calls, asList(field(ch, "choices", 0, "delta", "tool_calls"))...)
	}
	if args, _ := field(calls, 0, "function", "arguments").(string); !done || len(calls) != 1 || field(calls[0], "function", "name") != "get_weather" ||
		!completeValue(t, "get_weather", args) || reasoning.String() != "Look it up." || content.String() != "" ||
		field(chunks[len(chunks)-1], "choices", 0, "finish_reason") != "tool_calls" {
		t.Errorf("streamed: reasoning %q, content %q, calls %v", reasoning.String(), content.String(), calls)
	}

	// "required": any offered function (get_weather: not the first of the
	// grammar's names, which are sorted), its recipient in either part of
	// the header, after analysis, commentary to the user (content) or
	// nothing; parallel_tool_calls false holds.
	const oslo = `{"place": "Oslo"}`
	for _, c := range []struct{ reply, reasoning, content string }{
		{analysis + harmonyCallOf("get_weather", oslo, false), "Look it up.", ""},
		{analysis + harmonyCallOf("get_weather", oslo, true), "Look it up.", ""},
		{"<|channel|>commentary<|message|>Checking the sky.<|end|>" + harmonyCallOf("get_weather", oslo, false), "", "Checking the sky."},
		{strings.TrimPrefix(harmonyCallOf("get_weather", oslo, false), "<|start|>assistant"), "", ""},
	} {
		for _, extra := range []string{`, "tool_choice": "required"`, named("get_weather") + `, "parallel_tool_calls": false`} {
			say(s, c.reply)
			_, out := post(t, s, "/v1/chat/completions", ask(extra))
			msg := field(out, "choices", 0, "message")
			content, _ := field(msg, "content").(string)
			reasoning, _ := field(msg, "reasoning_content").(string)
			if field(out, "choices", 0, "finish_reason") != "tool_calls" || len(asList(field(msg, "tool_calls"))) != 1 ||
				field(msg, "tool_calls", 0, "function", "name") != "get_weather" || field(msg, "tool_calls", 0, "function", "arguments") != oslo ||
				reasoning != c.reasoning || content != c.content {
				t.Errorf("%s over %q: %v", extra, c.reply, out)
			}
		}
	}

	// A call to another function becomes one to the named function, or
	// for "required" to an offered one; with two calls scripted, the reply
	// ends after the first.
	for _, c := range []struct {
		reply, extra string
		want         []string
	}{
		{analysis + harmonyCallOf("get_time", `{"zone": "CET"}`, false), named("get_weather"), []string{"get_weather"}},
		{analysis + harmonyCallOf("rm_rf", `{}`, false), `, "tool_choice": "required"`, []string{"get_weather", "get_time"}},
	} {
		say(s, c.reply)
		_, out = post(t, s, "/v1/chat/completions", ask(c.extra))
		name, _ := field(out, "choices", 0, "message", "tool_calls", 0, "function", "name").(string)
		if !slices.Contains(c.want, name) {
			t.Errorf("%s over %q: %v", c.extra, c.reply, out)
		}
	}
	say(s, analysis+strings.ReplaceAll(harmonyCallOf("get_time", `{"zone": "CET"}`, false), "<|call|>", "<|end|>")+harmonyCallOf("get_weather", oslo, false))
	_, out = post(t, s, "/v1/chat/completions", ask(`, "tool_choice": "required"`))
	if calls := asList(field(out, "choices", 0, "message", "tool_calls")); len(calls) != 1 || field(calls[0], "function", "arguments") != `{"zone": "CET"}` {
		t.Errorf("two calls scripted, one wanted: %v", out)
	}

	// A final answer instead of a call: unforced, it is the content; forced,
	// the reply stays in analysis until max_tokens, and no answer shows.
	const answer = "<|channel|>analysis<|message|>Easy.<|end|><|start|>assistant<|channel|>final<|message|>Sunny.<|return|>"
	say(s, answer)
	if _, out = post(t, s, "/v1/chat/completions", ask("")); field(out, "choices", 0, "message", "content") != "Sunny." {
		t.Fatalf("unforced, the scripted model should answer: %v", out)
	}
	say(s, answer)
	_, out = post(t, s, "/v1/chat/completions", ask(`, "tool_choice": "required"`))
	if c, _ := field(out, "choices", 0, "message", "content").(string); c != "" || field(out, "choices", 0, "finish_reason") == "stop" {
		t.Errorf("required over a final answer: %v", out)
	}

	for _, c := range []struct{ extra, want string }{
		{named("nope"), "not among the tools"},
		{`, "tool_choice": "required", "response_format": {"type": "json_object"}`, "tool call"},
		{`, "tool_choice": "required", "grammar": "root ::= \"x\""`, "tool call"},
	} {
		if code, out := post(t, s, "/v1/chat/completions", ask(c.extra)); code != 400 || !strings.Contains(field(out, "error", "message").(string), c.want) {
			t.Errorf("%s: %d %v", c.extra, code, out)
		}
	}
}

// TestHarmonyCapabilities: a gpt-oss server reads tool calls (harmony) and
// reasoning, and /api/show says so.
func TestHarmonyCapabilities(t *testing.T) {
	s := harmonyServer(t)
	if f := s.ToolCallFormat(); f != "harmony" {
		t.Errorf("ToolCallFormat %q, want harmony", f)
	}
	code, out := post(t, s, "/api/show", `{"model": "m"}`)
	if code != 200 {
		t.Fatalf("status %d: %v", code, out)
	}
	caps := fmt.Sprint(field(out, "capabilities"))
	for _, want := range []string{"completion", "tools", "thinking"} {
		if !strings.Contains(caps, want) {
			t.Errorf("capabilities %s lack %s", caps, want)
		}
	}
}
