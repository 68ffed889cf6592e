package serve

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toyml/toy/toy"
	"github.com/toyml/toy/toy/chat"
	"github.com/toyml/toy/toy/defaultmodel"
	"github.com/toyml/toy/toy/gguf"
	"github.com/toyml/toy/toy/grammar"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// chatML is the ChatML template (OpenHermes 2.5's; SmolLM2's and Qwen's add
// a system prompt), given to toy's default model so that the tests run a real
// template over a model that loads in milliseconds. Its context is 128
// tokens, and "<|im_start|>" is plain text to it, so the conversations are short.
const chatML = "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"

// modelWithTemplate writes toy's default model with tokenizer.chat_template
// set, as a GGUF file, and loads it.
func modelWithTemplate(t testing.TB) *toy.Model {
	t.Helper()
	f, err := gguf.Parse(defaultmodel.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	w, err := gguf.NewWriterFrom(f)
	if err != nil {
		t.Fatal(err)
	}
	w.SetString("tokenizer.chat_template", chatML)
	path := filepath.Join(t.TempDir(), "toy-go-chat.gguf")
	if err := w.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	m, err := toy.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

func newServer(t testing.TB, m *toy.Model, opts Options) *Server {
	t.Helper()
	s, err := New(m, opts)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// post sends body to s and decodes the JSON answer.
func post(t *testing.T, s http.Handler, path, body string) (int, map[string]any) {
	t.Helper()
	rec := httptest.NewRecorder()
	req := httptest.NewRequest("POST", path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	s.ServeHTTP(rec, req)
	var out map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
		t.Fatalf("POST %s: %d %q is not JSON: %v", path, rec.Code, rec.Body.String(), err)
	}
	return rec.Code, out
}

// field walks a decoded JSON value: field(v, "choices", 0, "message", "content").
func field(v any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, _ := v.(map[string]any)
			v = m[k]
		case int:
			l, _ := v.([]any)
			if k >= len(l) {
				return nil
			}
			v = l[k]
		}
	}
	return v
}

// greedy is what toy.Model.Generate makes of the same prompt: the reference
// the server's text is checked against.
func greedy(t *testing.T, m *toy.Model, ids []int32, n int) string {
	t.Helper()
	out, err := m.Generate(ids, toy.GenerateOptions{MaxTokens: n, Stop: m.Tokenizer.IsEOG})
	if err != nil {
		t.Fatal(err)
	}
	return m.Tokenizer.Decode(out)
}

const userMsg = `"messages": [{"role": "user", "content": "func main() {"}]`

func TestChatCompletion(t *testing.T) {
	m := modelWithTemplate(t)
	s := newServer(t, m, Options{})
	if !s.HasChatTemplate() {
		t.Fatal("the model's tokenizer.chat_template was not picked up")
	}
	code, out := post(t, s, "/v1/chat/completions", `{"model": "x", `+userMsg+`, "max_tokens": 12, "temperature": 0}`)
	if code != 200 {
		t.Fatalf("status %d: %v", code, out)
	}
	tmpl, _ := m.ChatTemplate()
	ids, _ := m.EncodeChat(tmpl, []chat.Message{{Role: "user", Content: "func main() {"}}, m.ChatOptions(true))
	want := greedy(t, m, ids, 12)
	if got := field(out, "choices", 0, "message", "content"); got != want {
		t.Errorf("content %q, want toy.Generate's %q", got, want)
	}
	if got := field(out, "choices", 0, "finish_reason"); got != "length" {
		t.Errorf("finish_reason %v, want length", got)
	}
	if field(out, "object") != "chat.completion" || field(out, "model") != "toy-go-chat" || field(out, "choices", 0, "message", "role") != "assistant" {
		t.Errorf("response %v", out)
	}
	if p, c := field(out, "usage", "prompt_tokens"), field(out, "usage", "completion_tokens"); p != float64(len(ids)) || c != 12.0 {
		t.Errorf("usage prompt %v completion %v, want %d and 12", p, c, len(ids))
	}
}

// events reads a server-sent event stream: each "data:" payload, until [DONE].
func events(t *testing.T, r io.Reader) (chunks []map[string]any, done bool) {
	t.Helper()
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			continue
		}
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			t.Fatalf("line %q is not an SSE data line", line)
		}
		if data == "[DONE]" {
			return chunks, true
		}
		var c map[string]any
		if err := json.Unmarshal([]byte(data), &c); err != nil {
			t.Fatalf("chunk %q: %v", data, err)
		}
		chunks = append(chunks, c)
	}
	return chunks, false
}

