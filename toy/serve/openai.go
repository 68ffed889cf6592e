// openai.go: the OpenAI endpoints — /v1/chat/completions and
// /v1/completions, answered whole or as server-sent events.

package serve

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/toyml/toy/toy/chat"
	"github.com/toyml/toy/toy/grammar"
)

func (s *Server) handleChat(w http.ResponseWriter, r *http.Request) {
	var req chatRequest
	if e := decode(w, r, &req); e != nil {
		writeError(w, e)
		return
	}
	j, e := s.chatJob(&req)
	if e != nil {
		writeError(w, e)
		return
	}
	s.answerOpenAI(w, r, &req.samplingRequest, j, true)
}

// chatJob checks a chat request and renders its prompt.
func (s *Server) chatJob(req *chatRequest) (*job, *apiError) {
	if e := req.check(); e != nil {
		return nil, e
	}
	asJSON, schema := false, (*grammar.Schema)(nil)
	if rf := req.ResponseFormat; rf != nil {
		switch rf.Type {
		case "text":
		case "json_object":
			asJSON = true
			if len(rf.Schema) > 0 && string(rf.Schema) != "null" {
				s, err := grammar.CompileSchema(rf.Schema)
				if err != nil {
					return nil, badRequest("response_format", "response_format.schema: %v", err)
				}
				schema = s
			}
		case "json_schema":
			if rf.JSONSchema == nil || len(rf.JSONSchema.Schema) == 0 {
				return nil, badRequest("response_format", `response_format "json_schema" needs json_schema.schema`)
			}
			s, err := grammar.CompileSchema(rf.JSONSchema.Schema)
			if err != nil {
				return nil, badRequest("response_format", "response_format.json_schema.schema: %v", err)
			}
			asJSON, schema = true, s
		default:
			return nil, badRequest("response_format", `response_format %q: want "text", "json_object" or "json_schema"`, rf.Type)
		}
	}
	if asJSON && req.Grammar != "" {
		return nil, badRequest("grammar", "grammar with response_format json is not supported: give one of them")
	}
	if asJSON && len(req.JSONSchema) > 0 {
		return nil, badRequest("json_schema", "json_schema with response_format json is not supported: give one of them")
	}
	switch req.ReasoningFormat {
	case "", "auto", "deepseek", "none":
	default:
		return nil, badRequest("reasoning_format", `reasoning_format %q: want "auto", "deepseek" or "none"`, req.ReasoningFormat)
	}
	logp, top, e := req.logprobs()
	if e != nil {
		return nil, e
	}
	msgs, e := req.messages()
	if e != nil {
		return nil, e
	}
	choice, e := parseToolChoice(req.ToolChoice)
	if e != nil {
		return nil, e
	}
	tools, e := s.setupTools(req.Tools, choice, req.ParallelToolCalls)
	if e != nil {
		return nil, e
	}
	opts := s.model.ChatOptions(req.AddGenerationPrompt == nil || *req.AddGenerationPrompt)
	opts.Vars = map[string]any{}
	switch req.ReasoningEffort {
	case "":
	case "low", "medium", "high":
		opts.Vars["reasoning_effort"] = req.ReasoningEffort // gpt-oss's template reads it
	default:
		return nil, badRequest("reasoning_effort", `reasoning_effort %q: want "low", "medium" or "high"`, req.ReasoningEffort)
	}
	for k, v := range req.ChatTemplateKwargs {
		b, _ := json.Marshal(v)
		opts.Vars[k], _ = chat.FromJSON(b)
	}
	ids, e := s.encodeChat(msgs, opts, tools)
	if e != nil {
		return nil, e
	}
	j, e := s.openaiJob(&req.samplingRequest, ids)
	if e != nil {
		return nil, e
	}
	if asJSON {
		j.json, j.schema = asJSON, schema
	}
	if j.json && tools.calls != nil {
		return nil, badRequest("response_format", `response_format "json_object" with tools is not supported: a tool call is not the JSON object it asks for`)
	}
	if j.gbnf != nil && tools.calls != nil {
		return nil, badRequest("grammar", "grammar with tools is not supported: a tool call is not in the grammar")
	}
	if tools.call != nil && (j.json || j.gbnf != nil) {
		return nil, badRequest("tool_choice", "tool_choice %q with response_format json, json_schema or grammar is not supported: the reply is to be a tool call", choice.mode)
	}
	j.logprobs, j.topLogprobs = logp, top
	j.tools, j.prefill, j.args, j.call = tools.calls, tools.prefill, tools.args, tools.call
	switch {
	case s.hasHarmony:
		j.harmony = &s.harmony
	case req.ReasoningFormat != "none" && !j.json && j.gbnf == nil && j.args == nil:
		j.think, j.thinkOpen = true, s.opensThink(ids)
	}
	return j, nil
}

