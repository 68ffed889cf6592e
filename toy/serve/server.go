// Package serve is an OpenAI-compatible HTTP server over one loaded model,
// what `toy serve` runs: clients written for the OpenAI API, llama.cpp's
// llama-server or Ollama's /v1 endpoints work against it.
//
//	m, err := toy.Load("SmolLM2-135M-Instruct-Q8_0.gguf")
//	s, err := serve.New(m, serve.Options{})
//	http.ListenAndServe("127.0.0.1:8080", s)
//
// Endpoints (bodies are JSON; errors are {"error": {"message", "type",
// "param", "code"}} with a 4xx or 5xx status):
//
//   - POST /v1/chat/completions: messages [{role, content}] (content a string
//     or text parts; roles system, developer, user, assistant, tool),
//     rendered with the model's chat template (see package chat; a model
//     without one gets the messages' contents one per line); add_generation_prompt
//     and chat_template_kwargs (enable_thinking …) pass to the template.
//   - POST /v1/completions: prompt, a string or a list of token ids.
//   - Both: max_tokens (or max_completion_tokens; default: until the
//     context is full), temperature (0.8; 0 is greedy), top_p (0.95), top_k
//     (40), min_p (0.05), repeat_penalty (1: off) and repeat_last_n (64),
//     seed, stop (a string or up to 16), stream (server-sent events "data:
//     {…}" ending with "data: [DONE]"; stream_options.include_usage adds a
//     last chunk with the usage), n (only 1). frequency_penalty and
//     presence_penalty must be 0, logprobs false, logit_bias empty; tools and
//     response formats other than text are refused. Unknown fields are an
//     error. The model field is accepted whatever it names.
//     Responses carry usage (prompt, completion and total tokens, and the
//     prompt tokens reused from the cache) and finish_reason "stop" (an
//     end-of-generation token or a stop string) or "length" (max_tokens or
//     a full context).
//   - GET /v1/models: the one model. GET /health: {"status": "ok"}.
//
// Requests run one at a time, in arrival order, over one KV cache: a prompt
// that starts with the tokens of the previous request (a chat growing turn
// by turn) prefills only what is new, as llama-server does. A request whose
// client goes away is dropped from the queue or stops at its next token.
package serve

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"path/filepath"
	"strings"
	"time"

	"github.com/toyml/toy/toy"
	"github.com/toyml/toy/toy/chat"
	"github.com/toyml/toy/toy/engine"
)

// Options configures a Server.
type Options struct {
	// Name is the model id responses carry; default: the file name without .gguf.
	Name string
	// ContextSize is the KV cache's positions, prompt and reply together;
	// default: the model's context length, at most 4096.
	ContextSize int
	// ChatTemplate, if set, replaces the model's own template (Jinja2 source).
	ChatTemplate string
	// Log, if set, gets one line per request.
	Log *log.Logger
}

// Server answers the OpenAI endpoints for one model. It is an http.Handler.
type Server struct {
	model   *toy.Model
	name    string
	tmpl    *chat.Template // nil: chat.Plain
	tmplErr error          // why tmpl is nil
	created int64
	log     *log.Logger
	mux     *http.ServeMux

	turn    chan struct{} // holds one token while a request uses the model
	session *engine.Session
	ctxSize int
}

// maxBody bounds a request body.
const maxBody = 8 << 20