func TestChatStreamMatchesWhole(t *testing.T) {
	m := modelWithTemplate(t)
	s := newServer(t, m, Options{})
	_, whole := post(t, s, "/v1/chat/completions", `{`+userMsg+`, "max_tokens": 16, "temperature": 0}`)

	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, httptest.NewRequest("POST", "/v1/chat/completions",
		strings.NewReader(`{`+userMsg+`, "max_tokens": 16, "temperature": 0, "stream": true, "stream_options": {"include_usage": true}}`)))
	if ct := rec.Header().Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("Content-Type %q", ct)
	}
	chunks, done := events(t, rec.Body)
	if !done || len(chunks) < 3 {
		t.Fatalf("%d chunks, [DONE] %v", len(chunks), done)
	}
	if field(chunks[0], "choices", 0, "delta", "role") != "assistant" || field(chunks[0], "object") != "chat.completion.chunk" {
		t.Errorf("first chunk %v", chunks[0])
	}
	var text strings.Builder
	for _, c := range chunks[:len(chunks)-1] {
		if s, ok := field(c, "choices", 0, "delta", "content").(string); ok {
			text.WriteString(s)
		}
	}
	if want := field(whole, "choices", 0, "message", "content"); text.String() != want {
		t.Errorf("streamed %q, whole %q", text.String(), want)
	}
	last := chunks[len(chunks)-1]
	if field(chunks[len(chunks)-2], "choices", 0, "finish_reason") != "length" || field(last, "usage", "completion_tokens") != 16.0 {
		t.Errorf("finish chunk %v, usage chunk %v", chunks[len(chunks)-2], last)
	}
}

// TestStopStrings stops at a string from the middle of the greedy reply,
// whole and streamed, and the stop string is not part of the text.
func TestStopStrings(t *testing.T) {
	m := modelWithTemplate(t)
	s := newServer(t, m, Options{})
	_, full := post(t, s, "/v1/completions", `{"prompt": "func main() {", "max_tokens": 24, "temperature": 0}`)
	text := field(full, "choices", 0, "text").(string)
	if len(text) < 12 {
		t.Fatalf("greedy text %q too short to cut", text)
	}
	stop := text[6:9]
	want := text[:strings.Index(text, stop)]
	body := `{"prompt": "func main() {", "max_tokens": 24, "temperature": 0, "stop": ["nowhere", ` + jsonString(stop) + `]`
	_, out := post(t, s, "/v1/completions", body+`}`)
	if got := field(out, "choices", 0, "text"); got != want || field(out, "choices", 0, "finish_reason") != "stop" {
		t.Errorf("stop %q: text %q finish %v, want %q and stop", stop, got, field(out, "choices", 0, "finish_reason"), want)
	}

	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, httptest.NewRequest("POST", "/v1/completions", strings.NewReader(body+`, "stream": true}`)))
	chunks, done := events(t, rec.Body)
	var streamed strings.Builder
	for _, c := range chunks {
		streamed.WriteString(field(c, "choices", 0, "text").(string))
	}
	if !done || streamed.String() != want || field(chunks[len(chunks)-1], "choices", 0, "finish_reason") != "stop" {
		t.Errorf("streamed %q (done %v), want %q", streamed.String(), done, want)
	}
}

func jsonString(s string) string { b, _ := json.Marshal(s); return string(b) }