// encodeChat renders messages with the template (the tools offered among
// its variables) and encodes the prompt, the opening of a forced tool call
// after it (after an empty reasoning when the template opened one).
func (s *Server) encodeChat(msgs []chat.Message, opts chat.Options, tools toolSetup) ([]int32, *apiError) {
	if tools.vars != nil {
		if opts.Vars == nil {
			opts.Vars = map[string]any{}
		}
		opts.Vars["tools"] = tools.vars
	}
	ids, err := s.model.EncodeChat(s.tmpl, msgs, opts)
	if err != nil {
		return nil, badRequest("messages", "%v", err)
	}
	if tools.prefill != "" {
		if s.opensThink(ids) && !s.hasHarmony { // the template opened a reasoning (Qwen3.5, DeepSeek-R1): a forced call closes it empty
			ids = append(ids, s.model.Tokenizer.Encode("\n"+thinkClose+"\n\n", tokenizerOptions(false))...)
		}
		ids = append(ids, s.model.Tokenizer.Encode(tools.prefill, tokenizerOptions(false))...)
	}
	if len(ids) == 0 { // a model without a template (and BOS) given empty contents
		return nil, badRequest("messages", "the messages make an empty prompt: give some content")
	}
	return ids, nil
}

func (s *Server) handleCompletion(w http.ResponseWriter, r *http.Request) {
	var req completionRequest
	if e := decode(w, r, &req); e != nil {
		writeError(w, e)
		return
	}
	j, e := s.completionJob(&req)
	if e != nil {
		writeError(w, e)
		return
	}
	s.answerOpenAI(w, r, &req.samplingRequest, j, false)
}

func (s *Server) completionJob(req *completionRequest) (*job, *apiError) {
	if e := req.check(); e != nil {
		return nil, e
	}
	if req.Echo {
		return nil, badRequest("echo", "echo is not supported")
	}
	logp, top, e := req.logprobs()
	if e != nil {
		return nil, e
	}
	ids, e := s.promptIDs(req.Prompt)
	if req.Suffix != "" {
		ids, e = s.fimIDs(req.Prompt, req.Suffix) // fim.go
	}
	if e != nil {
		return nil, e
	}
	j, e := s.openaiJob(&req.samplingRequest, ids)
	if e != nil {
		return nil, e
	}
	j.logprobs, j.topLogprobs = logp, top
	return j, nil
}

// openaiJob fills in what both OpenAI endpoints share.
func (s *Server) openaiJob(r *samplingRequest, prompt []int32) (*job, *apiError) {
	stops, e := r.stops()
	if e != nil {
		return nil, e
	}
	p, e := r.params(s.model.VocabSize())
	if e != nil {
		return nil, e
	}
	var gbnf *grammar.GBNF
	if r.Grammar != "" {
		g, err := grammar.ParseGBNF(r.Grammar, s.model.Tokenizer)
		if err != nil {
			return nil, badRequest("grammar", "%v", err)
		}
		gbnf = g
	}
	var schema *grammar.Schema
	if len(r.JSONSchema) > 0 && string(r.JSONSchema) != "null" {
		if gbnf != nil {
			return nil, badRequest("json_schema", "json_schema with grammar is not supported: give one of them")
		}
		sch, err := grammar.CompileSchema(r.JSONSchema)
		if err != nil {
			return nil, badRequest("json_schema", "json_schema: %v", err)
		}
		schema = sch
	}
	n, e := s.budget(len(prompt), r.maxTokens(), s.ctxSize, "")
	if e != nil {
		return nil, e
	}
	j := &job{prompt: prompt, choices: r.choices(), maxTokens: n, sample: p, stops: stops, gbnf: gbnf,
		json: schema != nil, schema: schema}
	r.clientFields.apply(j)
	return j, nil
}

