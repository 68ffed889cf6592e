// guard.go: what a request passes before its endpoint runs — the Host
// check against DNS rebinding, CORS, the API key, the body's Content-Type —
// and the write deadline that frees a slot whose client stops reading.
//
// In order, for every request:
//
//  1. Host: a request that came in over a listener (not a handler called in
//     process) must name a loopback host (localhost, 127.0.0.1, [::1]), the
//     address it came in on, or a host Options.AllowedHosts lists ("*": any);
//     else 403. A web page on a name its DNS points at 127.0.0.1 (DNS
//     rebinding) sends its own name as Host and is refused.
//  2. CORS, off by default: for an Origin Options.CORSOrigins lists ("*":
//     any) the reply carries Access-Control-Allow-Origin, and a preflight
//     (OPTIONS with Access-Control-Request-Method) is answered 204 with the
//     methods and headers allowed. A preflight from another origin gets 403.
//  3. API key: with Options.APIKeys, every request but GET /health and GET /
//     (which say only that the server runs, and a browser cannot send a key
//     to load a page) needs "Authorization: Bearer KEY" with one of them
//     (OpenAI's and Ollama's clients both send that header); else 401,
//     OpenAI's error {"error": {"message", "type": "invalid_request_error",
//     "code": "invalid_api_key"}}, or Ollama's {"error": "…"} under /api/.
//     Keys are compared in constant time (their SHA-256 digests, all of them).
//  4. Content-Type of a POST: application/json or any …+json type (with
//     parameters such as charset); a form (curl -d's
//     application/x-www-form-urlencoded, multipart/form-data) or text/plain,
//     what a web page can post to another site without asking, gets 415.
//     A body without a Content-Type passes (curl -H 'Content-Type:', Python
//     requests' data=) unless the request carries an Origin header: browsers
//     send one with every POST, other clients do not.
//
// Every write of the reply (each streamed chunk) first sets the connection's
// write deadline Options.WriteTimeout ahead (default 30 s): a client that
// stops reading makes a write fail by then, which cancels the request's
// context, so its generation stops at the next token and frees its slot.

package serve

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"mime"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/toyml/toy/toy"
	"github.com/toyml/toy/toy/engine"
	"github.com/toyml/toy/toy/models"
)

// defaultWriteTimeout is Options.WriteTimeout's default.
const defaultWriteTimeout = 30 * time.Second

// guard is what Options says of who may call and how: see the file comment.
type guard struct {
	keys         [][sha256.Size]byte // digests of the API keys; none: no key needed
	hosts        map[string]bool     // Host names allowed besides loopback and the local address
	anyHost      bool
	origins      map[string]bool // CORS origins
	anyOrigin    bool
	writeTimeout time.Duration // ≤ 0: no deadline
}

// newGuard reads opts' APIKeys, AllowedHosts, CORSOrigins and WriteTimeout.
func newGuard(opts Options) (guard, error) {
	g := guard{hosts: map[string]bool{}, origins: map[string]bool{}, writeTimeout: opts.WriteTimeout}
	if g.writeTimeout == 0 {
		g.writeTimeout = defaultWriteTimeout
	}
	for _, k := range opts.APIKeys {
		if k == "" || strings.TrimSpace(k) != k || strings.ContainsAny(k, "\r\n") {
			return g, fmt.Errorf("serve: an API key must be non-empty, without blanks around it")
		}
		g.keys = append(g.keys, sha256.Sum256([]byte(k)))
	}
	for _, h := range opts.AllowedHosts {
		if h == "*" {
			g.anyHost = true
		} else if h = hostName(h); h != "" {
			g.hosts[h] = true
		}
	}
	for _, o := range opts.CORSOrigins {
		if o == "*" {
			g.anyOrigin = true
		} else {
			g.origins[strings.ToLower(strings.TrimSuffix(o, "/"))] = true
		}
	}
	return g, nil
}

// hostName is a Host header's or an address's host, lower case, without
// port, brackets or a final dot.
func hostName(hostport string) string {
	h := hostport
	if host, _, err := net.SplitHostPort(hostport); err == nil {
		h = host
	}
	h = strings.TrimSuffix(strings.TrimPrefix(h, "["), "]")
	return strings.ToLower(strings.TrimSuffix(h, "."))
}

