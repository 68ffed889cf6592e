// generate.go: one completion — waiting for the model, reusing the cached
// prefix, sampling, stop strings, and the reply whole or streamed.

package serve

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/toyml/toy/toy/engine"
	"github.com/toyml/toy/toy/sample"
	"github.com/toyml/toy/toy/tokenizer"
)

func tokenizerOptions(addBOS bool) tokenizer.EncodeOptions {
	return tokenizer.EncodeOptions{AddBOS: addBOS, ParseSpecial: true}
}

// params maps the request's sampling fields onto sample.Params, with
// llama-server's defaults for what it leaves out.
func (r *samplingRequest) params() sample.Params {
	p := sample.Params{Temperature: 0.8, TopK: 40, TopP: 0.95, MinP: 0.05, RepeatPenalty: 1}
	set := func(dst *float32, v *float32) {
		if v != nil {
			*dst = *v
		}
	}
	set(&p.Temperature, r.Temperature)
	set(&p.TopP, r.TopP)
	set(&p.MinP, r.MinP)
	set(&p.RepeatPenalty, r.RepeatPenalty)
	if r.TopK != nil {
		p.TopK = *r.TopK
	}
	if r.RepeatLastN != nil {
		p.RepeatLastN = *r.RepeatLastN
	}
	p.Seed = randomSeed()
	if r.Seed != nil {
		p.Seed = *r.Seed
	}
	return p
}

// reply accumulates the generated text and finds the stop strings in it.
type reply struct {
	dec     *tokenizer.Decoder
	stops   []string
	text    string
	stopped bool // a stop string was found; text ends before it
	sent    int  // bytes of text already streamed
}

// push adds one token's text; it reports whether a stop string now appears.
func (r *reply) push(piece string) bool {
	from := max(0, len(r.text)-r.longestStop())
	r.text += piece
	for _, s := range r.stops {
		if i := strings.Index(r.text[from:], s); i >= 0 {
			r.text, r.stopped = r.text[:from+i], true
		}
	}
	return r.stopped
}

func (r *reply) longestStop() int {
	n := 0
	for _, s := range r.stops {
		n = max(n, len(s))
	}
	return n
}

// ready returns the text that can be streamed now: all but a tail that may
// be the start of a stop string.
func (r *reply) ready() string {
	end := len(r.text)
	if !r.stopped {
		for _, s := range r.stops {
			for k := min(len(s)-1, len(r.text)); k > 0; k-- {
				if strings.HasSuffix(r.text, s[:k]) {
					end = min(end, len(r.text)-k)
					break
				}
			}
		}
	}
	out := r.text[r.sent:max(end, r.sent)]
	r.sent += len(out)
	return out
}

// timings are llama-server's speed figures, which some clients show.
type timings struct {
	PromptN            int     `json:"prompt_n"`
	PromptMS           float64 `json:"prompt_ms"`
	PredictedN         int     `json:"predicted_n"`
	PredictedMS        float64 `json:"predicted_ms"`
	PredictedPerSecond float64 `json:"predicted_per_second"`
}

