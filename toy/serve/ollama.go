// ollama.go: Ollama's API — /api/chat and /api/generate (newline-delimited
// JSON streams), /api/tags, /api/ps, /api/show and /api/version — over the
// same model, queue and KV cache as the OpenAI endpoints.

package serve

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/toyml/toy/toy/chat"
	"github.com/toyml/toy/toy/gguf"
	"github.com/toyml/toy/toy/grammar"
)

// ollamaVersion is the Ollama release whose API shapes these endpoints
// follow, what GET /api/version reports to clients that check it.
const ollamaVersion = "0.5.0"

// ollamaOptions are the Modelfile parameters a request may set.
type ollamaOptions struct {
	Temperature      *float32        `json:"temperature"`
	TopK             *int            `json:"top_k"`
	TopP             *float32        `json:"top_p"`
	MinP             *float32        `json:"min_p"`
	NumPredict       *int            `json:"num_predict"` // −1 or −2: until the context is full
	Seed             *int64          `json:"seed"`        // negative: a new one
	Stop             json.RawMessage `json:"stop"`
	RepeatPenalty    *float32        `json:"repeat_penalty"`
	RepeatLastN      *int            `json:"repeat_last_n"`
	PresencePenalty  *float32        `json:"presence_penalty"`
	FrequencyPenalty *float32        `json:"frequency_penalty"`
	NumCtx           *int            `json:"num_ctx"` // a limit on prompt plus reply, at most the server's context

	// Refused unless off: toy has no such samplers.
	Mirostat    *int     `json:"mirostat"`
	MirostatTau *float32 `json:"mirostat_tau"`
	MirostatEta *float32 `json:"mirostat_eta"`
	TypicalP    *float32 `json:"typical_p"`
	TFSZ        *float32 `json:"tfs_z"`

	// How Ollama runs the model; accepted and ignored.
	NumKeep         *int  `json:"num_keep"`
	NumBatch        *int  `json:"num_batch"`
	NumGPU          *int  `json:"num_gpu"`
	MainGPU         *int  `json:"main_gpu"`
	NumThread       *int  `json:"num_thread"`
	Numa            *bool `json:"numa"`
	LowVRAM         *bool `json:"low_vram"`
	VocabOnly       *bool `json:"vocab_only"`
	UseMMap         *bool `json:"use_mmap"`
	UseMLock        *bool `json:"use_mlock"`
	PenalizeNewline *bool `json:"penalize_newline"`
}

// ollamaMessage is one message of /api/chat. Tool calls carry their
// arguments as objects; a tool's reply names the tool, not the call.
type ollamaMessage struct {
	Role      string           `json:"role"`
	Content   string           `json:"content"`
	Images    []string         `json:"images,omitempty"`
	ToolCalls []ollamaToolCall `json:"tool_calls,omitempty"`
	ToolName  string           `json:"tool_name,omitempty"`
	Thinking  string           `json:"thinking,omitempty"` // in a request: the template's reasoning_content; in a reply: its reasoning (think true)
}

type ollamaToolCall struct {
	Function struct {
		Index     *int            `json:"index,omitempty"`
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	} `json:"function"`
}

type ollamaChatRequest struct {
	Model     string          `json:"model"`
	Messages  []ollamaMessage `json:"messages"`
	Tools     json.RawMessage `json:"tools"`
	Format    json.RawMessage `json:"format"`
	Options   *ollamaOptions  `json:"options"`
	Stream    *bool           `json:"stream"` // default true
	KeepAlive json.RawMessage `json:"keep_alive"`
	Think     json.RawMessage `json:"think"`
	ollamaLogprobsRequest
}

type ollamaGenerateRequest struct {
	Model     string          `json:"model"`
	Prompt    string          `json:"prompt"`
	Suffix    string          `json:"suffix"`
	Images    []string        `json:"images"`
	Format    json.RawMessage `json:"format"`
	Options   *ollamaOptions  `json:"options"`
	System    string          `json:"system"`
	Template  string          `json:"template"`
	Context   []int32         `json:"context"`
	Stream    *bool           `json:"stream"`
	Raw       bool            `json:"raw"`
	KeepAlive json.RawMessage `json:"keep_alive"`
	Think     json.RawMessage `json:"think"`
	ollamaLogprobsRequest
}

func isOllama(r *http.Request) bool { return strings.HasPrefix(r.URL.Path, "/api/") }

