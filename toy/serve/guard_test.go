package serve

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/toyml/toy/toy"
	"github.com/toyml/toy/toy/defaultmodel"
	"github.com/toyml/toy/toy/gguf"
)

// send serves one in-process request with the given headers and returns
// the recorder.
func send(s http.Handler, method, path, body string, header ...string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, req)
	return rec
}

// openAIErrorCode is the error's code in OpenAI's shape, or "" when the
// body is not that shape.
func openAIErrorCode(t *testing.T, rec *httptest.ResponseRecorder) string {
	t.Helper()
	var out struct {
		Error *struct {
			Message, Type string
			Code          any
		}
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil || out.Error == nil || out.Error.Message == "" || out.Error.Type != "invalid_request_error" {
		t.Errorf("not OpenAI's error shape: %d %q", rec.Code, rec.Body.String())
		return ""
	}
	code, _ := out.Error.Code.(string)
	return code
}

// ollamaErrorMessage is Ollama's {"error": "…"}, or "".
func ollamaErrorMessage(t *testing.T, rec *httptest.ResponseRecorder) string {
	t.Helper()
	var out map[string]any
	json.Unmarshal(rec.Body.Bytes(), &out)
	msg, _ := out["error"].(string)
	if msg == "" {
		t.Errorf("not Ollama's error shape: %d %q", rec.Code, rec.Body.String())
	}
	return msg
}

// TestAPIKey: with keys, every endpoint but GET /health (and the page at
// GET /) answers 401 without one of them, in OpenAI's shape under /v1 and
// Ollama's under /api; either key works, the scheme in any case.
func TestAPIKey(t *testing.T) {
	m, err := toy.LoadDefault()
	if err != nil {
		t.Fatal(err)
	}
	s := newServer(t, m, Options{APIKeys: []string{"sk-one", "sk-two"}})
	for _, c := range []struct {
		method, path, body, auth string
		status                   int
	}{
		{"GET", "/health", "", "", 200},
		{"GET", "/", "", "", 200},
		{"GET", "/v1/models", "", "", 401},
		{"GET", "/v1/models", "", "Bearer sk-on", 401},
		{"GET", "/v1/models", "", "Bearer sk-one2", 401},
		{"GET", "/v1/models", "", "Basic sk-one", 401},
		{"GET", "/v1/models", "", "sk-one", 401},
		{"GET", "/v1/models", "", "Bearer sk-one", 200},
		{"GET", "/v1/models", "", "bearer sk-two", 200},
		{"POST", "/v1/completions", `{"prompt": "func", "max_tokens": 1}`, "", 401},
		{"POST", "/v1/completions", `{"prompt": "func", "max_tokens": 1}`, "Bearer sk-two", 200},
		{"GET", "/v1/nothing", "", "", 401}, // nothing about the routes without a key
		{"GET", "/api/tags", "", "", 401},
		{"GET", "/api/tags", "", "Bearer sk-one", 200},
		{"POST", "/api/generate", `{"model": "m", "prompt": "func", "stream": false, "options": {"num_predict": 1}}`, "Bearer wrong", 401},
		{"POST", "/api/generate", `{"model": "m", "prompt": "func", "stream": false, "options": {"num_predict": 1}}`, "Bearer sk-one", 200},
	} {
		rec := send(s, c.method, c.path, c.body, "Authorization", c.auth, "Content-Type", "application/json")
		if rec.Code != c.status {
			t.Errorf("%s %s with %q: %d %q, want %d", c.method, c.path, c.auth, rec.Code, rec.Body.String(), c.status)
			continue
		}
		if c.status != 401 {
			continue
		}
		if rec.Header().Get("WWW-Authenticate") == "" {
			t.Errorf("%s %s: 401 without WWW-Authenticate", c.method, c.path)
		}
		if strings.HasPrefix(c.path, "/api/") {
			if msg := ollamaErrorMessage(t, rec); !strings.Contains(msg, "API key") {
				t.Errorf("%s: %q", c.path, msg)
			}
		} else if code := openAIErrorCode(t, rec); code != "invalid_api_key" {
			t.Errorf("%s %s: code %q", c.method, c.path, code)
		}
	}
	// Without keys nothing is asked.
	if rec := send(newServer(t, m, Options{}), "GET", "/v1/models", ""); rec.Code != 200 {
		t.Errorf("no keys: %d", rec.Code)
	}
	for _, bad := range []string{"", " sk", "sk\n"} {
		if _, err := New(m, Options{APIKeys: []string{bad}}); err == nil {
			t.Errorf("key %q accepted", bad)
		}
	}
}

// TestHostCheck: over a listener, a Host that is not loopback, the address
// the client connected to, or an allowed name gets 403 (DNS rebinding);
// AllowedHosts adds names, "*" any.
func TestHostCheck(t *testing.T) {
	m, err := toy.LoadDefault()
	if err != nil {
		t.Fatal(err)
	}
	get := func(ts *httptest.Server, path, host string) (int, string) {
		req, _ := http.NewRequest("GET", ts.URL+path, nil)
		req.Host = host
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var b strings.Builder
		bufio.NewReader(resp.Body).WriteTo(&b)
		return resp.StatusCode, b.String()
	}
	ts := httptest.NewServer(newServer(t, m, Options{AllowedHosts: []string{"Team.LAN"}}))
	defer ts.Close()
	_, port, _ := net.SplitHostPort(ts.Listener.Addr().String())
	for host, want := range map[string]int{
		"localhost:" + port: 200, "LOCALHOST": 200, "127.0.0.1:" + port: 200, "127.0.0.2": 200, "[::1]:" + port: 200,
		"team.lan:8080": 200, "team.lan.": 200,
		"evil.example:" + port: 403, "localhost.evil.example": 403, "10.1.2.3": 403, "team.lan.evil.example": 403,
	} {
		if got, body := get(ts, "/v1/models", host); got != want {
			t.Errorf("Host %q: %d %s, want %d", host, got, body, want)
		}
	}
	if got, body := get(ts, "/api/tags", "evil.example"); got != 403 || !strings.Contains(body, `"error":"Host \"evil.example\" is not allowed`) {
		t.Errorf("Ollama's shape: %d %s", got, body)
	}
	if got, body := get(ts, "/health", "evil.example"); got != 403 {
		t.Errorf("/health by a rebound name: %d %s", got, body)
	}
	any := httptest.NewServer(newServer(t, m, Options{AllowedHosts: []string{"*"}}))
	defer any.Close()
	if got, body := get(any, "/v1/models", "evil.example"); got != 200 {
		t.Errorf("AllowedHosts *: %d %s", got, body)
	}
	// In process (no listener, httptest's example.com): not checked.
	if rec := send(newServer(t, m, Options{}), "GET", "/v1/models", ""); rec.Code != 200 {
		t.Errorf("in process: %d", rec.Code)
	}
}

// TestContentType: a POST body must be JSON (or untyped from a client that
// is not a browser); forms and text get 415 naming application/json.
func TestContentType(t *testing.T) {
	m, err := toy.LoadDefault()
	if err != nil {
		t.Fatal(err)
	}
	s := newServer(t, m, Options{})
	body := `{"prompt": "func", "max_tokens": 1}`
	for ct, want := range map[string]int{
		"application/json": 200, "application/json; charset=utf-8": 200, "Application/JSON": 200,
		"application/vnd.api+json": 200, "": 200,
		"application/x-www-form-urlencoded": 415, "multipart/form-data; boundary=x": 415, "text/plain": 415,
		"text/plain;charset=UTF-8": 415, "application/jsonx": 415, "nonsense/": 415,
	} {
		rec := send(s, "POST", "/v1/completions", body, "Content-Type", ct)
		if rec.Code != want {
			t.Errorf("Content-Type %q: %d %q, want %d", ct, rec.Code, rec.Body.String(), want)
			continue
		}
		if want == 415 {
			var out map[string]map[string]any
			json.Unmarshal(rec.Body.Bytes(), &out)
			if msg, _ := out["error"]["message"].(string); !strings.Contains(msg, "application/json") {
				t.Errorf("Content-Type %q: %q does not name application/json", ct, rec.Body.String())
			}
		}
	}
	// A browser's POST carries an Origin: untyped, it is refused.
	if rec := send(s, "POST", "/v1/completions", body, "Origin", "http://evil.example"); rec.Code != 415 {
		t.Errorf("untyped body from a web page: %d", rec.Code)
	}
	rec := send(s, "POST", "/api/generate", `{"model": "m", "prompt": "func"}`, "Content-Type", "text/plain")
	if rec.Code != 415 || !strings.Contains(ollamaErrorMessage(t, rec), "application/json") {
		t.Errorf("Ollama, text/plain: %d %q", rec.Code, rec.Body.String())
	}
}

// TestCORS: off by default (no Access-Control headers, preflights 403); an
// allowed origin gets them and its preflight 204, before any API key.
func TestCORS(t *testing.T) {
	m, err := toy.LoadDefault()
	if err != nil {
		t.Fatal(err)
	}
	preflight := func(s http.Handler, origin string) *httptest.ResponseRecorder {
		return send(s, "OPTIONS", "/v1/chat/completions", "", "Origin", origin,
			"Access-Control-Request-Method", "POST", "Access-Control-Request-Headers", "authorization, content-type")
	}
	off := newServer(t, m, Options{})
	if rec := preflight(off, "http://app.example"); rec.Code != 403 || rec.Header().Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("CORS off, preflight: %d %v", rec.Code, rec.Header())
	}
	if rec := send(off, "GET", "/v1/models", "", "Origin", "http://app.example"); rec.Code != 200 || rec.Header().Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("CORS off, GET: %d %v", rec.Code, rec.Header())
	}

	on := newServer(t, m, Options{CORSOrigins: []string{"http://app.example"}, APIKeys: []string{"k"}})
	rec := preflight(on, "http://app.example")
	h := rec.Header()
	if rec.Code != 204 || h.Get("Access-Control-Allow-Origin") != "http://app.example" ||
		!strings.Contains(h.Get("Access-Control-Allow-Methods"), "POST") || h.Get("Access-Control-Allow-Headers") != "authorization, content-type" {
		t.Errorf("allowed preflight: %d %v", rec.Code, h)
	}
	if rec := preflight(on, "http://other.example"); rec.Code != 403 || rec.Header().Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("other origin's preflight: %d %v", rec.Code, rec.Header())
	}
	rec = send(on, "GET", "/v1/models", "", "Origin", "http://app.example", "Authorization", "Bearer k")
	if rec.Code != 200 || rec.Header().Get("Access-Control-Allow-Origin") != "http://app.example" {
		t.Errorf("allowed GET: %d %v", rec.Code, rec.Header())
	}
	rec = send(on, "GET", "/v1/models", "", "Origin", "http://app.example") // the page reads the 401
	if rec.Code != 401 || rec.Header().Get("Access-Control-Allow-Origin") != "http://app.example" {
		t.Errorf("allowed origin without the key: %d %v", rec.Code, rec.Header())
	}
	if rec := send(on, "GET", "/v1/models", "", "Origin", "http://other.example", "Authorization", "Bearer k"); rec.Header().Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("other origin's GET: %v", rec.Header())
	}
	star := newServer(t, m, Options{CORSOrigins: []string{"*"}})
	if rec := preflight(star, "http://anything.example"); rec.Code != 204 || rec.Header().Get("Access-Control-Allow-Origin") != "*" {
		t.Errorf("CORS *: %d %v", rec.Code, rec.Header())
	}
}

