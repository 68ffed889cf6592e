// Package serve is an HTTP server over one loaded model, what `toy serve`
// runs. It speaks two APIs on one address: OpenAI's (/v1/…), so clients
// written for OpenAI, llama.cpp's llama-server or Ollama's /v1 endpoints work
// against it, and Ollama's own (/api/…), so Ollama clients — the ollama
// Python and JavaScript libraries, Open WebUI, Continue — do too.
//
//	m, err := toy.Load("SmolLM2-135M-Instruct-Q8_0.gguf")
//	s, err := serve.New(m, serve.Options{})
//	http.ListenAndServe("127.0.0.1:8080", s)
//
// # OpenAI endpoints
//
// Bodies are JSON (Content-Type application/json; guard.go also checks
// the Host, API keys and CORS, and sets write deadlines); errors are
// {"error": {"message", "type", "param", "code"}} with a 4xx or 5xx
// status. Unknown fields, wrong types and values out of range are errors
// (400), not silently ignored.
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
//     frequency_penalty and presence_penalty (−2 … 2, OpenAI's: logit_j −=
//     frequency·c_j + presence·[c_j > 0] over the c_j times the reply has
//     drawn token j), logit_bias (token id → −100 … 100, added to the
//     logits; −100 bans), seed, stop (a string or up to 16), stream
//     (server-sent events "data: {…}" ending with "data: [DONE]";
//     stream_options.include_usage adds a last chunk with the usage).
//     The model field is accepted whatever it names.
//     Responses carry usage (prompt, completion and total tokens, and the
//     prompt tokens reused from the cache) and finish_reason "stop" (an
//     end-of-generation token or a stop string), "length" (max_tokens or
//     a full context) or "tool_calls".
//   - n (1 … 16): that many choices, each its own sampling stream: choice i
//     samples with seed + i (the request's seed, or a random one), one after
//     another over the same cached prompt; streamed, each chunk carries its
//     choice's index, the choices in turn.
//   - Log-probabilities: chat's logprobs: true with top_logprobs 0 … 20 gives
//     choices[].logprobs.content[] {token, logprob, bytes, top_logprobs};
//     /v1/completions' logprobs: N (0 … 20) gives the legacy {tokens,
//     token_logprobs, top_logprobs, text_offset} (byte offsets into the
//     reply). Both streamed too. A log-prob is the log-softmax of the raw
//     logits the model gave at that position, log p_i = x_i − log Σ_j e^{x_j},
//     before temperature, penalties, bias and truncation, as OpenAI reports
//     them; end-of-generation tokens and tokens cut off by a stop string are
//     not listed.
//   - Tools: tools [{type: "function", function: {name, description,
//     parameters}}] go to the chat template as its tools variable, which is
//     how Qwen2.5/Qwen3 (Hermes <tool_call>{json}</tool_call>), Qwen3.5
//     and Qwen3-Coder (<tool_call><function=NAME><parameter=P>value
//     </parameter></function></tool_call>, values JSON unless the schema
//     types them as strings), Llama 3.1/3.2 (a JSON object {name,
//     parameters}, maybe after <|python_tag|>)
//     and Mistral v0.3 ([TOOL_CALLS] [{name, arguments, id}]) templates
//     show them to the model. The reply is read back in the format the
//     template writes earlier calls in: calls to offered functions become
//     choices[].message.tool_calls [{id, type: "function", function: {name,
//     arguments}}] (arguments a JSON string) with finish_reason
//     "tool_calls"; anything else, and every reply of a template in another
//     format, is content. Streamed, content flows until a call's opening
//     appears; from there the reply is held, and its calls come whole in one
//     delta.tool_calls chunk. tool_choice "auto" (default); "none" leaves
//     the tools out of the prompt; "required" and {"type": "function",
//     "function": {"name"}} start the reply with the opening of a call (of
//     that function, whose arguments are then kept to its parameters schema
//     by grammar.Schema, or to a JSON object where the schema uses keywords
//     it refuses). For gpt-oss they keep its harmony reply instead to
//     analysis (or commentary) messages and then one call, to an offered
//     function or the named one, its arguments kept to that function's
//     schema the same way, as llama.cpp's grammar for gpt-oss does under
//     "required" (harmony.go); with response_format json or a grammar they
//     are refused, and so they are for a template in none of these formats.
//     parallel_tool_calls: false keeps the first call. Assistant
//     messages may carry tool_calls and "tool" messages tool_call_id; call
//     ids are nine letters and digits, the form Mistral's template insists on.
//   - JSON mode: response_format {"type": "json_object"} masks every step
//     with grammar.JSON, so the reply is a JSON object (llama.cpp's json
//     grammar: what llama-server's json_object and Ollama's format "json"
//     give); {"type": "json_schema", "json_schema": {"schema"}} narrows it
//     to the schema's values (grammar.Schema: the grammar llama.cpp makes
//     of a schema, keys in the schema's order, patterns, lengths, integer
//     bounds and formats included; keywords it cannot keep are refused);
//     so do llama-server's {"type": "json_object", "schema"} and its
//     top-level "json_schema" field, which /v1/completions takes too.
//     With tools either is refused.
//   - Reasoning: a chat reply that starts with <think> (or whose template
//     opened it, as DeepSeek-R1's do) has the text up to </think> taken out
//     of content into message.reasoning_content (delta.reasoning_content
//     when streamed), blanks stripped, as llama-server's default
//     reasoning_format does; "reasoning_format": "none" leaves it inline.
//     gpt-oss's replies (harmony, whose structure is in control tokens) are
//     read by channel: analysis is the reasoning, final the content, a
//     message to functions.NAME a tool call (harmony.go); reasoning_effort
//     low, medium or high reaches its template. JSON mode, schemas and
//     grammars hold in its final message only, as llama.cpp's lazy grammar
//     (the analysis and the headers before it are free).
//   - grammar (both endpoints, llama.cpp's extension): a GBNF grammar the
//     reply is kept to (grammar.ParseGBNF, grammar.Matcher: llama.cpp's
//     grammar sampler; <name> tokens by the model's vocabulary). Refused
//     with response_format json or with tools.
//   - suffix (/v1/completions): fill in the middle, for a model with FIM
//     tokens (the GGUF's tokenizer.ggml.fim_pre/suf/mid_token_id, or their
//     known texts): the prompt is [BOS] <PRE> prompt <SUF> suffix <MID>, as
//     llama-server's infill; 400 for a model without them (fim.go).
//   - Refused with a clear error: echo, images.
//   - POST /v1/responses: OpenAI's Responses API, made a chat request
//     (responses.go): input (a string, or messages with input_text parts,
//     function_call and function_call_output items), instructions,
//     max_output_tokens, temperature, top_p, tools (function tools →
//     function_call output items), tool_choice, text.format; stream sends
//     its typed events (response.created, response.output_text.delta,
//     response.output_text.done, response.completed …);
//     previous_response_id is refused.
//   - GET /v1/models: the one model; GET /v1/models/{id}: it, or 404
//     (model_not_found) for another id. GET /health: {"status": "ok"}.
//   - GET /metrics: Prometheus' text format (requests by endpoint and
//     status, prompt and generated tokens, time to first token and tokens/s
//     histograms, busy slots, queue depth, prefix-cache hits, batched
//     steps); GET /slots: llama-server's list of slots and their requests'
//     progress (metrics.go).
//   - POST /v1/embeddings, and Ollama's POST /api/embed (and its older
//     POST /api/embeddings, {prompt} → {embedding}), when
//     Options.Embedder is set (toy serve --embed MODEL): see embed.go.
//   - POST /rerank (also /v1/rerank, /reranking, /v1/reranking: llama.cpp's
//     routes) when that model is a reranker (rank pooling: bge-reranker,
//     ms-marco cross-encoders): {query, documents, top_n} answers Jina's
//     {results: [{index, relevance_score}], usage}, best first; with
//     "texts" instead of documents, TEI's [{index, score, text}]. Scores
//     are the reranker's logits, as llama.cpp's server gives them.
//
// # Ollama endpoints
//
// Errors are {"error": "…"}. Streaming is newline-delimited JSON and is the
// default; "stream": false answers once.
//
//   - POST /api/chat: model (any name), messages [{role, content, tool_calls
//     (arguments as objects), tool_name}], tools, think (→ the template's
//     enable_thinking), options, stream, keep_alive (accepted, ignored: the
//     model stays loaded). Replies {model, created_at, message {role,
//     content, tool_calls}, done, done_reason, total_duration,
//     load_duration, prompt_eval_count, prompt_eval_duration, eval_count,
//     eval_duration}; an empty messages list only "loads" the model
//     (done_reason "load").
//   - POST /api/generate: prompt (with system, rendered through the chat
//     template as one user turn; raw: true sends the prompt as it is),
//     context (the token ids a previous reply returned, prepended), images
//     and suffix refused, template refused (toy renders the model's Jinja
//     template). Replies carry response and, unless raw, context.
//   - think (chat): true also takes the reply's <think> part out of content
//     into message.thinking, as Ollama does; unset leaves the reply as it is.
//     For gpt-oss "low", "medium" or "high" set its reasoning effort, and its
//     analysis is always message.thinking.
//   - logprobs: true and top_logprobs (0 … 20) (both): each object lists
//     logprobs [{token, logprob, bytes, top_logprobs}] for the tokens whose
//     text it carries, as Ollama 0.12.11+ (ollama_logprobs.go).
//   - format (both): "json" keeps the reply a JSON object (grammar.JSON, as
//     response_format json_object above), a JSON schema a value of it (as
//     json_schema); with tools it is refused.
//   - options: temperature, top_k, top_p, min_p, num_predict (−1, −2:
//     until the context is full), seed, stop, repeat_penalty, repeat_last_n,
//     presence_penalty, frequency_penalty, num_ctx (a limit on prompt plus
//     reply, at most the server's --ctx); the machine options (num_gpu,
//     num_thread, use_mmap …) are accepted and ignored; mirostat,
//     typical_p and tfs_z other than off are refused.
//   - GET /api/tags, GET /api/ps: the one model with its details (family,
//     parameter size, quantization); POST /api/show: its details, model_info
//     (the GGUF metadata, token lists left out), chat template and
//     capabilities; GET /api/version.
//
// GET / is a chat page for browsers (ui.go: embedded HTML and JavaScript
// streaming from /v1/chat/completions, with a system prompt, sampling
// settings, a stop string and an API key field); clients whose Accept does
// not name text/html get a line saying the server runs.
//
// Requests run in Options.Parallel slots (slots.go), each over a KV cache of
// its own: a prompt that starts with the tokens of a slot's previous request
// (a chat growing turn by turn) prefills only what is new, as llama-server
// does. The busy slots' steps run as one batched forward pass, so a reply
// is the same whatever else runs. Past the slots requests wait in arrival
// order (Options.Queue), then get 503. A request whose client goes away is
// dropped from the queue or stops at its next token.
//
// With Options.Draft (toy serve --draft, llama-server's --model-draft) a
// smaller model over the same vocabulary guesses a few tokens ahead and the
// model checks them in one batched pass (engine.Speculator): every token is
// still drawn from the model's own logits, so the replies are those without
// a draft, only faster when it guesses well; the OpenAI responses' timings
// count draft_n and draft_n_accepted.
package serve