// writeOllamaError writes Ollama's error shape, {"error": "…"}.
func writeOllamaError(w http.ResponseWriter, e *apiError) {
	msg := e.Message
	if p, ok := e.Param.(string); ok && p != "" && !strings.Contains(msg, p) {
		msg = p + ": " + msg
	}
	writeJSON(w, e.Status, map[string]string{"error": msg})
}

// sampling maps the options onto the OpenAI request's fields, so that both
// APIs share their checks and defaults.
func (o *ollamaOptions) sampling() (*samplingRequest, *apiError) {
	r := &samplingRequest{}
	if o == nil {
		return r, nil
	}
	switch {
	case o.Mirostat != nil && *o.Mirostat != 0:
		return nil, badRequest("options.mirostat", "mirostat is not supported (only 0, off)")
	case o.TypicalP != nil && *o.TypicalP != 0 && *o.TypicalP != 1:
		return nil, badRequest("options.typical_p", "typical_p is not supported (only 1, off)")
	case o.TFSZ != nil && *o.TFSZ != 0 && *o.TFSZ != 1:
		return nil, badRequest("options.tfs_z", "tfs_z is not supported (only 1, off)")
	case o.NumPredict != nil && *o.NumPredict < -2:
		return nil, badRequest("options.num_predict", "num_predict must be ≥ 0, or -1 or -2 for no limit")
	case o.NumCtx != nil && *o.NumCtx < 1:
		return nil, badRequest("options.num_ctx", "num_ctx must be ≥ 1")
	}
	r.Temperature, r.TopK, r.TopP, r.MinP = o.Temperature, o.TopK, o.TopP, o.MinP
	r.RepeatPenalty, r.RepeatLastN = o.RepeatPenalty, o.RepeatLastN
	r.PresencePenalty, r.FrequencyPenalty = o.PresencePenalty, o.FrequencyPenalty
	r.Stop = o.Stop
	if o.NumPredict != nil && *o.NumPredict >= 0 {
		r.MaxTokens = o.NumPredict
	}
	if o.Seed != nil && *o.Seed >= 0 {
		seed := uint64(*o.Seed)
		r.Seed = &seed
	}
	if e := r.check(); e != nil {
		e.Param = "options." + fmt.Sprint(e.Param)
		return nil, e
	}
	return r, nil
}

// ollamaJob builds the job of either endpoint from its options and prompt.
func (s *Server) ollamaJob(o *ollamaOptions, prompt []int32) (*job, *apiError) {
	r, e := o.sampling()
	if e != nil {
		return nil, e
	}
	stops, e := r.stops()
	if e != nil {
		return nil, e
	}
	p, e := r.params(s.model.VocabSize())
	if e != nil {
		return nil, e
	}
	limit, limitName := s.ctxSize, ""
	if o != nil && o.NumCtx != nil && *o.NumCtx < s.ctxSize {
		limit, limitName = *o.NumCtx, "num_ctx"
	}
	n, e := s.budget(len(prompt), r.maxTokens(), limit, limitName)
	if e != nil {
		return nil, e
	}
	return &job{prompt: prompt, choices: 1, maxTokens: n, sample: p, stops: stops}, nil
}

// jsonFormat reads format: absent or "" for text, "json" for a JSON object
// (grammar.JSON), a JSON schema for a value of it (grammar.Schema).
func jsonFormat(raw json.RawMessage) (asJSON bool, schema *grammar.Schema, e *apiError) {
	switch string(raw) {
	case "", "null", `""`:
		return false, nil, nil
	case `"json"`:
		return true, nil, nil
	}
	if len(raw) > 0 && raw[0] == '{' {
		s, err := grammar.CompileSchema(raw)
		if err != nil {
			return false, nil, badRequest("format", "format: %v", err)
		}
		return true, s, nil
	}
	return false, nil, badRequest("format", `format %s: want "json" or a JSON schema`, raw)
}

// thinkVar reads think: a boolean, passed to the template as
// enable_thinking, or gpt-oss's "low", "medium" or "high", passed as
// reasoning_effort (and thinking on).
func thinkVar(raw json.RawMessage, vars map[string]any) *apiError {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	var on bool
	if json.Unmarshal(raw, &on) != nil {
		var level string
		if json.Unmarshal(raw, &level) != nil || (level != "low" && level != "medium" && level != "high") {
			return badRequest("think", `think must be true, false, "low", "medium" or "high"`)
		}
		vars["reasoning_effort"], on = level, true
	}
	vars["enable_thinking"] = on
	return nil
}