// New returns a server for m. It fails when m has no tokenizer, or when
// opts.ChatTemplate does not parse.
func New(m *toy.Model, opts Options) (*Server, error) {
	if m.Tokenizer == nil {
		return nil, fmt.Errorf("serve: %w: %v", toy.ErrNoTokenizer, m.TokenizerErr)
	}
	s := &Server{model: m, name: opts.Name, created: time.Now().Unix(), log: opts.Log, turn: make(chan struct{}, 1)}
	if s.name == "" {
		s.name = strings.TrimSuffix(filepath.Base(m.Path), ".gguf")
	}
	if opts.ChatTemplate != "" {
		t, err := chat.Parse(opts.ChatTemplate)
		if err != nil {
			return nil, fmt.Errorf("serve: chat template: %w", err)
		}
		s.tmpl = t
	} else {
		s.tmpl, s.tmplErr = m.ChatTemplate()
		if s.tmplErr != nil && !errors.Is(s.tmplErr, chat.ErrNoTemplate) {
			return nil, fmt.Errorf("serve: %w", s.tmplErr)
		}
	}
	s.ctxSize = opts.ContextSize
	if s.ctxSize <= 0 {
		s.ctxSize = min(m.ContextLength(), 4096)
	}
	s.ctxSize = min(s.ctxSize, m.ContextLength())
	s.session = m.NewSession(s.ctxSize)

	s.mux = http.NewServeMux()
	s.mux.HandleFunc("POST /v1/chat/completions", s.handleChat)
	s.mux.HandleFunc("POST /v1/completions", s.handleCompletion)
	s.mux.HandleFunc("GET /v1/models", s.handleModels)
	s.mux.HandleFunc("GET /health", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 200, map[string]string{"status": "ok"})
	})
	return s, nil
}

// HasChatTemplate reports whether chat requests use a template (the
// model's or Options.ChatTemplate) rather than plain concatenation.
func (s *Server) HasChatTemplate() bool { return s.tmpl != nil }

// ContextSize is the number of positions a request's prompt and reply share.
func (s *Server) ContextSize() int { return s.ctxSize }

// ServeHTTP routes a request; unknown paths get 404 and wrong methods 405,
// both as OpenAI-shaped JSON errors.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	rec := &statusRecorder{ResponseWriter: w, status: 200}
	defer func() {
		if p := recover(); p != nil { // a bug in a forward pass: report it, keep serving
			if !rec.wrote {
				writeError(rec, &apiError{Status: 500, Message: fmt.Sprintf("internal error: %v", p), Type: "server_error"})
			}
		}
		if s.log != nil {
			s.log.Printf("%s %s %d %s", r.Method, r.URL.Path, rec.status, time.Since(start).Round(time.Millisecond))
		}
	}()
	h, pattern := s.mux.Handler(r)
	if pattern == "" {
		status, msg := 404, fmt.Sprintf("no endpoint %s %s", r.Method, r.URL.Path)
		for _, p := range []string{"/v1/chat/completions", "/v1/completions", "/v1/models", "/health"} {
			if r.URL.Path == p {
				status, msg = 405, fmt.Sprintf("%s does not accept %s", p, r.Method)
			}
		}
		writeError(rec, &apiError{Status: status, Message: msg, Type: "invalid_request_error"})
		return
	}
	h.ServeHTTP(rec, r)
}

func (s *Server) handleModels(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, 200, map[string]any{
		"object": "list",
		"data": []map[string]any{{
			"id": s.name, "object": "model", "created": s.created, "owned_by": "toy",
			"meta": map[string]any{"arch": s.model.Arch, "n_ctx": s.ctxSize, "n_ctx_train": s.model.ContextLength(),
				"n_vocab": s.model.VocabSize(), "chat_template": s.tmpl != nil},
		}},
	})
}

func (s *Server) handleChat(w http.ResponseWriter, r *http.Request) {
	var req chatRequest
	if e := decode(w, r, &req); e != nil {
		writeError(w, e)
		return
	}
	if e := req.check(); e != nil {
		writeError(w, e)
		return
	}
	switch {
	case len(req.Tools) > 0 && string(req.Tools) != "null" && string(req.Tools) != "[]":
		writeError(w, badRequest("tools", "tools are not supported: toy does not parse tool calls"))
		return
	case len(req.ToolChoice) > 0 && string(req.ToolChoice) != "null" && string(req.ToolChoice) != `"none"`:
		writeError(w, badRequest("tool_choice", "tool_choice is not supported"))
		return
	case req.ResponseFormat != nil && req.ResponseFormat.Type != "text":
		writeError(w, badRequest("response_format", "response_format %q is not supported", req.ResponseFormat.Type))
		return
	}
	msgs, e := req.messages()
	if e != nil {
		writeError(w, e)
		return
	}
	opts := s.model.ChatOptions(req.AddGenerationPrompt == nil || *req.AddGenerationPrompt)
	if len(req.ChatTemplateKwargs) > 0 {
		opts.Vars = map[string]any{}
		for k, v := range req.ChatTemplateKwargs {
			b, _ := json.Marshal(v)
			opts.Vars[k], _ = chat.FromJSON(b)
		}
	}
	ids, err := s.model.EncodeChat(s.tmpl, msgs, opts)
	if err != nil {
		writeError(w, badRequest("messages", "%v", err))
		return
	}
	s.complete(w, r, &req.samplingRequest, ids, true)
}