func TestCompletionPrompts(t *testing.T) {
	m, err := toy.LoadDefault() // no chat template
	if err != nil {
		t.Fatal(err)
	}
	s := newServer(t, m, Options{})
	if s.HasChatTemplate() {
		t.Error("the default model has no chat template")
	}
	ids, _ := m.Encode("func (b *Buffer) Len() int {")
	want := greedy(t, m, ids, 10)
	idList, _ := json.Marshal(ids)
	for _, prompt := range []string{`"func (b *Buffer) Len() int {"`, `["func (b *Buffer) Len() int {"]`, string(idList)} {
		code, out := post(t, s, "/v1/completions", `{"prompt": `+prompt+`, "max_tokens": 10, "temperature": 0, "seed": 1}`)
		if code != 200 || field(out, "choices", 0, "text") != want || field(out, "usage", "prompt_tokens") != float64(len(ids)) {
			t.Errorf("prompt %s: %d %v, want text %q", prompt, code, out, want)
		}
	}
	// Without a template, chat joins the contents one per line.
	_, out := post(t, s, "/v1/chat/completions", `{"messages": [{"role": "user", "content": [{"type": "text", "text": "func (b *Buffer) Len() int {"}]}], "max_tokens": 10, "temperature": 0}`)
	if field(out, "choices", 0, "message", "content") != want {
		t.Errorf("chat without a template: %v, want %q", out, want)
	}
	// Sampling with a seed is reproducible.
	body := `{"prompt": "func", "max_tokens": 12, "temperature": 1, "top_k": 20, "seed": 42}`
	_, a := post(t, s, "/v1/completions", body)
	_, b := post(t, s, "/v1/completions", body)
	if field(a, "choices", 0, "text") != field(b, "choices", 0, "text") {
		t.Errorf("same seed, different text: %v / %v", a, b)
	}
}

// TestPrefixCache: a request that extends the previous one reuses its keys
// and values, and answers exactly as a server starting afresh does.
func TestPrefixCache(t *testing.T) {
	m := modelWithTemplate(t)
	s := newServer(t, m, Options{})
	first := `{"messages": [{"role": "user", "content": "func main() {"}], "max_tokens": 6, "temperature": 0}`
	_, out1 := post(t, s, "/v1/chat/completions", first)
	reply := field(out1, "choices", 0, "message", "content").(string)
	second := `{"messages": [{"role": "user", "content": "func main() {"}, {"role": "assistant", "content": ` + jsonString(reply) +
		`}, {"role": "user", "content": "func f() {"}], "max_tokens": 8, "temperature": 0}`
	_, out2 := post(t, s, "/v1/chat/completions", second)
	cached, _ := field(out2, "usage", "prompt_tokens_details", "cached_tokens").(float64)
	if cached < 10 {
		t.Errorf("cached_tokens %v: the first turn's prompt was not reused", cached)
	}
	_, fresh := post(t, newServer(t, m, Options{}), "/v1/chat/completions", second)
	if a, b := field(out2, "choices", 0, "message", "content"), field(fresh, "choices", 0, "message", "content"); a != b {
		t.Errorf("with the cache %q, afresh %q", a, b)
	}
	// The same request again: everything but the last prompt token is cached.
	_, out3 := post(t, s, "/v1/chat/completions", second)
	if p, c := field(out3, "usage", "prompt_tokens").(float64), field(out3, "usage", "prompt_tokens_details", "cached_tokens").(float64); c != p-1 {
		t.Errorf("repeat: cached %v of %v", c, p)
	}
	if field(out3, "choices", 0, "message", "content") != field(fresh, "choices", 0, "message", "content") {
		t.Error("repeat: different text")
	}
}