// stall sends a long streamed request over a connection with a tiny receive
// buffer and never reads the reply.
func stall(t *testing.T, addr string) net.Conn {
	t.Helper()
	d := net.Dialer{Control: func(_, _ string, c syscall.RawConn) error {
		return c.Control(func(fd uintptr) { syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 1024) })
	}}
	conn, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	body := `{"messages": [{"role": "user", "content": "func"}], "n": 16, "temperature": 1, "logprobs": true, "top_logprobs": 5, "stream": true}`
	fmt.Fprintf(conn, "POST /v1/chat/completions HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", addr, len(body), body)
	return conn
}

// smallSendBuffer makes the server's side of each connection buffer little,
// so that a client that does not read blocks its writes soon.
type smallSendBuffer struct{ net.Listener }

func (l smallSendBuffer) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if tc, ok := c.(*net.TCPConn); ok {
		tc.SetWriteBuffer(4096)
	}
	return c, err
}

// TestWriteTimeout: a client that stops reading holds its slot until a
// write times out (WriteTimeout), then the slot is free; meanwhile another
// request is answered. Without a deadline the slot stays held.
func TestWriteTimeout(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for timeouts")
	}
	m, err := toy.LoadDefault()
	if err != nil {
		t.Fatal(err)
	}
	const timeout = time.Second
	busy := func(s *Server) int { b, _ := s.pool.counts(); return b }
	for _, c := range []struct {
		timeout time.Duration
		freed   bool
	}{{timeout, true}, {-1, false}} {
		s := newServer(t, m, Options{Parallel: 2, WriteTimeout: c.timeout})
		ts := httptest.NewUnstartedServer(s)
		ts.Listener = smallSendBuffer{ts.Listener}
		ts.Start()
		conn := stall(t, ts.Listener.Addr().String())
		deadline := time.Now().Add(20 * time.Second)
		for busy(s) == 0 && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
		if busy(s) == 0 {
			t.Fatal("the stalled request never took a slot")
		}
		// Another client is answered while the first one stalls.
		r, err := http.Post(ts.URL+"/v1/completions", "application/json", strings.NewReader(`{"prompt": "func", "max_tokens": 3}`))
		if err != nil || r.StatusCode != 200 {
			t.Fatalf("another request beside a stalled one: %v %v", r, err)
		}
		r.Body.Close()
		// The stalled slot is freed within the timeout (and a margin for
		// a loaded machine), or, without one, stays held.
		start, wait := time.Now(), timeout+5*time.Second
		if !c.freed {
			wait = 2 * timeout
		}
		for busy(s) > 0 && time.Since(start) < wait {
			time.Sleep(10 * time.Millisecond)
		}
		if freed := busy(s) == 0; freed != c.freed {
			t.Errorf("WriteTimeout %v: slot freed %v after %v, want %v", c.timeout, freed, time.Since(start).Round(time.Millisecond), c.freed)
		}
		conn.Close() // now the write fails: the slot is freed either way
		start = time.Now()
		for busy(s) > 0 && time.Since(start) < 20*time.Second {
			time.Sleep(10 * time.Millisecond)
		}
		if busy(s) > 0 {
			t.Errorf("WriteTimeout %v: the slot stayed busy after the client closed", c.timeout)
		}
		ts.Close()
	}
}

