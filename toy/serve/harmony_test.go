package serve

import (
	"os"
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