func TestBadInput(t *testing.T) {
	m := modelWithTemplate(t)
	s := newServer(t, m, Options{ContextSize: 32})
	long := strings.Repeat("func main() { return } ", 20)
	for _, c := range []struct {
		path, body string
		status     int
		msg        string
	}{
		{"/v1/chat/completions", `{"messages": [`, 400, "invalid JSON"},
		{"/v1/chat/completions", `{` + userMsg + `, "max_token": 5}`, 400, `unknown field "max_token"`},
		{"/v1/chat/completions", `{"messages": []}`, 400, "at least one message"},
		{"/v1/chat/completions", `{"messages": [{"role": "robot", "content": "hi"}]}`, 400, "unknown role"},
		{"/v1/chat/completions", `{` + userMsg + `, "n": 0}`, 400, "n must be between 1 and 16"},
		{"/v1/chat/completions", `{` + userMsg + `, "n": 17}`, 400, "n must be between 1 and 16"},
		{"/v1/chat/completions", `{` + userMsg + `, "n": "2"}`, 400, "n must be an integer"},
		{"/v1/chat/completions", `{` + userMsg + `, "frequency_penalty": 2.5}`, 400, "frequency_penalty must be between -2 and 2"},
		{"/v1/chat/completions", `{` + userMsg + `, "presence_penalty": -3}`, 400, "presence_penalty must be between -2 and 2"},
		{"/v1/chat/completions", `{` + userMsg + `, "logprobs": true, "top_logprobs": 21}`, 400, "top_logprobs must be between 0 and 20"},
		{"/v1/chat/completions", `{` + userMsg + `, "top_logprobs": 3}`, 400, "needs logprobs"},
		{"/v1/chat/completions", `{` + userMsg + `, "logprobs": 1}`, 400, "logprobs must be a boolean"},
		{"/v1/chat/completions", `{` + userMsg + `, "logit_bias": {"x": 1}}`, 400, "not a token id"},
		{"/v1/chat/completions", `{` + userMsg + `, "logit_bias": {"99999": 1}}`, 400, "not a token id"},
		{"/v1/chat/completions", `{` + userMsg + `, "logit_bias": {"5": -101}}`, 400, "between -100 and 100"},
		{"/v1/chat/completions", `{` + userMsg + `, "temperature": "hot"}`, 400, "temperature must be a number"},
		{"/v1/chat/completions", `{` + userMsg + `, "tools": [{"type": "function"}]}`, 400, "tools[0] must be"},
		{"/v1/chat/completions", `{` + userMsg + `, "tools": {}}`, 400, "tools must be a list"},
		{"/v1/chat/completions", `{` + userMsg + `, "tool_choice": "always"}`, 400, "tool_choice must be"},
		{"/v1/chat/completions", `{` + userMsg + `, "tool_choice": "required"}`, 400, "needs tools"},
		{"/v1/chat/completions", `{` + userMsg + `, "response_format": {"type": "json_schema"}}`, 400, "needs json_schema.schema"},
		{"/v1/chat/completions", `{` + userMsg + `, "response_format": {"type": "json_schema", "json_schema": {"name": "x", "schema": {"type": "object", "properties": {"n": {"type": "integer", "multipleOf": 3}}}}}}`, 400, "multipleOf not supported"},
		{"/v1/completions", `{"prompt": "x", "json_schema": {"type": "string", "pattern": "a(?!b)"}}`, 400, "json_schema: grammar: schema.pattern: at 2 of /a(?!b)/: lookarounds are not supported"},
		{"/v1/completions", `{"prompt": "x", "json_schema": {"type": "string"}, "grammar": "root ::= \"a\""}`, 400, "json_schema with grammar is not supported"},
		{"/v1/chat/completions", `{` + userMsg + `, "json_schema": {"type": "string"}, "response_format": {"type": "json_object"}}`, 400, "give one of them"},
		{"/v1/chat/completions", `{` + userMsg + `, "response_format": {"type": "json_object", "schema": {"type": "strin"}}}`, 400, `response_format.schema: grammar: schema.type: unknown type "strin"`},
		{"/v1/chat/completions", `{` + userMsg + `, "response_format": {"type": "yaml"}}`, 400, `want "text", "json_object" or "json_schema"`},
		{"/v1/chat/completions", `{` + userMsg + `, "grammar": "root ::= [a-"}`, 400, "grammar: line 1 col 10: unterminated character class"},
		{"/v1/completions", `{"prompt": "a", "grammar": "root ::= x"}`, 400, "undefined rule x"},
		{"/v1/chat/completions", `{` + userMsg + `, "grammar": "root ::= \"a\"", "response_format": {"type": "json_object"}}`, 400, "grammar with response_format"},
		{"/v1/chat/completions", `{"messages": [{"role": "user", "content": "hi", "tool_calls": [{"id": "a", "type": "function", "function": {"name": "f", "arguments": "{}"}}]}]}`, 400, "only assistant messages"},
		{"/v1/chat/completions", `{"messages": [{"role": "assistant", "content": null, "tool_calls": [{"id": "a", "type": "function", "function": {"arguments": "{}"}}]}]}`, 400, "function.name"},
		{"/v1/completions", `{"prompt": "a", "logprobs": 21}`, 400, "logprobs must be an integer between 0 and 20"},
		{"/v1/completions", `{"prompt": "a", "logprobs": "5"}`, 400, "logprobs must be an integer"},
		{"/v1/chat/completions", `{` + userMsg + `, "temperature": -1}`, 400, "temperature"},
		{"/v1/chat/completions", `{` + userMsg + `, "stop": 3}`, 400, "stop must be"},
		{"/v1/chat/completions", `{"messages": [{"role": "user", "content": [{"type": "image_url"}]}]}`, 400, "image_url"},
		{"/v1/chat/completions", `{"messages": [{"role": "user", "content": "` + long + `"}]}`, 400, "context"},
		{"/v1/completions", `{"prompt": [1, 99999]}`, 400, "out of range"},
		{"/v1/completions", `{"prompt": {}}`, 400, "prompt must be"},
		{"/v1/completions", `{"prompt": "a"} {"prompt": "b"}`, 400, "more than one"},
	} {
		code, out := post(t, s, c.path, c.body)
		msg, _ := field(out, "error", "message").(string)
		if code != c.status || !strings.Contains(msg, c.msg) || field(out, "error", "type") != "invalid_request_error" {
			t.Errorf("%s %s: %d %v, want %d with %q", c.path, c.body, code, out, c.status, c.msg)
		}
	}
	_, out := post(t, s, "/v1/chat/completions", `{"messages": [{"role": "user", "content": "`+long+`"}]}`)
	if field(out, "error", "code") != "context_length_exceeded" {
		t.Errorf("context overflow: %v", out)
	}
	for _, c := range []struct {
		method, path string
		status       int
	}{{"GET", "/v1/completions", 405}, {"POST", "/v1/nothing", 404}, {"GET", "/health", 200}, {"GET", "/v1/models", 200}} {
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, httptest.NewRequest(c.method, c.path, nil))
		if rec.Code != c.status || !json.Valid(rec.Body.Bytes()) {
			t.Errorf("%s %s: %d %q, want %d", c.method, c.path, rec.Code, rec.Body.String(), c.status)
		}
	}
	rec := httptest.NewRecorder()
	req := httptest.NewRequest("POST", "/v1/completions", strings.NewReader(`prompt=hi`))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	s.ServeHTTP(rec, req)
	if rec.Code != 415 { // guard.go: a form is not JSON
		t.Errorf("form body: %d, want 415", rec.Code)
	}
	rec = httptest.NewRecorder()
	s.ServeHTTP(rec, httptest.NewRequest("GET", "/v1/models", nil))
	var models map[string]any
	json.Unmarshal(rec.Body.Bytes(), &models)
	if field(models, "data", 0, "id") != "toy-go-chat" || field(models, "object") != "list" {
		t.Errorf("models: %v", models)
	}
}

