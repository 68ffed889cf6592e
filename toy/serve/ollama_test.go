package serve

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/toyml/toy/toy/chat"
)

// ndjson reads newline-delimited JSON objects.
func ndjson(t *testing.T, r io.Reader) []map[string]any {
	t.Helper()
	var out []map[string]any
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		out = append(out, m)
	}
	return out
}

// TestOllamaChat: /api/chat answers what toy.Generate gives for the
// template's prompt, whole and as a stream of JSON lines, with Ollama's
// counts and durations.
func TestOllamaChat(t *testing.T) {
	m := modelWithTemplate(t)
	s := newServer(t, m, Options{})
	tmpl, _ := m.ChatTemplate()
	ids, _ := m.EncodeChat(tmpl, []chat.Message{{Role: "user", Content: "func main() {"}}, m.ChatOptions(true))
	want := greedy(t, m, ids, 8)
	const body = `{"model": "toy-go-chat", "messages": [{"role": "user", "content": "func main() {"}], "options": {"temperature": 0, "num_predict": 8, "num_thread": 2, "use_mmap": true}`

	code, out := post(t, s, "/api/chat", body+`, "stream": false}`)
	if code != 200 || field(out, "message", "content") != want || field(out, "message", "role") != "assistant" {
		t.Fatalf("%d %v, want content %q", code, out, want)
	}
	if field(out, "done") != true || field(out, "done_reason") != "length" || field(out, "eval_count") != 8.0 ||
		field(out, "prompt_eval_count") != float64(len(ids)) || field(out, "model") != "toy-go-chat" {
		t.Errorf("final object %v", out)
	}
	for _, k := range []string{"total_duration", "prompt_eval_duration", "eval_duration", "load_duration", "created_at"} {
		if _, ok := out[k]; !ok {
			t.Errorf("no %s in %v", k, out)
		}
	}

	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, httptest.NewRequest("POST", "/api/chat", strings.NewReader(body+`}`))) // streams by default
	if ct := rec.Header().Get("Content-Type"); ct != "application/x-ndjson" {
		t.Errorf("Content-Type %q", ct)
	}
	lines := ndjson(t, rec.Body)
	var text strings.Builder
	for i, l := range lines {
		text.WriteString(field(l, "message", "content").(string))
		if (field(l, "done") == true) != (i == len(lines)-1) {
			t.Errorf("line %d: done %v", i, field(l, "done"))
		}
	}
	last := lines[len(lines)-1]
	if text.String() != want || field(last, "eval_count") != 8.0 || field(last, "done_reason") != "length" {
		t.Errorf("streamed %q (want %q), last %v", text.String(), want, last)
	}

	// Ollama's way to load a model, and to unload it.
	if _, out := post(t, s, "/api/chat", `{"model": "x", "messages": []}`); field(out, "done_reason") != "load" {
		t.Errorf("empty messages: %v", out)
	}
	if _, out := post(t, s, "/api/generate", `{"model": "x", "keep_alive": 0}`); field(out, "done_reason") != "unload" || field(out, "response") != "" {
		t.Errorf("keep_alive 0: %v", out)
	}
}

// TestOllamaGenerate: the prompt through the template (with the system),
// raw, and continued with context; stop and seed options.
func TestOllamaGenerate(t *testing.T) {
	m := modelWithTemplate(t)
	s := newServer(t, m, Options{})
	tmpl, _ := m.ChatTemplate()
	ids, _ := m.EncodeChat(tmpl, []chat.Message{{Role: "system", Content: "Go."}, {Role: "user", Content: "func f() {"}}, m.ChatOptions(true))
	want := greedy(t, m, ids, 6)
	_, out := post(t, s, "/api/generate", `{"model": "m", "prompt": "func f() {", "system": "Go.", "stream": false, "options": {"temperature": 0, "num_predict": 6}}`)
	if field(out, "response") != want {
		t.Errorf("templated: %v, want %q", out, want)
	}
	ctx, _ := field(out, "context").([]any)
	if len(ctx) != len(ids)+6 {
		t.Fatalf("context has %d ids, want prompt %d + reply 6", len(ctx), len(ids))
	}

	// context: the next prompt continues the conversation.
	next, _ := m.EncodeChat(tmpl, []chat.Message{{Role: "user", Content: "}"}}, m.ChatOptions(true))
	var prev []int32
	for _, x := range ctx {
		prev = append(prev, int32(x.(float64)))
	}
	want2 := greedy(t, m, append(prev, next...), 4)
	ctxJSON, _ := json.Marshal(prev)
	_, out = post(t, s, "/api/generate", `{"model": "m", "prompt": "}", "context": `+string(ctxJSON)+`, "stream": false, "options": {"temperature": 0, "num_predict": 4}}`)
	if field(out, "response") != want2 {
		t.Errorf("with context: %v, want %q", field(out, "response"), want2)
	}

	// raw: the prompt as it is, as /v1/completions takes it.
	_, comp := post(t, s, "/v1/completions", `{"prompt": "func main() {", "max_tokens": 7, "temperature": 0}`)
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, httptest.NewRequest("POST", "/api/generate", strings.NewReader(`{"model": "m", "prompt": "func main() {", "raw": true, "options": {"temperature": 0, "num_predict": 7}}`)))
	var text strings.Builder
	lines := ndjson(t, rec.Body)
	for _, l := range lines {
		text.WriteString(field(l, "response").(string))
	}
	if text.String() != field(comp, "choices", 0, "text") || field(lines[len(lines)-1], "context") != nil {
		t.Errorf("raw: %q, /v1/completions %q; last %v", text.String(), field(comp, "choices", 0, "text"), lines[len(lines)-1])
	}

	// Options: stop, and a seed that reproduces.
	full := field(comp, "choices", 0, "text").(string)
	stop := full[3:5]
	_, out = post(t, s, "/api/generate", `{"model": "m", "prompt": "func main() {", "raw": true, "stream": false, "options": {"temperature": 0, "num_predict": 7, "stop": [`+jsonString(stop)+`]}}`)
	if field(out, "response") != full[:strings.Index(full, stop)] || field(out, "done_reason") != "stop" {
		t.Errorf("stop %q: %v", stop, out)
	}
	seeded := `{"model": "m", "prompt": "func", "raw": true, "stream": false, "options": {"temperature": 1, "seed": 7, "num_predict": 10}}`
	_, a := post(t, s, "/api/generate", seeded)
	_, b := post(t, s, "/api/generate", seeded)
	if field(a, "response") != field(b, "response") {
		t.Errorf("seed 7 twice: %q, %q", field(a, "response"), field(b, "response"))
	}
}