import (
	"cmp"
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
	"reflect"
	"strings"
	"time"

	"github.com/toyml/toy/toy"
	"github.com/toyml/toy/toy/chat"
	"github.com/toyml/toy/toy/tokenizer"
)

// Options configures a Server.
type Options struct {
	// Name is the model id responses carry; default: the file name without .gguf.
	Name string
	// ContextSize is the KV cache's positions, prompt and reply together;
	// default: the model's context length, at most 4096. Above the trained
	// context New refuses it unless the file's RoPE scaling stretches the
	// context that far (guard.go's contextSize).
	ContextSize int
	// ChatTemplate, if set, replaces the model's own template (Jinja2 source).
	ChatTemplate string
	// Log, if set, gets one line per request.
	Log *log.Logger
	// Embedder, if set, answers POST /v1/embeddings and /api/embed (embed.go).
	Embedder *toy.Embedder
	// Draft, if set, is a smaller model over the same vocabulary that
	// guesses DraftTokens tokens ahead (default 8) for the model to check in
	// one pass: speculative decoding (engine.Speculator), as llama-server's
	// --model-draft. Replies are the same, only faster when it guesses well.
	Draft       *toy.Model
	DraftTokens int
	// Parallel is the number of slots, requests generating at once, each
	// over a KV cache of its own (made when first used) of ContextSize
	// positions (default 4; 1 with a Draft). Their steps run as one batched
	// forward pass when the model gives each row the logits it gives it
	// alone (checked at start), else one after another.
	Parallel int
	// Queue bounds the requests waiting for a slot (default 64); past it a
	// request gets 503 with Retry-After.
	Queue int
	// APIKeys, if any, are the keys a request must send as
	// "Authorization: Bearer KEY" (all but GET /health and GET /);
	// AllowedHosts are Host names allowed besides loopback ones and the
	// address a request came in on ("*": any); CORSOrigins are the origins
	// (scheme://host[:port], "*": any) allowed to call from a web page;
	// WriteTimeout bounds each write of a reply (default 30 s; negative:
	// none), past which the request is cancelled. See guard.go.
	APIKeys, AllowedHosts, CORSOrigins []string
	WriteTimeout                       time.Duration
}

