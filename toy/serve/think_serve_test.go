package serve

import (
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestReasoning: a reply that reasons in <think>…</think> comes back with
// the reasoning apart — OpenAI chat's reasoning_content (llama.cpp's
// default reasoning_format), whole and streamed, and Ollama's thinking with
// think true — and inline with reasoning_format "none"; a template that
// opens <think> itself makes the reply start reasoning.
func TestReasoning(t *testing.T) {
	s, _ := toolServer(t, "qwen3")
	const reply = "<think>\nTwo and two.\n</think>\n\n2 + 2 = 4."
	user := `"messages": [{"role": "user", "content": "2 + 2?"}]`

	say(s, reply)
	_, out := post(t, s, "/v1/chat/completions", `{`+user+`, "temperature": 0}`)
	if field(out, "choices", 0, "message", "content") != "2 + 2 = 4." || field(out, "choices", 0, "message", "reasoning_content") != "Two and two." {
		t.Errorf("whole: %v", out)
	}

	say(s, reply)
	content, reasoning, done := streamedChat(t, s, `{`+user+`, "temperature": 0, "stream": true}`)
	if !done || content != "2 + 2 = 4." || reasoning != "Two and two." {
		t.Errorf("streamed: content %q, reasoning %q", content, reasoning)
	}

	say(s, reply)
	_, out = post(t, s, "/v1/chat/completions", `{`+user+`, "temperature": 0, "reasoning_format": "none"}`)
	if field(out, "choices", 0, "message", "content") != reply || field(out, "choices", 0, "message", "reasoning_content") != nil {
		t.Errorf("reasoning_format none: %v", out)
	}
	if code, out := post(t, s, "/v1/chat/completions", `{`+user+`, "reasoning_format": "xml"}`); code != 400 {
		t.Errorf("reasoning_format xml: %d %v", code, out)
	}

	// Ollama: think true → message.thinking, whole and streamed; think
	// unset → the reply as it is.
	say(s, reply)
	_, out = post(t, s, "/api/chat", `{"model": "m", `+user+`, "stream": false, "think": true}`)
	if field(out, "message", "content") != "2 + 2 = 4." || field(out, "message", "thinking") != "Two and two." {
		t.Errorf("Ollama, think true: %v", out)
	}
	say(s, reply)
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, httptest.NewRequest("POST", "/api/chat", strings.NewReader(`{"model": "m", `+user+`, "think": true}`)))
	var oc, or strings.Builder
	for _, line := range strings.Split(strings.TrimSpace(rec.Body.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatal(err)
		}
		c, _ := field(m, "message", "content").(string)
		r, _ := field(m, "message", "thinking").(string)
		oc.WriteString(c)
		or.WriteString(r)
	}
	if oc.String() != "2 + 2 = 4." || or.String() != "Two and two." {
		t.Errorf("Ollama streamed: content %q, thinking %q", oc.String(), or.String())
	}
	say(s, reply)
	_, out = post(t, s, "/api/chat", `{"model": "m", `+user+`, "stream": false}`)
	if field(out, "message", "content") != reply {
		t.Errorf("Ollama, think unset: %v", out)
	}

	// A template that ends the prompt inside <think> (DeepSeek-R1's).
	r1 := newTemplateServer(t, "{% for m in messages %}{{ m.content }}\n{% endfor %}<think>\n")
	say(r1, "Two and two.\n</think>\n\n4.")
	_, out = post(t, r1, "/v1/chat/completions", `{`+user+`, "temperature": 0}`)
	if field(out, "choices", 0, "message", "content") != "4." || field(out, "choices", 0, "message", "reasoning_content") != "Two and two." {
		t.Errorf("opened by the template: %v", out)
	}
}

// streamedChat posts a streamed chat request and joins its deltas'
// content and reasoning_content.
func streamedChat(t *testing.T, s *Server, body string) (content, reasoning string, done bool) {
	t.Helper()
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, httptest.NewRequest("POST", "/v1/chat/completions", strings.NewReader(body)))
	chunks, done := events(t, rec.Body)
	var c, r strings.Builder
	for _, ch := range chunks {
		if v, ok := field(ch, "choices", 0, "delta", "content").(string); ok {
			c.WriteString(v)
		}
		if v, ok := field(ch, "choices", 0, "delta", "reasoning_content").(string); ok {
			r.WriteString(v)
		}
	}
	return c.String(), r.String(), done
}