func (s *Server) handleOllamaChat(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	var req ollamaChatRequest
	if e := decode(w, r, &req); e != nil {
		writeOllamaError(w, e)
		return
	}
	if len(req.Messages) == 0 { // Ollama's way to load a model: it is loaded
		writeJSON(w, 200, &ollamaResponse{Model: s.ollamaName(req.Model), CreatedAt: now(),
			Message: &ollamaMessage{Role: "assistant"}, Done: true, DoneReason: loadReason(req.KeepAlive)})
		return
	}
	j, e := s.ollamaChatJob(&req)
	if e != nil {
		writeOllamaError(w, e)
		return
	}
	s.answerOllama(w, r, j, &ollamaSink{chat: true, model: s.ollamaName(req.Model), streaming: req.Stream == nil || *req.Stream}, start, false)
}

func (s *Server) ollamaChatJob(req *ollamaChatRequest) (*job, *apiError) {
	asJSON, schema, e := jsonFormat(req.Format)
	if e != nil {
		return nil, e
	}
	opts := s.model.ChatOptions(true)
	opts.Vars = map[string]any{}
	if e := thinkVar(req.Think, opts.Vars); e != nil {
		return nil, e
	}
	msgs, e := ollamaMessages(req.Messages)
	if e != nil {
		return nil, e
	}
	tools, e := s.setupTools(req.Tools, toolChoice{mode: "auto"}, nil)
	if e != nil {
		return nil, e
	}
	ids, e := s.encodeChat(msgs, opts, tools)
	if e != nil {
		return nil, e
	}
	j, e := s.ollamaJob(req.Options, ids)
	if e != nil {
		return nil, e
	}
	if asJSON && tools.calls != nil {
		return nil, badRequest("format", `format "json" with tools is not supported: a tool call is not the JSON object the format asks for`)
	}
	j.tools, j.json, j.schema = tools.calls, asJSON, schema
	if e := req.setLogprobs(j); e != nil { // ollama_logprobs.go
		return nil, e
	}
	if s.hasHarmony {
		j.harmony = &s.harmony // gpt-oss: its analysis is message.thinking
	} else if think, _ := opts.Vars["enable_thinking"].(bool); think && !asJSON {
		j.think, j.thinkOpen = true, s.opensThink(ids) // think: true puts the reasoning in message.thinking
	}
	return j, nil
}

// ollamaMessages converts /api/chat's messages for the template. Ollama's
// calls have no ids, and its tool replies name the tool: the calls get ids
// (call00001 …, nine letters and digits, which every template accepts) and
// each tool reply the id of the earliest call not yet answered.
func ollamaMessages(in []ollamaMessage) ([]chat.Message, *apiError) {
	out := make([]chat.Message, len(in))
	var open []string // ids of calls not yet answered
	n := 0
	for i, m := range in {
		param := fmt.Sprintf("messages[%d]", i)
		switch m.Role {
		case "system", "user", "assistant", "tool":
		default:
			return nil, badRequest(param+".role", "unknown role %q: want system, user, assistant or tool", m.Role)
		}
		if len(m.Images) > 0 {
			return nil, badRequest(param+".images", "images are not supported: toy's models read text")
		}
		msg := chat.Message{Role: m.Role, Content: m.Content, ReasoningContent: m.Thinking}
		if len(m.ToolCalls) > 0 && m.Role != "assistant" {
			return nil, badRequest(param+".tool_calls", "only assistant messages carry tool_calls")
		}
		for k, c := range m.ToolCalls {
			if c.Function.Name == "" {
				return nil, badRequest(fmt.Sprintf("%s.tool_calls[%d].function.name", param, k), "a tool call needs function.name")
			}
			args := c.Function.Arguments
			if len(args) > 0 && !json.Valid(args) {
				return nil, badRequest(fmt.Sprintf("%s.tool_calls[%d].function.arguments", param, k), "arguments must be JSON")
			}
			n++
			id := fmt.Sprintf("call%05d", n)
			open = append(open, id)
			msg.ToolCalls = append(msg.ToolCalls, chat.ToolCall{ID: id, Type: "function",
				Function: chat.FunctionCall{Name: c.Function.Name, Arguments: args}})
		}
		if m.Role == "tool" {
			msg.Name = m.ToolName
			if len(open) > 0 {
				msg.ToolCallID, open = open[0], open[1:]
			}
		}
		out[i] = msg
	}
	return out, nil
}