// TestCancel: a client that goes away mid-stream frees the model at the next
// token, so the next request is answered; a queued request whose client
// leaves never runs.
func TestCancel(t *testing.T) {
	m, err := toy.LoadDefault()
	if err != nil {
		t.Fatal(err)
	}
	s := newServer(t, m, Options{Parallel: 1})
	ts := httptest.NewServer(s)
	defer ts.Close()

	// Streams whose clients leave after the first line: OpenAI's, several
	// choices, Ollama's; each runs until the context is full unless stopped.
	for _, c := range []struct{ path, body, prefix string }{
		{"/v1/completions", `{"prompt": "func", "temperature": 1, "stream": true}`, "data: "},
		{"/v1/chat/completions", `{"messages": [{"role": "user", "content": "func"}], "n": 16, "stream": true}`, "data: "},
		{"/api/generate", `{"model": "m", "prompt": "func", "raw": true}`, `{"model"`},
	} {
		ctx, cancel := context.WithCancel(context.Background())
		req, _ := http.NewRequestWithContext(ctx, "POST", ts.URL+c.path, strings.NewReader(c.body))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		line, _ := bufio.NewReader(resp.Body).ReadString('\n') // the first token arrived
		if !strings.HasPrefix(line, c.prefix) {
			t.Fatalf("%s: first line %q", c.path, line)
		}
		cancel()
		resp.Body.Close()
		// The slot is free again at the next token.
		free, cancelFree := context.WithTimeout(context.Background(), 20*time.Second)
		sl, err := s.pool.acquire(free, nil, func() {})
		cancelFree()
		if err != nil {
			t.Fatalf("%s: the slot stayed busy after its client went away", c.path)
		}
		s.pool.release(sl)
	}

	// A queued request whose client gives up.
	held, _ := s.pool.acquire(context.Background(), nil, func() {}) // hold the one slot
	qctx, qcancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer qcancel()
	qreq, _ := http.NewRequestWithContext(qctx, "POST", ts.URL+"/v1/completions", strings.NewReader(`{"prompt": "func", "max_tokens": 1}`))
	if _, err := http.DefaultClient.Do(qreq); err == nil {
		t.Error("a request queued behind a busy model answered")
	}
	s.pool.release(held)

	done := make(chan int)
	go func() {
		r, err := http.Post(ts.URL+"/v1/completions", "application/json", strings.NewReader(`{"prompt": "func", "max_tokens": 3}`))
		if err != nil {
			done <- 0
			return
		}
		r.Body.Close()
		done <- r.StatusCode
	}()
	select {
	case code := <-done:
		if code != 200 {
			t.Errorf("request after a cancelled one: %d", code)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the model stayed busy after its client went away")
	}
}

// TestGrammarParam: llama.cpp's grammar parameter keeps every reply of
// both OpenAI endpoints in the grammar, sampled with several seeds and
// with log-probs (which mask every step); a reply that ends by itself
// completes it. (tests/reference checks the mask against llama.cpp.)
func TestGrammarParam(t *testing.T) {
	m := modelWithTemplate(t)
	s := newServer(t, m, Options{})
	const src = `root ::= ("yes" | "no") ", " [a-z ]{1,12} ("." | "!")`
	g, err := grammar.ParseGBNF(src, nil)
	if err != nil {
		t.Fatal(err)
	}
	quoted, _ := json.Marshal(src)
	ended := 0
	for seed := range 6 {
		for _, ep := range []string{"/v1/chat/completions", "/v1/completions"} {
			body := fmt.Sprintf(`{"model": "x", %s, "max_tokens": 40, "temperature": 1, "seed": %d, "grammar": %s, "logprobs": %v}`, userMsg, seed, quoted, seed%2 == 1)
			if ep == "/v1/completions" {
				body = fmt.Sprintf(`{"prompt": "hi", "max_tokens": 40, "temperature": 1, "seed": %d, "grammar": %s, "logprobs": %d}`, seed, quoted, seed%2)
			}
			code, out := post(t, s, ep, body)
			if code != 200 {
				t.Fatalf("%s: status %d: %v", ep, code, out)
			}
			content, _ := field(out, "choices", 0, "message", "content").(string)
			if ep == "/v1/completions" {
				content, _ = field(out, "choices", 0, "text").(string)
			}
			m := grammar.NewMatcher(g)
			if err := m.Accept(content); err != nil && content != "" {
				t.Errorf("%s seed %d: %q is not in the grammar: %v", ep, seed, content, err)
			}
			if field(out, "choices", 0, "finish_reason") == "stop" {
				ended++
				if !m.Complete() {
					t.Errorf("%s seed %d: the reply ended at %q, incomplete", ep, seed, content)
				}
			}
		}
	}
	if ended == 0 {
		t.Error("no reply ended by itself: the check saw nothing")
	}
	t.Logf("%d of 12 replies ended by themselves, all complete", ended)
}

// TestJSONMode: response_format json_object (OpenAI) and format "json"
// (Ollama) keep every reply a JSON object as far as it goes — greedy and
// sampled with several seeds — and a reply that ends by itself is a whole
// one. (tests/reference checks the mask token for token against llama.cpp.)
func TestJSONMode(t *testing.T) {
	m := modelWithTemplate(t)
	s := newServer(t, m, Options{})
	whole := 0
	check := func(what, content string, ended bool) {
		t.Helper()
		g := grammar.NewJSON()
		if err := g.Accept(content); err != nil && content != "" {
			t.Errorf("%s: %q is not the start of a JSON object: %v", what, content, err)
		}
		if ended {
			whole++
			if !json.Valid([]byte(content)) {
				t.Errorf("%s: the reply ended at %q, not a whole JSON object", what, content)
			}
		}
	}
	for seed := range 6 {
		temp := 1.0
		if seed == 0 {
			temp = 0
		}
		code, out := post(t, s, "/v1/chat/completions", fmt.Sprintf(`{"model": "x", %s, "max_tokens": 60, "temperature": %g, "seed": %d, "response_format": {"type": "json_object"}}`, userMsg, temp, seed))
		if code != 200 {
			t.Fatalf("status %d: %v", code, out)
		}
		content, _ := field(out, "choices", 0, "message", "content").(string)
		check(fmt.Sprintf("OpenAI, seed %d", seed), content, field(out, "choices", 0, "finish_reason") == "stop")
		code, out = post(t, s, "/api/chat", fmt.Sprintf(`{"model": "m", "messages": [{"role": "user", "content": "hi"}], "stream": false, "format": "json", "options": {"num_predict": 60, "temperature": %g, "seed": %d}}`, temp, seed))
		if code != 200 {
			t.Fatalf("status %d: %v", code, out)
		}
		content, _ = field(out, "message", "content").(string)
		check(fmt.Sprintf("Ollama, seed %d", seed), content, field(out, "done_reason") == "stop")
	}
	t.Logf("%d of 12 replies ended by themselves", whole)

	// A schema: every reply follows it as far as it goes; one that ends by
	// itself is valid under an independent validator.
	const schema = `{"type": "object", "properties": {"ok": {"type": "boolean"}, "n": {"type": "integer", "minimum": 0, "maximum": 99},
		"tag": {"enum": ["a", "b"]}, "code": {"type": "string", "pattern": "^[a-z]{2}$"}}, "required": ["ok"]}`
	compiled, err := grammar.CompileSchema([]byte(schema))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	doc, _ := jsonschema.UnmarshalJSON(strings.NewReader(schema))
	c.AddResource("s.json", doc)
	validator, err := c.Compile("s.json")
	if err != nil {
		t.Fatal(err)
	}
	valid := 0
	for seed := range 8 {
		for _, api := range []string{"openai", "ollama", "completions", "json_object"} {
			var content string
			var ended bool
			switch api {
			case "completions": // llama.cpp's json_schema field
				code, out := post(t, s, "/v1/completions", fmt.Sprintf(`{"prompt": "hi", "max_tokens": 60, "temperature": 1, "seed": %d, "json_schema": %s}`, seed, schema))
				if code != 200 {
					t.Fatalf("status %d: %v", code, out)
				}
				content, _ = field(out, "choices", 0, "text").(string)
				ended = field(out, "choices", 0, "finish_reason") == "stop"
			case "json_object": // llama-server's response_format json_object with a schema
				code, out := post(t, s, "/v1/chat/completions", fmt.Sprintf(`{"model": "x", %s, "max_tokens": 60, "temperature": 1, "seed": %d, "response_format": {"type": "json_object", "schema": %s}}`, userMsg, seed, schema))
				if code != 200 {
					t.Fatalf("status %d: %v", code, out)
				}
				content, _ = field(out, "choices", 0, "message", "content").(string)
				ended = field(out, "choices", 0, "finish_reason") == "stop"
			case "openai":
				code, out := post(t, s, "/v1/chat/completions", fmt.Sprintf(`{"model": "x", %s, "max_tokens": 60, "temperature": 1, "seed": %d, "response_format": {"type": "json_schema", "json_schema": {"name": "r", "strict": true, "schema": %s}}}`, userMsg, seed, schema))
				if code != 200 {
					t.Fatalf("status %d: %v", code, out)
				}
				content, _ = field(out, "choices", 0, "message", "content").(string)
				ended = field(out, "choices", 0, "finish_reason") == "stop"
			default:
				code, out := post(t, s, "/api/chat", fmt.Sprintf(`{"model": "m", "messages": [{"role": "user", "content": "hi"}], "stream": false, "format": %s, "options": {"num_predict": 60, "temperature": 1, "seed": %d}}`, schema, seed))
				if code != 200 {
					t.Fatalf("status %d: %v", code, out)
				}
				content, _ = field(out, "message", "content").(string)
				ended = field(out, "done_reason") == "stop"
			}
			if err := grammar.NewJSONSchema(compiled).Accept(content); err != nil && content != "" {
				t.Errorf("%s, seed %d: %q does not follow the schema: %v", api, seed, content, err)
			}
			if ended {
				v, err := jsonschema.UnmarshalJSON(strings.NewReader(content))
				if err == nil {
					err = validator.Validate(v)
				}
				if err != nil {
					t.Errorf("%s, seed %d: the reply ended at %q, invalid: %v", api, seed, content, err)
				}
				valid++
			}
		}
	}
	if valid == 0 {
		t.Error("no reply under the schema ended by itself: the check saw nothing")
	}
	t.Logf("%d of 32 replies under the schema ended by themselves, all valid", valid)
}