// TestOllamaModelInfo: tags, ps, show and version in Ollama's shapes.
func TestOllamaModelInfo(t *testing.T) {
	m := modelWithTemplate(t)
	s := newServer(t, m, Options{})
	get := func(path string) map[string]any {
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
		var out map[string]any
		if rec.Code != 200 || json.Unmarshal(rec.Body.Bytes(), &out) != nil {
			t.Fatalf("GET %s: %d %q", path, rec.Code, rec.Body.String())
		}
		return out
	}
	for _, path := range []string{"/api/tags", "/api/ps"} {
		out := get(path)
		if field(out, "models", 0, "name") != "toy-go-chat:latest" || field(out, "models", 0, "details", "format") != "gguf" ||
			field(out, "models", 0, "details", "family") != "llama" || field(out, "models", 0, "details", "quantization_level") != "Q8_0" ||
			field(out, "models", 0, "details", "parameter_size") != "1.4M" || len(field(out, "models", 0, "digest").(string)) != 64 {
			t.Errorf("%s: %v", path, out)
		}
	}
	if v := get("/api/version"); v["version"] != ollamaVersion {
		t.Errorf("version %v", v)
	}
	code, out := post(t, s, "/api/show", `{"model": "toy-go-chat"}`)
	if code != 200 || field(out, "template") != chatML || field(out, "model_info", "general.architecture") != "llama" ||
		field(out, "model_info", "llama.context_length") != 128.0 || len(field(out, "model_info", "tokenizer.ggml.tokens").([]any)) != 0 ||
		field(out, "capabilities", 0) != "completion" {
		t.Errorf("show: %d %v", code, out)
	}
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
	if rec.Code != 200 || !strings.Contains(rec.Body.String(), "running") {
		t.Errorf("GET /: %d %q", rec.Code, rec.Body.String())
	}
}