func (s *Server) handleOllamaGenerate(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	var req ollamaGenerateRequest
	if e := decode(w, r, &req); e != nil {
		writeOllamaError(w, e)
		return
	}
	if req.Prompt == "" && len(req.Context) == 0 { // Ollama's way to load a model
		empty := ""
		writeJSON(w, 200, &ollamaResponse{Model: s.ollamaName(req.Model), CreatedAt: now(), Response: &empty,
			Done: true, DoneReason: loadReason(req.KeepAlive)})
		return
	}
	j, e := s.ollamaGenerateJob(&req)
	if e != nil {
		writeOllamaError(w, e)
		return
	}
	s.answerOllama(w, r, j, &ollamaSink{model: s.ollamaName(req.Model), streaming: req.Stream == nil || *req.Stream}, start, !req.Raw)
}

func (s *Server) ollamaGenerateJob(req *ollamaGenerateRequest) (*job, *apiError) {
	switch {
	case len(req.Images) > 0:
		return nil, badRequest("images", "images are not supported: toy's models read text")
	case req.Suffix != "":
		return nil, badRequest("suffix", "suffix (fill in the middle) is not supported")
	case req.Template != "":
		return nil, badRequest("template", "template is not supported: toy renders the model's own Jinja chat template (toy serve --chat-template-file replaces it)")
	}
	asJSON, schema, e := jsonFormat(req.Format)
	if e != nil {
		return nil, e
	}
	for _, id := range req.Context {
		if id < 0 || int(id) >= s.model.VocabSize() {
			return nil, badRequest("context", "token id %d out of range (vocabulary has %d tokens)", id, s.model.VocabSize())
		}
	}
	tok := s.model.Tokenizer
	var ids []int32
	if req.Raw {
		ids = tok.Encode(req.Prompt, tokenizerOptions(tok.AddBOS() && len(req.Context) == 0))
	} else {
		var msgs []chat.Message
		if req.System != "" {
			msgs = append(msgs, chat.Message{Role: "system", Content: req.System})
		}
		msgs = append(msgs, chat.Message{Role: "user", Content: req.Prompt})
		opts := s.model.ChatOptions(true)
		opts.Vars = map[string]any{}
		if e := thinkVar(req.Think, opts.Vars); e != nil {
			return nil, e
		}
		var e *apiError
		if ids, e = s.encodeChat(msgs, opts, toolSetup{}); e != nil {
			return nil, e
		}
		if len(req.Context) > 0 && len(ids) > 0 && ids[0] == tok.BOS() && tok.BOS() >= 0 {
			ids = ids[1:] // the context starts with it already
		}
	}
	prompt := append(append([]int32(nil), req.Context...), ids...)
	if len(prompt) == 0 {
		return nil, badRequest("prompt", "the prompt is empty")
	}
	j, e := s.ollamaJob(req.Options, prompt)
	if e == nil {
		j.json, j.schema = asJSON, schema
		e = req.setLogprobs(j) // ollama_logprobs.go
	}
	return j, e
}

// answerOllama runs j and writes Ollama's answer, streamed as
// newline-delimited JSON or whole. withContext adds the token ids of prompt
// and reply (/api/generate without raw).
func (s *Server) answerOllama(w http.ResponseWriter, r *http.Request, j *job, o *ollamaSink, start time.Time, withContext bool) {
	o.w = w
	res, err := s.generate(r.Context(), j, o)
	if err != nil {
		if r.Context().Err() != nil {
			return
		}
		e := generateError(w, err)
		if o.started {
			o.send(map[string]string{"error": e.Message})
			return
		}
		writeOllamaError(w, e)
		return
	}
	c := res.choices[0]
	final := o.message("", "", nil)
	if !o.streaming {
		final = o.message(c.content, c.reasoning, c.calls)
		if c.logp {
			final.Logprobs = ollamaLogprobsOf(c.lps)
		}
	}
	final.Done, final.DoneReason = true, "stop"
	if c.reason == "length" {
		final.DoneReason = "length"
	}
	final.ollamaStats = &ollamaStats{
		TotalDuration: time.Since(start).Nanoseconds(), PromptEvalCount: res.prompt,
		PromptEvalDuration: res.prefillTime.Nanoseconds(), EvalCount: res.generated, EvalDuration: res.decodeTime.Nanoseconds(),
	}
	if withContext {
		ids := c.ids
		if c.eog {
			ids = ids[:len(ids)-1]
		}
		final.Context = append(append([]int32{}, j.prompt...), ids...)
	}
	if o.streaming {
		o.send(final)
		return
	}
	writeJSON(w, 200, final)
}