// TestEmptyContentNoTemplate: chat messages with empty or null content on
// a model without a chat template make an empty prompt: 400, not a panic.
func TestEmptyContentNoTemplate(t *testing.T) {
	m, err := toy.LoadDefault()
	if err != nil {
		t.Fatal(err)
	}
	s := newServer(t, m, Options{})
	if s.HasChatTemplate() {
		t.Fatal("toy's default model has a chat template")
	}
	for _, msgs := range []string{`[{"role": "user", "content": ""}]`, `[{"role": "user", "content": null}]`,
		`[{"role": "user", "content": [{"type": "text", "text": ""}]}]`} {
		code, out := post(t, s, "/v1/chat/completions", `{"messages": `+msgs+`, "max_tokens": 2}`)
		if code != 400 || field(out, "error", "param") != "messages" {
			t.Errorf("OpenAI %s: %d %v", msgs, code, out)
		}
		code, out = post(t, s, "/api/chat", `{"model": "m", "stream": false, "messages": `+msgs+`}`)
		if code != 400 {
			t.Errorf("Ollama %s: %d %v", msgs, code, out)
		}
	}
	if code, out := post(t, s, "/v1/chat/completions", `{"messages": [{"role": "user", "content": "func"}], "max_tokens": 2}`); code != 200 {
		t.Errorf("with content: %d %v", code, out)
	}
}