// complete generates after prompt and writes the response.
func (s *Server) complete(w http.ResponseWriter, r *http.Request, req *samplingRequest, prompt []int32, isChat bool) {
	stops, e := req.stops()
	if e != nil {
		writeError(w, e)
		return
	}
	if len(prompt) >= s.ctxSize {
		writeError(w, &apiError{Status: 400, Type: "invalid_request_error", Code: "context_length_exceeded",
			Message: fmt.Sprintf("the prompt is %d tokens and the context %d: shorten it, or start the server with a larger --ctx (the model was trained on %d)",
				len(prompt), s.ctxSize, s.model.ContextLength())})
		return
	}
	maxTokens := s.ctxSize - len(prompt)
	for _, m := range []*int{req.MaxTokens, req.MaxCompletionTokens} {
		if m != nil {
			maxTokens = min(maxTokens, *m)
		}
	}
	ctx := r.Context()
	if !s.acquire(ctx) {
		return // the client left while queued
	}
	defer s.release()
	defer func() { // a panic (a bug) leaves the cache unknown: start afresh
		if p := recover(); p != nil {
			s.resetSession()
			panic(p)
		}
	}()

	// Keep the cached prefix this prompt shares with the previous request;
	// at least one token is run, for the logits that choose the next.
	sess := s.session
	cached := commonPrefix(sess.Tokens(), prompt)
	cached = min(cached, len(prompt)-1)
	sess.Truncate(cached)

	id, object := newID("cmpl"), "text_completion"
	if isChat {
		id, object = newID("chatcmpl"), "chat.completion"
	}
	base := response{ID: id, Object: object, Created: time.Now().Unix(), Model: s.name, SystemFingerprint: "toy"}
	tok := s.model.Tokenizer
	out := &reply{dec: tok.NewDecoder(), stops: stops}

	var stream *sse
	if req.Stream {
		stream = newSSE(w)
		base.Object = map[bool]string{true: "chat.completion.chunk", false: "text_completion"}[isChat]
		if isChat {
			empty := ""
			stream.send(s.chunk(base, isChat, &responseDelta{Role: "assistant", Content: &empty}, nil))
		}
	}
	opts := engine.Options{
		MaxTokens: maxTokens,
		Sample:    req.params(),
		OnToken: func(id int32) {
			if !tok.IsEOG(id) {
				out.push(out.dec.Push(id))
			}
			if stream != nil {
				if text := out.ready(); text != "" {
					stream.send(s.chunk(base, isChat, &responseDelta{Content: &text}, nil))
				}
			}
		},
		Stop: func(id int32) bool { return tok.IsEOG(id) || out.stopped },
	}
	res, err := engine.Generate(ctx, sess, prompt[cached:], opts)
	if err != nil {
		if ctx.Err() != nil {
			return // the client went away; nothing to answer
		}
		e := &apiError{Status: 500, Message: err.Error(), Type: "server_error"}
		if stream != nil {
			stream.send(map[string]*apiError{"error": e})
			return
		}
		writeError(w, e)
		return
	}
	if !out.stopped {
		out.push(out.dec.Flush())
	}
	finish := "length"
	if res.Reason == "stop" || out.stopped {
		finish = "stop"
	}
	u := &usage{PromptTokens: len(prompt), CompletionTokens: len(res.IDs), TotalTokens: len(prompt) + len(res.IDs)}
	u.PromptTokensDetails.CachedTokens = cached
	t := &timings{PromptN: len(prompt) - cached, PromptMS: ms(res.PrefillTime), PredictedN: len(res.IDs),
		PredictedMS: ms(res.PrefillTime + res.DecodeTime), PredictedPerSecond: res.DecodeTokensPerSecond()}

	if stream != nil {
		last := out.ready()
		final := s.chunk(base, isChat, &responseDelta{Content: &last}, &finish)
		if last == "" && isChat {
			final = s.chunk(base, isChat, &responseDelta{}, &finish)
		}
		stream.send(withTimings(final, t))
		if req.StreamOptions != nil && req.StreamOptions.IncludeUsage {
			end := base
			end.Choices, end.Usage = []any{}, u
			stream.send(end)
		}
		stream.done()
		return
	}
	resp := base
	resp.Usage = u
	if isChat {
		resp.Choices = []chatChoice{{Message: &responseMessage{Role: "assistant", Content: out.text}, FinishReason: &finish}}
	} else {
		resp.Choices = []textChoice{{Text: out.text, FinishReason: &finish}}
	}
	writeJSON(w, 200, withTimings(resp, t))
}

// chunk is one streamed event.
func (s *Server) chunk(base response, isChat bool, delta *responseDelta, finish *string) response {
	c := base
	if isChat {
		c.Choices = []chatChoice{{Delta: delta, FinishReason: finish}}
	} else {
		text := ""
		if delta.Content != nil {
			text = *delta.Content
		}
		c.Choices = []textChoice{{Text: text, FinishReason: finish}}
	}
	return c
}

// withTimings adds llama-server's "timings" field to a response.
func withTimings(r response, t *timings) any {
	return struct {
		response
		Timings *timings `json:"timings"`
	}{r, t}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func commonPrefix(a, b []int32) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
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