// Server answers the OpenAI and Ollama endpoints for one model. It is an
// http.Handler.
type Server struct {
	model   *toy.Model
	name    string
	tmpl    *chat.Template // nil: chat.Plain
	tmplErr error          // why tmpl is nil
	created int64
	log     *log.Logger
	mux     *http.ServeMux

	turn    chan struct{} // holds one token while a request uses the embedder
	pool    *pool         // the slots
	work    chan work     // to the model's goroutine (nil with one slot)
	batched bool          // the slots' steps run as one forward pass
	ctxSize int

	draft       *toy.Model // speculative decoding's draft, or nil
	draftTokens int        // its guesses a round

	harmony    chat.HarmonyTokens // gpt-oss's format tokens
	hasHarmony bool               // the chat template writes harmony and the vocabulary has its tokens

	metrics *metrics // GET /metrics (metrics.go); nil for NewEmbedding
	guard   guard    // API keys, hosts, CORS, write deadline (guard.go)
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
	var err error
	if s.guard, err = newGuard(opts); err != nil {
		return nil, err
	}
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
	if s.tmpl != nil && s.tmpl.WritesHarmony() {
		s.harmony, s.hasHarmony = harmonyTokensOf(m.Tokenizer)
	}
	if s.ctxSize, err = contextSize(m, opts.ContextSize, opts.Draft != nil); err != nil { // guard.go
		return nil, err
	}
	s.draft, s.draftTokens = opts.Draft, opts.DraftTokens
	if s.draft != nil {
		if _, err := m.NewSpeculator(m.NewSession(1), s.draft, s.draftTokens); err != nil {
			return nil, fmt.Errorf("serve: %w", err)
		}
	}
	n := opts.Parallel
	if n <= 0 {
		n = 4
	}
	if s.draft != nil {
		n = 1 // the speculator runs its own passes
	}
	s.pool = &pool{maxQueue: cmp.Or(opts.Queue, 64)}
	for i := range n {
		s.pool.slots = append(s.pool.slots, &slot{id: i})
	}
	if n > 1 {
		s.work = make(chan work)
		s.batched = s.probeBatch()
		go s.runModel(s.work, nil) // the server lives as long as the process
	}

	s.mux = http.NewServeMux()
	s.mux.HandleFunc("POST /v1/chat/completions", s.handleChat)
	s.mux.HandleFunc("POST /v1/completions", s.handleCompletion)
	s.mux.HandleFunc("GET /v1/models", s.handleModels)
	s.mux.HandleFunc("GET /v1/models/{id...}", s.handleModel) // models.go
	s.mux.HandleFunc("POST /v1/responses", s.handleResponses) // responses.go
	s.mux.HandleFunc("GET /health", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 200, map[string]string{"status": "ok"})
	})
	s.mux.HandleFunc("POST /api/chat", s.handleOllamaChat)
	s.mux.HandleFunc("POST /api/generate", s.handleOllamaGenerate)
	s.mux.HandleFunc("GET /api/tags", s.handleOllamaTags)
	s.mux.HandleFunc("GET /api/ps", s.handleOllamaPS)
	s.mux.HandleFunc("POST /api/show", s.handleOllamaShow)
	s.mux.HandleFunc("GET /api/version", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 200, map[string]string{"version": ollamaVersion})
	})
	s.registerEmbed(opts.Embedder) // POST /v1/embeddings, POST /api/embed (embed.go)
	s.registerMetrics()            // GET /metrics, GET /slots (metrics.go)

	// The chat page for browsers, a text line for other clients (ui.go).
	s.mux.HandleFunc("GET /{$}", s.handleUI)
	return s, nil
}