// admit runs the checks 1–4; false when it answered the request itself (a
// refusal or a preflight).
func (s *Server) admit(w http.ResponseWriter, r *http.Request) bool {
	g := &s.guard
	if !g.hostAllowed(r) {
		refuse(w, r, http.StatusForbidden, "forbidden_host",
			fmt.Sprintf("Host %q is not allowed: not a loopback name or this server's address (toy serve --allow-host NAME allows it)", r.Host))
		return false
	}
	origin := r.Header.Get("Origin")
	corsOK := origin != "" && (g.anyOrigin || g.origins[strings.ToLower(origin)])
	if corsOK {
		h := w.Header()
		h.Set("Access-Control-Allow-Origin", origin)
		if g.anyOrigin {
			h.Set("Access-Control-Allow-Origin", "*")
		}
		h.Add("Vary", "Origin")
	}
	if r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" {
		if !corsOK {
			refuse(w, r, http.StatusForbidden, "forbidden_origin",
				fmt.Sprintf("origin %q is not allowed (toy serve --cors ORIGIN allows it)", origin))
			return false
		}
		h := w.Header()
		h.Set("Access-Control-Allow-Methods", "GET, POST, OPTIONS")
		allow := r.Header.Get("Access-Control-Request-Headers")
		if allow == "" {
			allow = "Authorization, Content-Type"
		}
		h.Set("Access-Control-Allow-Headers", allow)
		h.Set("Access-Control-Max-Age", "600")
		w.WriteHeader(http.StatusNoContent)
		return false
	}
	if len(g.keys) > 0 && !public(r) && !g.keyValid(r.Header.Get("Authorization")) {
		w.Header().Set("WWW-Authenticate", `Bearer realm="toy"`)
		msg := "invalid API key"
		if r.Header.Get("Authorization") == "" {
			msg = "missing API key: send the header Authorization: Bearer KEY"
		}
		refuse(w, r, http.StatusUnauthorized, "invalid_api_key", msg)
		return false
	}
	if r.Method == http.MethodPost {
		if msg := contentTypeProblem(r); msg != "" {
			refuse(w, r, http.StatusUnsupportedMediaType, "unsupported_media_type", msg)
			return false
		}
	}
	return true
}

// public reports whether r may go without an API key.
func public(r *http.Request) bool {
	return (r.Method == http.MethodGet || r.Method == http.MethodHead) && (r.URL.Path == "/health" || r.URL.Path == "/")
}

// refuse writes an error in the shape of the API r is under.
func refuse(w http.ResponseWriter, r *http.Request, status int, code, msg string) {
	e := &apiError{Status: status, Message: msg, Type: "invalid_request_error", Code: code}
	if isOllama(r) {
		writeOllamaError(w, e)
	} else {
		writeError(w, e)
	}
}

// hostAllowed is check 1.
func (g *guard) hostAllowed(r *http.Request) bool {
	local, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok || g.anyHost {
		return true // called in process, not over a listener
	}
	h := hostName(r.Host)
	if h == "localhost" || g.hosts[h] {
		return true
	}
	ip := net.ParseIP(h)
	if ip == nil {
		return false
	}
	if ip.IsLoopback() {
		return true
	}
	if tcp, ok := local.(*net.TCPAddr); ok && tcp.IP.Equal(ip) {
		return true // the address the client connected to
	}
	return false
}

// keyValid reports whether an Authorization header carries one of the keys.
func (g *guard) keyValid(auth string) bool {
	scheme, key, ok := strings.Cut(strings.TrimSpace(auth), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return false
	}
	d := sha256.Sum256([]byte(strings.TrimSpace(key)))
	match := 0
	for _, k := range g.keys { // all of them, whichever matches
		match |= subtle.ConstantTimeCompare(d[:], k[:])
	}
	return match == 1
}