// scaledModel writes toy's default model with RoPE scaling keys set.
func scaledModel(t *testing.T, keys func(w *gguf.Writer, arch string)) *toy.Model {
	t.Helper()
	f, err := gguf.Parse(defaultmodel.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	arch, err := f.Architecture()
	if err != nil {
		t.Fatal(err)
	}
	w, err := gguf.NewWriterFrom(f)
	if err != nil {
		t.Fatal(err)
	}
	keys(w, arch)
	path := filepath.Join(t.TempDir(), "scaled.gguf")
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

// TestContextAboveTrained: a context above the trained one is refused at
// New, naming it, unless the file's RoPE scaling stretches that far; then
// a slot holds that many positions and a prompt past the trained context
// is answered.
func TestContextAboveTrained(t *testing.T) {
	m, err := toy.LoadDefault()
	if err != nil {
		t.Fatal(err)
	}
	trained := m.ContextLength()
	_, err = New(m, Options{ContextSize: trained + 1})
	if err == nil || !strings.Contains(err.Error(), fmt.Sprint(trained)) {
		t.Errorf("no scaling, context %d: %v", trained+1, err)
	}
	if s := newServer(t, m, Options{ContextSize: trained}); s.ContextSize() != trained {
		t.Errorf("context %d: %d", trained, s.ContextSize())
	}

	none := scaledModel(t, func(w *gguf.Writer, arch string) {
		w.SetString(arch+".rope.scaling.type", "none")
		w.SetFloat32(arch+".rope.scaling.factor", 4)
	})
	if _, err := New(none, Options{ContextSize: trained + 1}); err == nil {
		t.Error(`scaling "none" stretched the context`)
	}
	yarn := scaledModel(t, func(w *gguf.Writer, arch string) {
		w.SetString(arch+".rope.scaling.type", "yarn")
		w.SetFloat32(arch+".rope.scaling.factor", 4)
		w.SetUint32(arch+".rope.scaling.original_context_length", uint32(trained/2))
	})
	if _, err := New(yarn, Options{ContextSize: 2*trained + 1}); err == nil || !strings.Contains(err.Error(), fmt.Sprint(2*trained)) {
		t.Errorf("yarn ×4 over %d, context %d: %v", trained/2, 2*trained+1, err)
	}
	if _, err := New(yarn, Options{ContextSize: 2 * trained, Draft: yarn}); err == nil {
		t.Error("a draft model beyond the trained context was accepted")
	}
	linear := scaledModel(t, func(w *gguf.Writer, arch string) {
		w.SetString(arch+".rope.scaling.type", "linear")
		w.SetFloat32(arch+".rope.scaling.factor", 2)
	})
	for _, lm := range []*toy.Model{yarn, linear} {
		s := newServer(t, lm, Options{ContextSize: 2 * trained}) // 4 slots, through the model goroutine
		if s.ContextSize() != 2*trained {
			t.Fatalf("context %d: %d", 2*trained, s.ContextSize())
		}
		if c := s.session().Capacity(); c != 2*trained {
			t.Errorf("a slot's session holds %d positions, want %d", c, 2*trained)
		}
		prompt := make([]int, trained+8) // past the trained context
		for i := range prompt {
			prompt[i] = 100 + i%50
		}
		ids, _ := json.Marshal(prompt)
		code, out := post(t, s, "/v1/completions", fmt.Sprintf(`{"prompt": %s, "max_tokens": 4, "temperature": 0}`, ids))
		if code != 200 || field(out, "usage", "prompt_tokens") != float64(trained+8) {
			t.Errorf("a prompt of %d tokens in a context of %d: %d %v", trained+8, 2*trained, code, out)
		}
	}
}

// TestWriteDeadlineKeepAlive: a connection idle past the write deadline of
// its last reply still gets the next replies, one without a body (written
// by net/http after the handler returns) included.
func TestWriteDeadlineKeepAlive(t *testing.T) {
	m, err := toy.LoadDefault()
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(newServer(t, m, Options{WriteTimeout: 100 * time.Millisecond, CORSOrigins: []string{"*"}}))
	defer ts.Close()
	conn, err := net.Dial("tcp", ts.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	br := bufio.NewReader(conn)
	for i, req := range []string{
		"GET /v1/models HTTP/1.1\r\nHost: localhost\r\n\r\n",
		"OPTIONS /v1/models HTTP/1.1\r\nHost: localhost\r\nOrigin: http://a.example\r\nAccess-Control-Request-Method: GET\r\n\r\n",
		"GET /health HTTP/1.1\r\nHost: localhost\r\n\r\n",
	} {
		if i > 0 {
			time.Sleep(300 * time.Millisecond) // the last deadline passes
		}
		conn.SetDeadline(time.Now().Add(10 * time.Second))
		if _, err := conn.Write([]byte(req)); err != nil {
			t.Fatal(err)
		}
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("request %d on a kept-alive connection: %v", i, err)
		}
		resp.Body.Close() // reads it to the end
		if resp.StatusCode/100 != 2 {
			t.Errorf("request %d: %d", i, resp.StatusCode)
		}
	}
}