// HasChatTemplate reports whether chat requests use a template (the
// model's or Options.ChatTemplate) rather than plain concatenation.
func (s *Server) HasChatTemplate() bool { return s.tmpl != nil }

// ToolCallFormat names the format tool calls are read back in, as the chat
// template writes them: "hermes" (Qwen), "llama3", "mistral", or "harmony"
// (gpt-oss's channels); "" when toy does not know it (replies to requests
// with tools are then content).
func (s *Server) ToolCallFormat() string {
	if f := detectToolFormat(s.tmpl); f != unknownFormat {
		return f.String()
	}
	if s.hasHarmony {
		return "harmony"
	}
	return ""
}

// ContextSize is the number of positions a request's prompt and reply share.
func (s *Server) ContextSize() int { return s.ctxSize }

// ServeHTTP routes a request; unknown paths get 404 and wrong methods 405,
// as Ollama-shaped JSON errors under /api/ and OpenAI-shaped ones elsewhere.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	w, r, done := s.watchWrites(w, r) // guard.go
	defer done()
	rec := &statusRecorder{ResponseWriter: w, status: 200}
	var pattern string // the route taken, for /metrics
	defer func() {
		if p := recover(); p != nil { // a bug in a forward pass: report it, keep serving
			if !rec.wrote {
				e := &apiError{Status: 500, Message: fmt.Sprintf("internal error: %v", p), Type: "server_error"}
				if isOllama(r) {
					writeOllamaError(rec, e)
				} else {
					writeError(rec, e)
				}
			}
		}
		if s.log != nil {
			s.log.Printf("%s %s %d %s", r.Method, r.URL.Path, rec.status, time.Since(start).Round(time.Millisecond))
		}
		s.metrics.request(pattern, rec.status)
	}()
	if !s.admit(rec, r) { // guard.go: Host, CORS, API key, Content-Type
		return
	}
	h, pattern := s.mux.Handler(r)
	if pattern == "" {
		status, msg := 404, fmt.Sprintf("no endpoint %s %s", r.Method, r.URL.Path)
		for _, p := range []string{"/v1/chat/completions", "/v1/completions", "/v1/models", "/health",
			"/api/chat", "/api/generate", "/api/tags", "/api/ps", "/api/show", "/api/version", "/v1/embeddings", "/api/embed",
			"/api/embeddings", "/v1/responses", "/metrics", "/slots"} {
			if r.URL.Path == p {
				status, msg = 405, fmt.Sprintf("%s does not accept %s", p, r.Method)
			}
		}
		e := &apiError{Status: status, Message: msg, Type: "invalid_request_error"}
		if isOllama(r) {
			writeOllamaError(rec, e)
		} else {
			writeError(rec, e)
		}
		return
	}
	h.ServeHTTP(rec, r)
}