// budget checks that a prompt fits in limit positions and returns how many
// tokens a reply may have: the rest, or maxTokens (≥ 0) when fewer.
func (s *Server) budget(prompt, maxTokens, limit int, limitName string) (int, *apiError) {
	if prompt >= limit {
		why := fmt.Sprintf("the context %d: shorten it, or start the server with a larger --ctx (the model was trained on %d)", limit, s.model.ContextLength())
		if limitName != "" {
			why = fmt.Sprintf("%s %d: shorten it, or raise %s (up to the server's --ctx, %d)", limitName, limit, limitName, s.ctxSize)
		}
		return 0, &apiError{Status: 400, Type: "invalid_request_error", Code: "context_length_exceeded",
			Message: fmt.Sprintf("the prompt is %d tokens and %s", prompt, why)}
	}
	n := limit - prompt
	if maxTokens >= 0 {
		n = min(n, maxTokens)
	}
	return n, nil
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

// answerOpenAI runs j and writes the response, whole or streamed.
func (s *Server) answerOpenAI(w http.ResponseWriter, r *http.Request, req *samplingRequest, j *job, isChat bool) {
	id, object := newID("cmpl"), "text_completion"
	if isChat {
		id, object = newID("chatcmpl"), "chat.completion"
		if req.Stream {
			object = "chat.completion.chunk"
		}
	}
	o := &openaiSink{w: w, isChat: isChat, streaming: req.Stream, choices: j.choices, logprobs: j.logprobs,
		base: response{ID: id, Object: object, Created: time.Now().Unix(), Model: s.name, SystemFingerprint: "toy"}}
	res, err := s.generate(r.Context(), j, o)
	if err != nil {
		if r.Context().Err() != nil {
			return // the client went away; nothing to answer
		}
		e := generateError(w, err)
		if o.sse != nil {
			o.sse.send(map[string]*apiError{"error": e})
			return
		}
		writeError(w, e)
		return
	}
	u := &usage{PromptTokens: res.prompt, CompletionTokens: res.generated, TotalTokens: res.prompt + res.generated}
	u.PromptTokensDetails.CachedTokens = res.cached
	t := &timings{PromptN: res.prompt - res.cached, PromptMS: ms(res.prefillTime), PredictedN: res.generated,
		PredictedMS: ms(res.prefillTime + res.decodeTime), PredictedPerSecond: perSecond(res),
		DraftN: res.drafted, DraftNAccepted: res.accepted}
	if req.Stream {
		o.sse.send(withTimings(o.last, t))
		if req.StreamOptions != nil && req.StreamOptions.IncludeUsage {
			end := o.base
			end.Choices, end.Usage = []any{}, u
			o.sse.send(end)
		}
		o.sse.done()
		return
	}
	resp := o.base
	resp.Usage = u
	if isChat {
		var choices []chatChoice
		for _, c := range res.choices {
			m := &responseMessage{Role: "assistant", Content: &c.content, ReasoningContent: c.reasoning}
			if len(c.calls) > 0 {
				m.ToolCalls = wireCalls(c.calls, false)
				if c.content == "" {
					m.Content = nil
				}
			}
			ch := chatChoice{Index: c.index, Message: m, FinishReason: &c.reason}
			if c.logp {
				ch.Logprobs = chatLogprobsOf(c.lps)
			}
			choices = append(choices, ch)
		}
		resp.Choices = choices
	} else {
		var choices []textChoice
		for _, c := range res.choices {
			ch := textChoice{Index: c.index, Text: c.content, FinishReason: &c.reason}
			if c.logp {
				ch.Logprobs = textLogprobsOf(c.lps)
			}
			choices = append(choices, ch)
		}
		resp.Choices = choices
	}
	writeJSON(w, 200, withTimings(resp, t))
}

// openaiSink streams a generation as server-sent events; when not
// streaming it leaves the answer to answerOpenAI.
type openaiSink struct {
	w         http.ResponseWriter
	isChat    bool
	streaming bool
	logprobs  bool
	choices   int
	base      response
	sse       *sse     // started with the first choice
	last      response // the last choice's finish chunk, sent with the timings
}

func (o *openaiSink) queued() {
	if o.streaming && o.sse == nil {
		o.sse = newSSE(o.w) // the client hears at once that its request is taken
	}
}

func (o *openaiSink) start(i int) {
	if !o.streaming {
		return
	}
	if o.sse == nil {
		o.sse = newSSE(o.w)
	}
	if o.isChat {
		empty := ""
		o.sse.send(o.chunk(i, &responseDelta{Role: "assistant", Content: &empty}, nil, nil))
	}
}

func (o *openaiSink) text(i int, text, reasoning string, lps []tokenLogprob) {
	if !o.streaming {
		return
	}
	if reasoning != "" {
		o.sse.send(o.chunk(i, &responseDelta{ReasoningContent: &reasoning}, nil, nil))
	}
	if text != "" || len(lps) > 0 {
		o.sse.send(o.chunk(i, &responseDelta{Content: &text}, lps, nil))
	}
}

func (o *openaiSink) end(i int, c *choice) {
	if !o.streaming {
		return
	}
	text, reasoning, lps := c.rest()
	var final response
	if o.isChat {
		if reasoning != "" {
			o.sse.send(o.chunk(i, &responseDelta{ReasoningContent: &reasoning}, nil, nil))
		}
		if text != "" || len(lps) > 0 {
			o.sse.send(o.chunk(i, &responseDelta{Content: &text}, lps, nil))
		}
		if len(c.calls) > 0 {
			o.sse.send(o.chunk(i, &responseDelta{ToolCalls: wireCalls(c.calls, true)}, nil, nil))
		}
		final = o.chunk(i, &responseDelta{}, nil, &c.reason)
	} else {
		final = o.chunk(i, &responseDelta{Content: &text}, lps, &c.reason)
	}
	if i < o.choices-1 {
		o.sse.send(final)
	} else {
		o.last = final
	}
}

// chunk is one streamed event for choice i.
func (o *openaiSink) chunk(i int, delta *responseDelta, lps []tokenLogprob, finish *string) response {
	c := o.base
	if o.isChat {
		ch := chatChoice{Index: i, Delta: delta, FinishReason: finish}
		if o.logprobs && len(lps) > 0 {
			ch.Logprobs = chatLogprobsOf(lps)
		}
		c.Choices = []chatChoice{ch}
		return c
	}
	text := ""
	if delta.Content != nil {
		text = *delta.Content
	}
	ch := textChoice{Index: i, Text: text, FinishReason: finish}
	if o.logprobs && len(lps) > 0 {
		ch.Logprobs = textLogprobsOf(lps)
	}
	c.Choices = []textChoice{ch}
	return c
}

// timings are llama-server's speed figures, which some clients show.
type timings struct {
	PromptN            int     `json:"prompt_n"`
	PromptMS           float64 `json:"prompt_ms"`
	PredictedN         int     `json:"predicted_n"`
	PredictedMS        float64 `json:"predicted_ms"`
	PredictedPerSecond float64 `json:"predicted_per_second"`
	// With a draft model: its guesses, and those the model kept.
	DraftN         int `json:"draft_n,omitempty"`
	DraftNAccepted int `json:"draft_n_accepted,omitempty"`
}

// withTimings adds llama-server's "timings" field to a response.
func withTimings(r response, t *timings) any {
	return struct {
		response
		Timings *timings `json:"timings"`
	}{r, t}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// perSecond is the decode speed: tokens after each choice's first, over the
// time after the prompt.
func perSecond(res *outcome) float64 {
	n := res.generated - len(res.choices)
	if n <= 0 || res.decodeTime <= 0 {
		return 0
	}
	return float64(n) / res.decodeTime.Seconds()
}

// sse writes server-sent events: "data: {json}\n\n", flushed each time.
type sse struct {
	w http.ResponseWriter
	f http.Flusher
}

func newSSE(w http.ResponseWriter) *sse {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(200)
	f, _ := w.(http.Flusher)
	if f != nil {
		f.Flush() // the headers go at once: the client knows its request is taken
	}
	return &sse{w: w, f: f}
}

func (s *sse) send(v any) {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // "<|im_end|>" stays readable
	enc.Encode(v)
	fmt.Fprintf(s.w, "data: %s\n\n", strings.TrimSuffix(b.String(), "\n"))
	if s.f != nil {
		s.f.Flush()
	}
}

func (s *sse) done() {
	fmt.Fprint(s.w, "data: [DONE]\n\n")
	if s.f != nil {
		s.f.Flush()
	}
}