// ollamaResponse is one object of /api/chat's or /api/generate's answer.
type ollamaResponse struct {
	Model      string          `json:"model"`
	CreatedAt  string          `json:"created_at"`
	Message    *ollamaMessage  `json:"message,omitempty"`  // /api/chat
	Response   *string         `json:"response,omitempty"` // /api/generate
	Done       bool            `json:"done"`
	DoneReason string          `json:"done_reason,omitempty"`
	Logprobs   []ollamaLogprob `json:"logprobs,omitempty"` // logprobs: true (ollama_logprobs.go)
	*ollamaStats
	Context []int32 `json:"context,omitempty"`
}

// ollamaStats are the last object's counts and durations (nanoseconds).
type ollamaStats struct {
	TotalDuration      int64 `json:"total_duration"`
	LoadDuration       int64 `json:"load_duration"` // 0: the model stays loaded
	PromptEvalCount    int   `json:"prompt_eval_count"`
	PromptEvalDuration int64 `json:"prompt_eval_duration"`
	EvalCount          int   `json:"eval_count"`
	EvalDuration       int64 `json:"eval_duration"`
}

// ollamaSink streams a generation as newline-delimited JSON objects.
type ollamaSink struct {
	w         http.ResponseWriter
	f         http.Flusher
	chat      bool // /api/chat's message, not /api/generate's response
	model     string
	streaming bool
	started   bool
}

func (o *ollamaSink) queued() { o.start(0) }

func (o *ollamaSink) start(int) {
	if !o.streaming || o.started {
		return
	}
	o.w.Header().Set("Content-Type", "application/x-ndjson")
	o.w.WriteHeader(200)
	o.f, _ = o.w.(http.Flusher)
	if o.f != nil {
		o.f.Flush()
	}
	o.started = true
}

func (o *ollamaSink) text(_ int, text, reasoning string, lps []tokenLogprob) {
	if o.streaming && (text != "" || reasoning != "" || len(lps) > 0) {
		m := o.message(text, reasoning, nil)
		m.Logprobs = ollamaLogprobsOf(lps)
		o.send(m)
	}
}

func (o *ollamaSink) end(_ int, c *choice) {
	if !o.streaming {
		return
	}
	if text, reasoning, lps := c.rest(); text != "" || reasoning != "" || len(lps) > 0 {
		m := o.message(text, reasoning, nil)
		m.Logprobs = ollamaLogprobsOf(lps)
		o.send(m)
	}
	if len(c.calls) > 0 && o.chat {
		o.send(o.message("", "", c.calls))
	}
}

// message is one object of the answer, done false: text as the message or
// the response, its reasoning (chat's thinking), and the calls (chat only).
func (o *ollamaSink) message(text, reasoning string, calls []toolCall) *ollamaResponse {
	r := &ollamaResponse{Model: o.model, CreatedAt: now()}
	if !o.chat {
		r.Response = &text
		return r
	}
	r.Message = &ollamaMessage{Role: "assistant", Content: text, Thinking: reasoning}
	for _, c := range calls {
		var oc ollamaToolCall
		oc.Function.Name, oc.Function.Arguments = c.Name, json.RawMessage(c.Arguments)
		r.Message.ToolCalls = append(r.Message.ToolCalls, oc)
	}
	return r
}

func (o *ollamaSink) send(v any) {
	enc := json.NewEncoder(o.w)
	enc.SetEscapeHTML(false)
	enc.Encode(v) // one line
	if o.f != nil {
		o.f.Flush()
	}
}

func now() string { return time.Now().UTC().Format(time.RFC3339Nano) }

// loadReason is the done_reason of a request without a prompt: keep_alive 0
// asks Ollama to unload the model (toy keeps it; the answer is Ollama's).
func loadReason(keepAlive json.RawMessage) string {
	switch strings.Trim(string(keepAlive), `"`) {
	case "0", "0s", "0m":
		return "unload"
	}
	return "load"
}