// TestOllamaBadInput: Ollama's error shape, {"error": "…"}, for what toy
// refuses or cannot read.
func TestOllamaBadInput(t *testing.T) {
	m := modelWithTemplate(t)
	s := newServer(t, m, Options{ContextSize: 64})
	const msgs = `"messages": [{"role": "user", "content": "func main() {"}]`
	for _, c := range []struct {
		path, body string
		status     int
		msg        string
	}{
		{"/api/chat", `{"model": "m", ` + msgs, 400, "invalid JSON"},
		{"/api/chat", `{"model": "m", ` + msgs + `, "options": {"temprature": 0}}`, 400, `unknown field "temprature"`},
		{"/api/chat", `{"model": "m", ` + msgs + `, "options": {"temperature": "0"}}`, 400, "temperature must be a number"},
		{"/api/chat", `{"model": "m", ` + msgs + `, "options": {"temperature": -1}}`, 400, "temperature"},
		{"/api/chat", `{"model": "m", ` + msgs + `, "options": {"mirostat": 2}}`, 400, "mirostat"},
		{"/api/chat", `{"model": "m", ` + msgs + `, "options": {"num_predict": -3}}`, 400, "num_predict"},
		{"/api/chat", `{"model": "m", ` + msgs + `, "options": {"num_ctx": 8}}`, 400, "num_ctx 8"},
		{"/api/chat", `{"model": "m", ` + msgs + `, "format": {"type": "object", "properties": {"a": {"type": "string", "pattern": "(?=x)"}}}}`, 400, "lookarounds are not supported"},
		{"/api/chat", `{"model": "m", ` + msgs + `, "format": "xml"}`, 400, `want "json" or a JSON schema`},
		{"/api/chat", `{"model": "m", ` + msgs + `, "think": "hard"}`, 400, "think must be"},
		{"/api/chat", `{"model": "m", "messages": [{"role": "user", "content": "x", "images": ["aGk="]}]}`, 400, "images"},
		{"/api/chat", `{"model": "m", "messages": [{"role": "robot", "content": "x"}]}`, 400, "unknown role"},
		{"/api/generate", `{"model": "m", "prompt": "x", "template": "{{ .Prompt }}"}`, 400, "Jinja"},
		{"/api/generate", `{"model": "m", "prompt": "x", "suffix": "y"}`, 400, "suffix"},
		{"/api/generate", `{"model": "m", "prompt": "x", "context": [-1]}`, 400, "out of range"},
		{"/api/generate", `{"model": "m", "prompt": "` + strings.Repeat("func main() { return } ", 10) + `"}`, 400, "--ctx"},
	} {
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, httptest.NewRequest("POST", c.path, strings.NewReader(c.body)))
		var out map[string]any
		json.Unmarshal(rec.Body.Bytes(), &out)
		msg, ok := out["error"].(string)
		if rec.Code != c.status || !ok || !strings.Contains(msg, c.msg) {
			t.Errorf("%s %s: %d %q, want %d with %q", c.path, c.body, rec.Code, rec.Body.String(), c.status, c.msg)
		}
	}
	for _, c := range []struct {
		method, path string
		status       int
	}{{"GET", "/api/chat", 405}, {"POST", "/api/tags", 405}, {"POST", "/api/pull", 404}, {"GET", "/api/nothing", 404}} {
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, httptest.NewRequest(c.method, c.path, nil))
		var out map[string]any
		json.Unmarshal(rec.Body.Bytes(), &out)
		if _, ok := out["error"].(string); rec.Code != c.status || !ok {
			t.Errorf("%s %s: %d %q, want %d and an Ollama error", c.method, c.path, rec.Code, rec.Body.String(), c.status)
		}
	}
}

// TestOllamaTools: Ollama's tool messages (calls with object arguments, a
// tool reply naming the tool) render as Hugging Face renders the same
// conversation, and a call in the reply comes back with object arguments.
func TestOllamaTools(t *testing.T) {
	g, err := golden()
	if err != nil {
		t.Fatal(err)
	}
	var want string
	for _, c := range g.Cases {
		if c.Template == "qwen2.5" && c.Conversation == "tool-call" && c.AddGenerationPrompt && c.Tools {
			want = c.Output
		}
	}
	var msgs []map[string]any
	for _, m := range g.Conversations["tool-call"] {
		o := map[string]any{"role": m.Role, "content": m.Content}
		for _, c := range m.ToolCalls {
			o["tool_calls"] = []any{map[string]any{"function": map[string]any{"name": c.Function.Name, "arguments": json.RawMessage(c.Function.Arguments)}}}
		}
		if m.Role == "tool" {
			o["tool_name"] = m.Name
		}
		msgs = append(msgs, o)
	}
	mj, _ := json.Marshal(msgs)
	s, _ := toolServer(t, "qwen2.5")
	sc := say(s, "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"place\": \"Lyon\", \"days\": 1}}\n</tool_call>")
	body := fmt.Sprintf(`{"model": "qwen2.5", "messages": %s, "tools": %s, "options": {"temperature": 0}`, mj, g.Tools)
	_, out := post(t, s, "/api/chat", body+`, "stream": false}`)
	if got := promptText(s, sc); got != want {
		t.Errorf("prompt\n got %q\nwant %q", got, want)
	}
	args, _ := json.Marshal(field(out, "message", "tool_calls", 0, "function", "arguments"))
	if field(out, "message", "tool_calls", 0, "function", "name") != "get_weather" || !sameJSON(string(args), `{"place": "Lyon", "days": 1}`) ||
		field(out, "message", "content") != "" || field(out, "done_reason") != "stop" {
		t.Errorf("call: %v", out)
	}

	say(s, "Checking.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"place\": \"Lyon\"}}\n</tool_call>")
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, httptest.NewRequest("POST", "/api/chat", strings.NewReader(body+`}`)))
	var text strings.Builder
	calls := 0
	for _, l := range ndjson(t, rec.Body) {
		text.WriteString(field(l, "message", "content").(string))
		calls += len(asList(field(l, "message", "tool_calls")))
	}
	if text.String() != "Checking." || calls != 1 {
		t.Errorf("streamed: content %q, %d calls", text.String(), calls)
	}
}