func (s *Server) handleModels(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, 200, map[string]any{"object": "list", "data": []map[string]any{s.modelObject()}}) // models.go
}

// decode reads a JSON body strictly: one object, no unknown fields. The
// Content-Type was checked before (guard.go: JSON or none; forms are 415).
func decode(w http.ResponseWriter, r *http.Request, v any) *apiError {
	return decodeFrom(http.MaxBytesReader(w, r.Body, maxBody), v)
}

func decodeFrom(body io.Reader, v any) *apiError {
	dec := json.NewDecoder(body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var tooBig *http.MaxBytesError
		var typ *json.UnmarshalTypeError
		switch {
		case errors.As(err, &tooBig):
			return &apiError{Status: 413, Message: fmt.Sprintf("request body over %d bytes", maxBody), Type: "invalid_request_error"}
		case errors.As(err, &typ) && typ.Field != "":
			field := strings.TrimPrefix(typ.Field, "samplingRequest.") // the embedded struct's name is no JSON's
			return badRequest(field, "invalid JSON body: %s must be %s, not %s", field, jsonKind(typ.Type.Kind()), typ.Value)
		}
		if name, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok { // fields.go: a misspelling gets its correction
			name = strings.Trim(name, `"`)
			if near := suggest(v, name); near != "" {
				return badRequest(name, "invalid JSON body: unknown field %q: did you mean %q?", name, near)
			}
			return badRequest(name, "invalid JSON body: unknown field %q: toy does not know it", name)
		}
		return badRequest("", "invalid JSON body: %v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return badRequest("", "invalid JSON body: more than one value")
	}
	return nil
}

// jsonKind names what a Go kind is in JSON.
func jsonKind(k reflect.Kind) string {
	switch k {
	case reflect.Bool:
		return "a boolean"
	case reflect.String:
		return "a string"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "a list"
	case reflect.Map, reflect.Struct:
		return "an object"
	}
	return "another type"
}

func tokenizerOptions(addBOS bool) tokenizer.EncodeOptions {
	return tokenizer.EncodeOptions{AddBOS: addBOS, ParseSpecial: true}
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

// acquire waits for the embedder; false when ctx ends first.
func (s *Server) acquire(ctx context.Context) bool {
	select {
	case s.turn <- struct{}{}:
		return true
	case <-ctx.Done():
		return false
	}
}

func (s *Server) release() { <-s.turn }

// newSession gives slot sl a fresh session (after a panic left its cache in
// an unknown state, or for its first request), and its speculator with a
// draft.
func (s *Server) newSession(sl *slot) {
	sess := s.session() // guard.go: beyond the trained context where RoPE scaling allows
	sl.lm, sl.spec = sess, nil
	if s.draft != nil {
		sp, err := s.model.NewSpeculator(sess, s.draft, s.draftTokens)
		if err != nil {
			panic(err) // checked at New
		}
		sl.spec = sp
	}
}
