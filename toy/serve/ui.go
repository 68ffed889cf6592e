// GET /: a chat page for people, embedded in the binary.

package serve

import (
	"bytes"
	"crypto/sha256"
	_ "embed"
	"encoding/base64"
	"fmt"
	"mime"
	"net/http"
	"strings"
)

// uiPage is the chat page: plain HTML and JavaScript, no framework and
// nothing fetched from elsewhere. It streams replies from POST
// /v1/chat/completions with a system prompt, temperature, top_p, max_tokens
// and a stop string, and sends its API key field as a Bearer token.
//
//go:embed ui.html
var uiPage []byte

// uiPolicy is the page's Content-Security-Policy: its one inline script (by
// hash), its inline style, requests to this server only, no frames, no
// forms posting elsewhere.
var uiPolicy = func() string {
	script := uiPage[bytes.Index(uiPage, []byte("<script>"))+len("<script>") : bytes.Index(uiPage, []byte("</script>"))]
	sum := sha256.Sum256(script)
	return fmt.Sprintf("default-src 'none'; script-src 'sha256-%s'; style-src 'unsafe-inline'; connect-src 'self'; "+
		"base-uri 'none'; form-action 'none'; frame-ancestors 'none'", base64.StdEncoding.EncodeToString(sum[:]))
}()

// handleUI serves the chat page to browsers, which ask for text/html, and
// the one line Ollama's server answers too ("… is running") to every other
// client: scripts and health checks probing GET / get text, not a page.
func (s *Server) handleUI(w http.ResponseWriter, r *http.Request) {
	w.Header().Add("Vary", "Accept")
	if !acceptsHTML(r.Header.Values("Accept")) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprintln(w, "toy serve is running: OpenAI's API under /v1, Ollama's under /api, a chat page here for browsers")
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", uiPolicy)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-cache")
	if r.Method != http.MethodHead {
		w.Write(uiPage)
	}
}

// acceptsHTML reports whether Accept headers name text/html (or
// application/xhtml+xml) with a non-zero quality.
func acceptsHTML(accept []string) bool {
	for _, a := range accept {
		for _, part := range strings.Split(a, ",") {
			t, params, err := mime.ParseMediaType(strings.TrimSpace(part))
			if err != nil || (t != "text/html" && t != "application/xhtml+xml") {
				continue
			}
			if q, ok := params["q"]; ok && strings.Trim(q, "0.") == "" {
				continue // q=0: not acceptable
			}
			return true
		}
	}
	return false
}