// ollamaName is the model name an answer carries: the one asked for, else
// the server's.
func (s *Server) ollamaName(asked string) string {
	if asked != "" {
		return asked
	}
	return s.tagName()
}

// tagName is the server's model as Ollama names models, "name:tag".
func (s *Server) tagName() string {
	if strings.Contains(s.name, ":") {
		return s.name
	}
	return s.name + ":latest"
}

// fileFacts are the size, time and an identifying digest of the model file
// (the digest hashes its path, size and time, not its contents).
func (s *Server) fileFacts() (size int64, modified time.Time, digest string) {
	modified = time.Unix(s.created, 0)
	if fi, err := os.Stat(s.model.Path); err == nil {
		size, modified = fi.Size(), fi.ModTime()
	}
	sum := sha256.Sum256([]byte(fmt.Sprintf("%s\x00%d\x00%d", s.model.Path, size, modified.UnixNano())))
	return size, modified, hex.EncodeToString(sum[:])
}

func (s *Server) ollamaDetails() map[string]any {
	return map[string]any{"parent_model": "", "format": "gguf", "family": s.model.Arch, "families": []string{s.model.Arch},
		"parameter_size": paramSize(s.model.File.ParamCount()), "quantization_level": s.model.File.Quant()}
}

// paramSize writes a parameter count as Ollama does: "1.4M", "135M", "8.0B".
func paramSize(n int64) string {
	switch {
	case n >= 1e9:
		return fmt.Sprintf("%.1fB", float64(n)/1e9)
	case n >= 1e7:
		return fmt.Sprintf("%.0fM", float64(n)/1e6)
	case n >= 1e6:
		return fmt.Sprintf("%.1fM", float64(n)/1e6)
	}
	return fmt.Sprintf("%.0fK", float64(n)/1e3)
}

func (s *Server) handleOllamaTags(w http.ResponseWriter, r *http.Request) {
	size, modified, digest := s.fileFacts()
	writeJSON(w, 200, map[string]any{"models": []map[string]any{{
		"name": s.tagName(), "model": s.tagName(), "modified_at": modified.Format(time.RFC3339Nano),
		"size": size, "digest": digest, "details": s.ollamaDetails(),
	}}})
}

func (s *Server) handleOllamaPS(w http.ResponseWriter, r *http.Request) {
	size, _, digest := s.fileFacts()
	writeJSON(w, 200, map[string]any{"models": []map[string]any{{
		"name": s.tagName(), "model": s.tagName(), "size": size, "digest": digest, "details": s.ollamaDetails(),
		"expires_at": time.Now().Add(100 * 365 * 24 * time.Hour).UTC().Format(time.RFC3339), // loaded for good
		"size_vram":  0, "context_length": s.ctxSize,
	}}})
}

func (s *Server) handleOllamaShow(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Model   string `json:"model"`
		Name    string `json:"name"` // the older field
		Verbose bool   `json:"verbose"`
	}
	if e := decode(w, r, &req); e != nil {
		writeOllamaError(w, e)
		return
	}
	_, modified, _ := s.fileFacts()
	info := map[string]any{"general.parameter_count": s.model.File.ParamCount()}
	for _, kv := range s.model.File.KV {
		if kv.Key == "tokenizer.chat_template" {
			continue // it is "template"
		}
		if kv.Value.Type == gguf.TypeArray && !req.Verbose {
			info[kv.Key] = []any{} // token lists and merges: with verbose
			continue
		}
		if _, nested := kv.Value.V.([]gguf.Value); nested {
			info[kv.Key] = []any{}
			continue
		}
		info[kv.Key] = kv.Value.V
	}
	template := ""
	if s.tmpl != nil {
		template = s.tmpl.Source()
	}
	caps := []string{"completion"}
	if s.ToolCallFormat() != "" {
		caps = append(caps, "tools")
	}
	if strings.Contains(template, "enable_thinking") || s.hasHarmony { // gpt-oss reasons in its analysis channel
		caps = append(caps, "thinking")
	}
	writeJSON(w, 200, map[string]any{
		"modelfile":    fmt.Sprintf("# served by toy serve\nFROM %s\n", s.model.Path),
		"parameters":   "",
		"template":     template,
		"details":      s.ollamaDetails(),
		"model_info":   info,
		"capabilities": caps,
		"modified_at":  modified.Format(time.RFC3339Nano),
	})
}
