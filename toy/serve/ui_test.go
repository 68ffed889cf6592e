package serve

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
)

// chromeAccept is the Accept header Chromium sends when it loads a page.
const chromeAccept = "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,image/apng,*/*;q=0.8"

// TestUIPage: GET / gives a browser the chat page, as HTML under a policy
// that runs its one script and nothing else; its script calls the server's
// own endpoints, which exist; nothing comes from another site.
func TestUIPage(t *testing.T) {
	s := newServer(t, modelWithTemplate(t), Options{ContextSize: 64, APIKeys: []string{"k1"}})
	rec := httptest.NewRecorder()
	req := httptest.NewRequest("GET", "/", nil)
	req.Header.Set("Accept", chromeAccept)
	s.ServeHTTP(rec, req) // no key: a browser cannot send one to load a page
	body := rec.Body.String()
	if rec.Code != 200 || rec.Header().Get("Content-Type") != "text/html; charset=utf-8" || !strings.HasPrefix(body, "<!DOCTYPE html>") {
		t.Fatalf("GET / from a browser: %d %q %.80q", rec.Code, rec.Header().Get("Content-Type"), body)
	}
	if rec.Header().Get("X-Content-Type-Options") != "nosniff" || !strings.Contains(rec.Header().Get("Vary"), "Accept") {
		t.Errorf("headers %v", rec.Header())
	}

	// One inline script, allowed by its hash; no script, style or font from elsewhere.
	if strings.Count(body, "<script") != 1 || strings.Contains(body, "<script src") {
		t.Fatalf("the page should have one inline script")
	}
	script := body[strings.Index(body, "<script>")+len("<script>") : strings.Index(body, "</script>")]
	sum := sha256.Sum256([]byte(script))
	csp := rec.Header().Get("Content-Security-Policy")
	if !strings.Contains(csp, "script-src 'sha256-"+base64.StdEncoding.EncodeToString(sum[:])+"'") ||
		!strings.Contains(csp, "connect-src 'self'") || !strings.Contains(csp, "default-src 'none'") {
		t.Errorf("Content-Security-Policy %q does not allow exactly the page's script", csp)
	}
	if m := regexp.MustCompile(`(?i)(https?:)?//[a-z0-9.-]+\.[a-z]{2,}`).FindString(body); m != "" {
		t.Errorf("the page names another site: %q", m)
	}

	// The script's endpoints: the ones it needs, each one the server routes.
	endpoints := map[string]bool{}
	for _, m := range regexp.MustCompile(`"(/(?:v1|api)/[a-z/_]+)"`).FindAllStringSubmatch(script, -1) {
		endpoints[m[1]] = true
	}
	for _, want := range []string{"/v1/chat/completions", "/v1/models"} {
		if !endpoints[want] {
			t.Errorf("the script does not call %s (it names %v)", want, endpoints)
		}
	}
	for e := range endpoints {
		method := "GET"
		if strings.Contains(script, `fetch("`+e+`", { method: "POST"`) {
			method = "POST"
		}
		if _, pattern := s.mux.Handler(httptest.NewRequest(method, e, nil)); pattern == "" {
			t.Errorf("the script calls %s %s, which the server does not serve", method, e)
		}
	}
	// What the page sends: a streamed chat with its settings and the key as a Bearer token.
	for _, want := range []string{`stream: true`, `"Authorization"`, `"Bearer "`, `role: "system"`,
		`temperature: number("temperature")`, `top_p: number("top_p")`, `max_tokens: number("max_tokens")`, `body.stop = stop`,
		`"[DONE]"`, `delta.content`} {
		if !strings.Contains(script, want) {
			t.Errorf("the script lacks %s", want)
		}
	}
	for _, id := range []string{"system", "temperature", "top_p", "max_tokens", "stop", "apikey", "input", "send", "log"} {
		if !strings.Contains(body, `id="`+id+`"`) {
			t.Errorf("the page lacks the element #%s", id)
		}
	}
	if !bytes.Equal(rec.Body.Bytes(), uiPage) {
		t.Errorf("GET / did not serve the embedded page")
	}

	// HEAD: the headers, no body.
	rec = httptest.NewRecorder()
	req = httptest.NewRequest("HEAD", "/", nil)
	req.Header.Set("Accept", "text/html")
	s.ServeHTTP(rec, req)
	if rec.Code != 200 || rec.Header().Get("Content-Type") != "text/html; charset=utf-8" || rec.Body.Len() != 0 {
		t.Errorf("HEAD /: %d %q %d bytes", rec.Code, rec.Header().Get("Content-Type"), rec.Body.Len())
	}
}

// TestUIPlainClients: clients that do not ask for HTML (curl's */*, none,
// Ollama-style probes) get the one text line, as from Ollama's server.
func TestUIPlainClients(t *testing.T) {
	s := newServer(t, modelWithTemplate(t), Options{ContextSize: 64})
	for _, accept := range []string{"", "*/*", "application/json", "text/html;q=0, text/plain", "text/plain"} {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest("GET", "/", nil)
		if accept != "" {
			req.Header.Set("Accept", accept)
		}
		s.ServeHTTP(rec, req)
		if rec.Code != 200 || rec.Header().Get("Content-Type") != "text/plain; charset=utf-8" ||
			!strings.Contains(rec.Body.String(), "toy serve is running") {
			t.Errorf("GET / with Accept %q: %d %q %q", accept, rec.Code, rec.Header().Get("Content-Type"), rec.Body.String())
		}
	}
	// Other paths stay 404, not the page.
	rec := httptest.NewRecorder()
	req := httptest.NewRequest("GET", "/index.html", nil)
	req.Header.Set("Accept", chromeAccept)
	s.ServeHTTP(rec, req)
	if rec.Code != 404 {
		t.Errorf("GET /index.html: %d", rec.Code)
	}
}

func TestAcceptsHTML(t *testing.T) {
	for _, c := range []struct {
		accept []string
		want   bool
	}{
		{nil, false},
		{[]string{"*/*"}, false},
		{[]string{chromeAccept}, true},
		{[]string{"text/html"}, true},
		{[]string{"application/json", "text/html; q=0.5"}, true},
		{[]string{"application/xhtml+xml"}, true},
		{[]string{"text/html;q=0"}, false},
		{[]string{"text/html;q=0.000"}, false},
		{[]string{"text/htmlx"}, false},
	} {
		if got := acceptsHTML(c.accept); got != c.want {
			t.Errorf("acceptsHTML(%q) = %v", c.accept, got)
		}
	}
}