// contentTypeProblem is check 4: "" when r's body may be read as JSON.
func contentTypeProblem(r *http.Request) string {
	ct := r.Header.Get("Content-Type")
	if ct == "" {
		if r.Header.Get("Origin") != "" {
			return "a request from a web page needs Content-Type: application/json"
		}
		return ""
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err == nil && (mt == "application/json" || strings.HasSuffix(mt, "+json")) {
		return ""
	}
	return fmt.Sprintf("Content-Type must be application/json, not %q (curl: --json BODY, or -H 'Content-Type: application/json')", ct)
}

// watchWrites returns w and r such that every write to w first sets the
// connection's write deadline, and a write that fails cancels r's context
// (net/http cancels it too on a broken connection); done releases it.
func (s *Server) watchWrites(w http.ResponseWriter, r *http.Request) (http.ResponseWriter, *http.Request, func()) {
	ctx, cancel := context.WithCancelCause(r.Context())
	if s.guard.writeTimeout <= 0 {
		return w, r.WithContext(ctx), func() { cancel(nil) }
	}
	d := &deadlineWriter{ResponseWriter: w, rc: http.NewResponseController(w), timeout: s.guard.writeTimeout, cancel: cancel}
	// A deadline from the connection's previous request may have passed:
	// a fresh one now, and one when the handler returns for what net/http
	// writes after it (the headers of a reply without a body, the last chunk).
	d.extend()
	return d, r.WithContext(ctx), func() { d.extend(); cancel(nil) }
}

// errWriteFailed is the cause of a request's cancellation by a failed write.
var errWriteFailed = errors.New("serve: writing the reply failed or timed out")

// deadlineWriter sets the write deadline before each write and flush.
type deadlineWriter struct {
	http.ResponseWriter
	rc      *http.ResponseController
	timeout time.Duration
	cancel  context.CancelCauseFunc
}

// extend sets the deadline timeout from now (a test's recorder has none).
func (d *deadlineWriter) extend() { d.rc.SetWriteDeadline(time.Now().Add(d.timeout)) }

func (d *deadlineWriter) Write(b []byte) (int, error) {
	d.extend()
	n, err := d.ResponseWriter.Write(b)
	if err != nil {
		d.cancel(fmt.Errorf("%w: %w", errWriteFailed, err))
	}
	return n, err
}

func (d *deadlineWriter) Flush() {
	d.extend()
	if err := d.rc.Flush(); err != nil && !errors.Is(err, http.ErrNotSupported) {
		d.cancel(fmt.Errorf("%w: %w", errWriteFailed, err))
	}
}

// Unwrap lets http.ResponseController reach the connection.
func (d *deadlineWriter) Unwrap() http.ResponseWriter { return d.ResponseWriter }

// contextSize is the context a server over m gives each slot for
// Options.ContextSize want (0: the model's, at most 4096). Above the
// trained context it is allowed up to what the file's RoPE scaling
// stretches it to (rope.scaling.type linear or yarn, or a factor alone:
// factor × rope.scaling.original_context_length, or × the trained context
// when that is not given, as llama.cpp reads them), else refused, as it is
// with a draft model (whose own context bounds its guesses).
func contextSize(m *toy.Model, want int, draft bool) (int, error) {
	trained := m.ContextLength()
	if want <= 0 {
		return min(trained, 4096), nil
	}
	if want <= trained {
		return want, nil
	}
	scaled := scaledContext(m)
	switch {
	case scaled <= trained:
		return 0, fmt.Errorf("serve: context %d is above the model's trained context of %d, and its file declares no RoPE scaling that stretches it: use at most %d", want, trained, trained)
	case want > scaled:
		return 0, fmt.Errorf("serve: context %d is above the %d the model's RoPE scaling stretches its trained context of %d to: use at most %d", want, scaled, trained, scaled)
	case draft:
		return 0, fmt.Errorf("serve: context %d is above the model's trained context of %d, which a draft model does not allow", want, trained)
	}
	return want, nil
}

// scaledContext is the context m's RoPE scaling stretches its trained one
// to, or 0 without scaling.
func scaledContext(m *toy.Model) int {
	if m.File == nil {
		return 0
	}
	meta := m.File.Meta(m.Arch)
	factor := meta.FloatOr("rope.scaling.factor", meta.FloatOr("rope.scale_linear", 0))
	switch meta.StringOr("rope.scaling.type", "linear") {
	case "linear", "yarn":
	default:
		return 0
	}
	if factor <= 1 {
		return 0
	}
	orig := meta.UintOr("rope.scaling.original_context_length", m.ContextLength())
	return int(float64(orig) * float64(factor))
}

// stretched is a model whose sessions may hold more positions than its
// trained context (contextSize allowed them).
type stretched struct {
	models.Model
	ctx int
}

func (s stretched) ContextLength() int { return s.ctx }

// session is a new session of s.ctxSize positions over the model.
func (s *Server) session() *engine.Session {
	if s.ctxSize > s.model.ContextLength() {
		return engine.NewSession(stretched{s.model.Net, s.ctxSize}, s.ctxSize)
	}
	return s.model.NewSession(s.ctxSize)
}
