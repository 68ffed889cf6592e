package serve

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/toyml/toy/toy"
	"github.com/toyml/toy/toy/grammar"
)

// wholeCallTools are two functions with parameters schemas.
const wholeCallTools = `[{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object",
	"properties": {"place": {"type": "string"}, "days": {"type": "integer"}}, "required": ["place"]}}},
	{"type": "function", "function": {"name": "get_time", "parameters": {"type": "object",
	"properties": {"zone": {"type": "string", "enum": ["UTC", "CET"]}}, "required": ["zone"]}}}]`

// checkForcedCall asserts that a reply is one call to a function among
// want, its arguments a value of that function's schema.
func checkForcedCall(t *testing.T, what string, out map[string]any, want ...string) {
	t.Helper()
	name, _ := field(out, "choices", 0, "message", "tool_calls", 0, "function", "name").(string)
	args, _ := field(out, "choices", 0, "message", "tool_calls", 0, "function", "arguments").(string)
	if field(out, "choices", 0, "finish_reason") != "tool_calls" || !slices.Contains(want, name) {
		t.Errorf("%s: not a call to %v: %v", what, want, out)
		return
	}
	schema, err := grammar.CompileSchema(parametersOf(json.RawMessage(wholeCallTools), name))
	if err != nil {
		t.Fatal(err)
	}
	if err := grammar.NewJSONSchema(schema).Accept(args); err != nil {
		t.Errorf("%s: arguments %s are not of %s's schema: %v", what, args, name, err)
	}
}

// TestForcedCallWhole: with tool_choice "required" or a named function a
// scripted model that would write free text — or a call to a function not
// offered — still replies with a call, in each template's format.
func TestForcedCallWhole(t *testing.T) {
	for _, tmpl := range []string{"qwen2.5", "llama3.1", "mistral-v0.3", "qwen3.5", "glm4.6"} {
		s, _ := toolServer(t, tmpl)
		for _, c := range []struct{ choice, reply string }{
			{`"required"`, `I cannot call tools. "Oslo"}`},
			{`"required"`, `get_time", "arguments": {"zone": "PST"}}`},
			{`"required"`, `nope", "arguments": {}}`},
			{`{"type": "function", "function": {"name": "get_weather"}}`, `Sorry! "Oslo"}`},
		} {
			say(s, c.reply)
			code, out := post(t, s, "/v1/chat/completions", `{"messages": [{"role": "user", "content": "Weather in Oslo?"}], "tools": `+
				wholeCallTools+`, "tool_choice": `+c.choice+`, "temperature": 0, "max_tokens": 40}`)
			if code != 200 {
				t.Fatalf("%s %s: %d %v", tmpl, c.choice, code, out)
			}
			want := []string{"get_weather", "get_time"}
			if strings.HasPrefix(c.choice, "{") {
				want = want[:1]
			}
			t.Logf("%s %s: %v", tmpl, c.choice, field(out, "choices", 0, "message", "tool_calls", 0, "function"))
			checkForcedCall(t, fmt.Sprintf("%s, %s, a model writing %q", tmpl, c.choice, c.reply), out, want...)
		}
	}
}

// TestForcedCallDefaultModel: toy's default model, a weak one that writes
// Go, replies with a call to an offered function every time when forced,
// over ten seeds.
func TestForcedCallDefaultModel(t *testing.T) {
	m, err := toy.LoadDefault()
	if err != nil {
		t.Skip(err)
	}
	// A short Hermes-style template: the default model's context is small.
	const tmpl = "{% for m in messages %}{{ m.role }}: {{ m.content }}\n{% endfor %}" +
		"{% if tools %}tools: {% for t in tools %}{{ t.function.name }} {% endfor %}\n{% endif %}" +
		"{% for m in messages %}{% for c in m.tool_calls or [] %}<tool_call>\n{{ c.function | tojson }}\n</tool_call>{% endfor %}{% endfor %}assistant: "
	s := newServer(t, m, Options{ChatTemplate: tmpl})
	for _, choice := range []string{`"required"`, `{"type": "function", "function": {"name": "get_time"}}`} {
		for seed := range 10 {
			code, out := post(t, s, "/v1/chat/completions", fmt.Sprintf(`{"messages": [{"role": "user", "content": "Weather?"}], "tools": %s, "tool_choice": %s, "seed": %d}`,
				wholeCallTools, choice, seed))
			if code != 200 {
				t.Fatalf("seed %d: %d %v", seed, code, out)
			}
			t.Logf("seed %d: %v", seed, field(out, "choices", 0, "message", "tool_calls", 0, "function"))
			want := []string{"get_weather", "get_time"}
			if strings.HasPrefix(choice, "{") {
				want = want[1:]
			}
			checkForcedCall(t, fmt.Sprintf("%s, seed %d", choice, seed), out, want...)
		}
	}
}

// TestReasoningContentReachesTemplate: an assistant message's earlier
// thinking (OpenAI-style reasoning_content, Ollama's thinking) is given to
// the chat template, which may render it, as llama-server and Ollama do.
func TestReasoningContentReachesTemplate(t *testing.T) {
	m, err := toy.LoadDefault()
	if err != nil {
		t.Skip(err)
	}
	const tmpl = "{% for m in messages %}{{ m.role }}: {% if m.reasoning_content %}<think>{{ m.reasoning_content }}</think>{% endif %}{{ m.content }}\n{% endfor %}assistant: "
	s := newServer(t, m, Options{ChatTemplate: tmpl})
	prompt := func(path, assistant string) float64 {
		body := fmt.Sprintf(`{"messages": [{"role": "user", "content": "Hi"}, %s, {"role": "user", "content": "And?"}], `, assistant)
		if path == "/api/chat" {
			body += `"stream": false, "options": {"num_predict": 1}}`
		} else {
			body += `"max_tokens": 1}`
		}
		code, out := post(t, s, path, body)
		if code != 200 {
			t.Fatalf("%s: %d %v", path, code, out)
		}
		if path == "/api/chat" {
			return out["prompt_eval_count"].(float64)
		}
		return field(out, "usage", "prompt_tokens").(float64)
	}
	const thought = "The user greets me, so I greet back politely and briefly."
	for _, c := range []struct{ path, plain, thinking string }{
		{"/v1/chat/completions", `{"role": "assistant", "content": "Hello."}`,
			`{"role": "assistant", "content": "Hello.", "reasoning_content": "` + thought + `"}`},
		{"/api/chat", `{"role": "assistant", "content": "Hello."}`,
			`{"role": "assistant", "content": "Hello.", "thinking": "` + thought + `"}`},
	} {
		without, with := prompt(c.path, c.plain), prompt(c.path, c.thinking)
		if with <= without+5 {
			t.Errorf("%s: %v prompt tokens with the assistant's thinking, %v without: it did not reach the template", c.path, with, without)
		}
	}
}