func (s *Server) handleCompletion(w http.ResponseWriter, r *http.Request) {
	var req completionRequest
	if e := decode(w, r, &req); e != nil {
		writeError(w, e)
		return
	}
	if e := req.check(); e != nil {
		writeError(w, e)
		return
	}
	if req.Echo || req.Suffix != "" {
		writeError(w, badRequest("echo", "echo and suffix are not supported"))
		return
	}
	ids, e := s.promptIDs(req.Prompt)
	if e != nil {
		writeError(w, e)
		return
	}
	s.complete(w, r, &req.samplingRequest, ids, false)
}

// promptIDs reads a completion prompt: a string (encoded with the model's
// tokenizer, BOS added when it asks for it, special tokens parsed), a list of
// one string, or a list of token ids.
func (s *Server) promptIDs(raw json.RawMessage) ([]int32, *apiError) {
	var text string
	if err := json.Unmarshal(raw, &text); err != nil {
		var texts []string
		var ids []int32
		switch {
		case json.Unmarshal(raw, &texts) == nil && len(texts) == 1:
			text = texts[0]
		case json.Unmarshal(raw, &ids) == nil && len(ids) > 0:
			for _, id := range ids {
				if id < 0 || int(id) >= s.model.VocabSize() {
					return nil, badRequest("prompt", "token id %d out of range (vocabulary has %d tokens)", id, s.model.VocabSize())
				}
			}
			return ids, nil
		default:
			return nil, badRequest("prompt", "prompt must be a string, a list of one string, or a list of token ids")
		}
	}
	t := s.model.Tokenizer
	ids := t.Encode(text, tokenizerOptions(t.AddBOS()))
	if len(ids) == 0 {
		return nil, badRequest("prompt", "the prompt is empty")
	}
	return ids, nil
}

// decode reads a JSON body strictly: one object, no unknown fields. The
// Content-Type is not checked (curl -d sends a form type), as in llama-server.
func decode(w http.ResponseWriter, r *http.Request, v any) *apiError {
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxBody))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return &apiError{Status: 413, Message: fmt.Sprintf("request body over %d bytes", maxBody), Type: "invalid_request_error"}
		}
		return badRequest("", "invalid JSON body: %v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return badRequest("", "invalid JSON body: more than one value")
	}
	return nil
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.Encode(v)
}

func writeError(w http.ResponseWriter, e *apiError) {
	writeJSON(w, e.Status, map[string]*apiError{"error": e})
}

// statusRecorder remembers the status a handler wrote, for the log.
type statusRecorder struct {
	http.ResponseWriter
	status int
	wrote  bool
}

func (r *statusRecorder) WriteHeader(status int) {
	r.status, r.wrote = status, true
	r.ResponseWriter.WriteHeader(status)
}

func (r *statusRecorder) Write(b []byte) (int, error) {
	r.wrote = true
	return r.ResponseWriter.Write(b)
}

// Flush passes streaming flushes through.
func (r *statusRecorder) Flush() {
	if f, ok := r.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// newID returns a response id such as "chatcmpl-3f9a…".
func newID(prefix string) string {
	var b [12]byte
	rand.Read(b[:])
	return fmt.Sprintf("%s-%x", prefix, b)
}

// randomSeed is the seed of a request that gives none.
func randomSeed() uint64 {
	var b [8]byte
	rand.Read(b[:])
	return binary.LittleEndian.Uint64(b[:])
}

// acquire waits for the model; false when ctx ends first.
func (s *Server) acquire(ctx context.Context) bool {
	select {
	case s.turn <- struct{}{}:
		return true
	case <-ctx.Done():
		return false
	}
}

func (s *Server) release() { <-s.turn }

// resetSession drops the KV cache (after a panic left it in an unknown state).
func (s *Server) resetSession() { s.session = s.model.NewSession(s.ctxSize) }
