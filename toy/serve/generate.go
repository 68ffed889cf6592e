// generate.go: one generation, whatever API asked for it — waiting for the
// model, reusing the cached prefix, sampling each choice, stop strings,
// log-probabilities, and what may be streamed when.

package serve

import (
	"context"
	"fmt"
	"github.com/toyml/toy/toy/chat"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/toyml/toy/toy/grammar"
	"github.com/toyml/toy/toy/sample"
	"github.com/toyml/toy/toy/tokenizer"
)

// lm is the model as generation sees it: *engine.Session over the KV cache.
// It is the seam tests replace with a scripted stand-in.
type lm interface {
	// Next consumes ids and returns the logits [V] for the token after them.
	Next(ids []int32) ([]float32, error)
	Tokens() []int32
	Truncate(n int)
	Capacity() int
}

// job is one generation request: what a handler makes of an OpenAI or
// Ollama body once it has checked it.
type job struct {
	prompt      []int32
	choices     int           // ≥ 1; choice i samples with Sample.Seed + i
	maxTokens   int           // per choice
	sample      sample.Params // the sampler of choice 0
	stops       []string
	logprobs    bool
	topLogprobs int
	tools       *toolCalls // nil: the reply is text only
	// json keeps each reply a JSON object (grammar.JSON: Ollama's format
	// "json", OpenAI's response_format json_object); schema, when set, a
	// value of that schema (format as a schema, json_schema).
	json   bool
	schema *grammar.Schema
	// gbnf keeps each reply in a grammar (llama.cpp's grammar parameter).
	gbnf *grammar.GBNF
	// think separates the reply's reasoning (<think>…</think> at its start)
	// from its content; thinkOpen: the prompt ends inside <think>, so the
	// reply starts reasoning.
	think, thinkOpen bool
	// harmony reads the reply as gpt-oss's harmony messages (harmony.go).
	harmony *chat.HarmonyTokens
	// args keeps the reply to the rest of a forced call, its opening in
	// the prompt (toolSetup.args).
	args *grammar.GBNF
	// prefill is text the reply starts with that the prompt already holds
	// (a forced tool call's opening): part of the reply to parse, not
	// generated, not streamed until it is known what it became.
	prefill string
	// call keeps a gpt-oss reply to a forced tool call: analysis, then a
	// call to one of the functions, its arguments to its schema
	// (harmonyCall); the formats above do not apply.
	call *harmonyCall
	// ignoreEOS keeps the end-of-generation tokens from being drawn, and
	// minTokens keeps them (and stop strings) off until a choice has that
	// many tokens; includeStop keeps the stop string found in the text
	// (fields.go).
	ignoreEOS   bool
	minTokens   int
	includeStop bool
	// maxPredict, when not 0, ends a choice that has run that long since
	// its first token and holds a newline (llama-server's t_max_predict_ms).
	maxPredict time.Duration
}

// sink receives a generation's events; the OpenAI and Ollama responders
// implement it. Choices run one after another: start(i), text(i, …)…, end(i).
type sink interface {
	queued() // the request waits for a slot: a streaming reply may start
	start(choice int)
	text(choice int, text, reasoning string, lps []tokenLogprob) // content and reasoning that can be shown now, and the log-probs of their tokens
	end(choice int, c *choice)
}

// outcome sums up a generation.
type outcome struct {
	choices     []*choice
	prompt      int // prompt tokens
	cached      int // of which kept from the previous request
	generated   int // tokens generated over all choices
	prefillTime time.Duration
	decodeTime  time.Duration
	// With a draft: its guesses over all choices, and those kept.
	drafted, accepted int
}

// generate runs j and reports to out. It waits for a slot first; it
// returns ctx's error if the client went away (nothing is then to be sent),
// errBusy if the queue is full.
func (s *Server) generate(ctx context.Context, j *job, out sink) (*outcome, error) {
	arrived := time.Now()
	sl, err := s.pool.acquire(ctx, j.prompt, out.queued)
	if err != nil {
		return nil, err
	}
	defer s.pool.release(sl)
	acquired := time.Now()
	if sl.lm == nil {
		s.newSession(sl)
	}
	defer func() { // a panic (a bug) leaves the cache unknown: start afresh
		if p := recover(); p != nil {
			s.newSession(sl)
			panic(p)
		}
	}()
	res, err := s.generateIn(ctx, sl, j, out)
	if _, ok := err.(*panicError); ok { // in a batched step: this slot's cache is unknown too
		s.newSession(sl)
	}
	if err == nil {
		s.metrics.generation(res, arrived, acquired)
	}
	return res, err
}

// generateIn runs j in slot sl.
func (s *Server) generateIn(ctx context.Context, sl *slot, j *job, out sink) (*outcome, error) {
	// Keep the cached prefix this prompt shares with the slot's last
	// request; at least one token is run, for the logits that choose the
	// next.
	sess := sl.lm
	// next runs token id and returns the logits after it; with a draft,
	// through the speculator (c: the constraint the token after id is drawn
	// under, left: the tokens still wanted). length is the text's length.
	next := func(id int32, c sample.Constraint, left int) ([]float32, error) { return s.next(sl, []int32{id}) }
	length := func() int { return len(sess.Tokens()) }
	truncate := func(n int) error { return s.onModel(func() { sess.Truncate(n) }) } // a recurrent cache may run tokens again
	sp := sl.spec
	var drafted, accepted int // the speculator's counts before this request
	if sp != nil {
		sp.Settle() // a request that failed may have left guesses behind
		next, length = sp.Next, sp.Len
		drafted, accepted = sp.Drafted, sp.Accepted
	}
	res := &outcome{prompt: len(j.prompt)}
	res.cached = min(commonPrefix(sess.Tokens(), j.prompt), len(j.prompt)-1)
	if err := truncate(res.cached); err != nil {
		return nil, err
	}
	if res.cached > 0 {
		s.pool.hit()
	}
	s.pool.progress(sl, func() { // for GET /slots
		sl.started, sl.prompt, sl.cached, sl.decoded, sl.maxToken = time.Now(), len(j.prompt), res.cached, 0, j.maxTokens
	})
	start := time.Now()
	first, err := s.next(sl, j.prompt[res.cached:])
	if err != nil {
		return nil, err
	}
	first = slices.Clone(first) // the session may reuse the buffer
	res.prefillTime = time.Since(start)

	tok := s.model.Tokenizer
	for i := range j.choices {
		c := newChoice(i, j, tok)
		if err := truncate(len(j.prompt)); err != nil { // every choice continues the same prompt
			return nil, err
		}
		p := j.sample
		p.Seed += uint64(i)
		sampler := sample.New(p)
		history := slices.Clone(j.prompt)
		logits := first
		var gram grammar.State
		switch {
		case j.call != nil:
			gram = j.call.state() // gpt-oss: the whole reply, its analysis and its call
		case j.gbnf != nil:
			gram = grammar.NewMatcher(j.gbnf)
		case j.schema != nil:
			gram = grammar.NewJSONSchema(j.schema)
		case j.json:
			gram = grammar.NewJSON()
		case j.args != nil:
			gram = &closingCall{m: grammar.NewMatcher(j.args), left: j.maxTokens} // a forced call: the rest of it, closed in time
		}
		if gram != nil && j.harmony != nil && j.call == nil {
			gram = newFinalOnly(gram, *j.harmony) // gpt-oss: the format holds in the final message
		}
		out.start(i)
		for len(c.ids) < j.maxTokens {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			if j.ignoreEOS || len(c.ids) < j.minTokens { // the reply may not end yet
				logits = maskEOG(logits, tok)
			}
			var id int32
			switch {
			case gram == nil:
				id = sampler.Sample(logits, history)
			case j.logprobs:
				// Log-probs report the distribution drawn from: the masked one.
				logits = slices.Clone(logits)
				id = -1
				if gram.Mask(logits, tok); anyFinite(logits) {
					id = sampler.Sample(logits, history)
				}
			default:
				id = sampler.SampleConstrained(logits, history, grammar.Tokens{State: gram, Vocab: tok})
			}
			if id < 0 {
				break // no token continues the text (a vocabulary without '{'?)
			}
			history = append(history, id)
			if gram != nil && j.logprobs && !tok.IsEOG(id) { // (SampleConstrained accepts by itself)
				if err := gram.AcceptToken(id, tok); err != nil {
					return nil, fmt.Errorf("serve: the grammar's mask let through a token it refuses: %w", err)
				}
			}
			c.push(id, logits)
			if len(c.ids) == 1 {
				c.firstAt = time.Now()
			}
			s.pool.progress(sl, func() { sl.decoded++ })
			if text, reasoning, lps := c.ready(); text != "" || reasoning != "" || len(lps) > 0 {
				out.text(i, text, reasoning, lps)
			}
			if c.eog || c.stopped || len(c.ids) == j.maxTokens || length() >= sess.Capacity() {
				break
			}
			if j.maxPredict > 0 && time.Since(c.firstAt) > j.maxPredict && strings.Contains(c.text, "\n") {
				break // finish_reason "length", as llama-server's
			}
			var cons sample.Constraint
			if gram != nil {
				cons = grammar.Tokens{State: gram, Vocab: tok}
			}
			if logits, err = next(id, cons, j.maxTokens-len(c.ids)); err != nil {
				return nil, err
			}
		}
		if sp != nil {
			sp.Settle()
		}
		c.finish()
		res.generated += len(c.ids)
		res.choices = append(res.choices, c)
		out.end(i, c)
	}
	res.decodeTime = time.Since(start) - res.prefillTime
	if sp != nil {
		res.drafted, res.accepted = sp.Drafted-drafted, sp.Accepted-accepted
	}
	return res, nil
}

// maskEOG returns logits with the end-of-generation tokens' at −∞ (a copy).
func maskEOG(logits []float32, tok *tokenizer.Tokenizer) []float32 {
	logits = slices.Clone(logits)
	for _, id := range tok.EOG() {
		if int(id) < len(logits) {
			logits[id] = float32(math.Inf(-1))
		}
	}
	return logits
}

// anyFinite reports whether some logit is not −∞: a token may still come.
func anyFinite(logits []float32) bool {
	for _, v := range logits {
		if !math.IsInf(float64(v), -1) {
			return true
		}
	}
	return false
}

func commonPrefix(a, b []int32) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

// choice is one reply being generated: its tokens, its text (cut at a stop
// string), what of it was streamed, and at the end its finish reason and
// tool calls.
type choice struct {
	index   int
	tok     *tokenizer.Tokenizer
	dec     *tokenizer.Decoder
	stops   []string
	tools   *toolCalls
	logp    bool
	topLogp int

	ids     []int32 // generated tokens, an end-of-generation one included
	text    string  // the reply so far (after the prefill), cut before a stop string
	stopped bool    // a stop string was found
	eog     bool    // the model ended its turn
	sent    int     // bytes of text handed out as streamable
	lps     []tokenLogprob
	lpSent  int // log-probs handed out

	// minTokens: no stop string is looked for before the reply has that
	// many tokens; includeStop: the one found stays in the text.
	minTokens   int
	includeStop bool
	firstAt     time.Time // when the first token came (job.maxPredict)

	// think, when set, splits the text into reasoning and content; of
	// those, contentSent and reasoningSent bytes were handed out.
	think                      *thinkSplit
	contentSent, reasoningSent int
	// harmony, when set, reads the reply as harmony messages: the content,
	// the reasoning and the calls come from it.
	harmony *chat.Harmony

	// Set by finish.
	content   string     // text less the reasoning and the tool calls
	reasoning string     // the reasoning (with think)
	calls     []toolCall // parsed tool calls
	reason    string     // "stop", "length" or "tool_calls"
}

func newChoice(i int, j *job, tok *tokenizer.Tokenizer) *choice {
	c := &choice{index: i, tok: tok, dec: tok.NewDecoder(), stops: j.stops, tools: j.tools,
		logp: j.logprobs, topLogp: j.topLogprobs, text: j.prefill, minTokens: j.minTokens, includeStop: j.includeStop}
	if j.think {
		c.think = newThinkSplit(j.thinkOpen)
	}
	if j.harmony != nil {
		c.harmony = chat.NewHarmony(*j.harmony)
	}
	return c
}

// push adds a sampled token: its text, a stop string it completes, its
// log-prob under logits (the distribution it was drawn from).
func (c *choice) push(id int32, logits []float32) {
	c.ids = append(c.ids, id)
	if c.tok.IsEOG(id) {
		c.eog = true
		return
	}
	offset := len(c.text)
	piece := c.dec.Push(id)
	if c.harmony != nil {
		if c.harmony.Push(id, piece) != chat.HarmonyContent {
			piece = "" // structure, reasoning or a call's arguments
		}
	} else if c.tools != nil && c.tools.isMarker(c.tok, id) {
		piece += c.tok.Piece(id) // a control token that opens a tool call ("<|python_tag|>", "[TOOL_CALLS]")
	}
	c.add(piece)
	if c.logp {
		c.lps = append(c.lps, logprob(c.tok, logits, id, c.topLogp, offset))
	}
}

// add appends text and cuts it at the first stop string that now appears.
func (c *choice) add(piece string) {
	if c.stopped || piece == "" {
		return
	}
	from := max(0, len(c.text)-c.longestStop())
	c.text += piece
	if len(c.ids) < c.minTokens {
		return
	}
	for _, s := range c.stops {
		if i := strings.Index(c.text[from:], s); i >= 0 {
			end := from + i
			if c.includeStop {
				end += len(s)
			}
			c.text, c.stopped = c.text[:end], true
		}
	}
}

func (c *choice) longestStop() int {
	n := 0
	for _, s := range c.stops {
		n = max(n, len(s))
	}
	return n
}

// ready returns the content and the reasoning that can be streamed now,
// and the log-probs of the tokens that text completes: all but a tail that
// may be the start of a stop string or of a reasoning tag, and nothing from
// the opening of a tool call on.
func (c *choice) ready() (string, string, []tokenLogprob) {
	end := len(c.text)
	if !c.stopped {
		for _, s := range c.stops {
			for k := min(len(s)-1, len(c.text)); k > 0; k-- {
				if strings.HasSuffix(c.text, s[:k]) {
					end = min(end, len(c.text)-k)
					break
				}
			}
		}
	}
	if c.tools != nil {
		end = c.tools.holdFrom(c.text[:end])
	}
	text := ""
	if end > c.sent {
		text = c.text[c.sent:end]
		c.sent = end
	}
	n := c.lpSent
	for n < len(c.lps) && c.lps[n].offset < c.sent {
		n++
	}
	lps := c.lps[c.lpSent:n]
	c.lpSent = n
	switch {
	case c.harmony != nil:
		r := c.harmony.Reasoning()
		out := r[c.reasoningSent:]
		c.reasoningSent = len(r)
		return text, out, lps
	case c.think == nil:
		return text, "", lps
	}
	c.think.feed(text)
	return c.thinkSince(), c.reasoningSince(), lps
}

// thinkSince and reasoningSince return the content and the reasoning the
// split has judged since they were last handed out.
func (c *choice) thinkSince() string {
	out := c.think.content[c.contentSent:]
	c.contentSent = len(c.think.content)
	return out
}

func (c *choice) reasoningSince() string {
	out := c.think.reasoning[c.reasoningSent:]
	c.reasoningSent = len(c.think.reasoning)
	return out
}

// finish flushes the decoder, parses tool calls and sets the finish reason.
func (c *choice) finish() {
	c.add(c.dec.Flush())
	if c.stopped { // tokens past the stop string made no text
		c.lps = slices.DeleteFunc(c.lps, func(l tokenLogprob) bool { return l.offset >= len(c.text) })
		c.lpSent = min(c.lpSent, len(c.lps))
	}
	c.content = c.text
	if c.think != nil { // the rest of the text, judged to the end
		c.think.feed(c.text[c.sent:])
		c.think.flush()
		c.sent = len(c.text)
		c.content, c.reasoning = c.think.content, c.think.reasoning
	}
	if c.harmony != nil {
		c.harmony.Close()
		c.reasoning = c.harmony.Reasoning()
		for _, call := range c.harmony.Calls() {
			c.calls = append(c.calls, toolCall{ID: newCallID(), Name: call.Name, Arguments: call.Arguments})
		}
	}
	if c.tools != nil && c.harmony == nil {
		if calls, before, ok := c.tools.parse(c.content); ok {
			c.calls, c.content = calls, before
			for i := range c.calls {
				if c.calls[i].ID == "" {
					c.calls[i].ID = newCallID()
				}
			}
		}
	}
	switch {
	case len(c.calls) > 0:
		c.reason = "tool_calls"
	case c.eog || c.stopped:
		c.reason = "stop"
	default:
		c.reason = "length"
	}
}

// rest returns what was not streamed: the content's and the reasoning's
// tails and the log-probs not yet handed out.
func (c *choice) rest() (text, reasoning string, lps []tokenLogprob) {
	if c.think != nil {
		if len(c.content) > c.contentSent {
			text = c.content[c.contentSent:]
		}
		c.contentSent = max(c.contentSent, len(c.content))
	} else if len(c.content) > c.sent {
		text = c.content[c.sent:]
		c.sent = len(c.content)
	}
	reasoning = c.reasoning[min(c.reasoningSent, len(c.reasoning)):]
	c.reasoningSent = len(c.reasoning)
	lps = c.lps[c.lpSent:]
	c.lpSent = len(c.lps)
	return text, reasoning, lps
}

// tokenLogprob is one generated token with its log-probability and, when
// asked for, the most likely tokens at its position.
type tokenLogprob struct {
	id      int32
	piece   string  // the token's bytes, possibly part of a UTF-8 character
	logprob float64 // log p(token), p = softmax(logits)
	top     []altLogprob
	offset  int // byte offset of its text in the reply
}

type altLogprob struct {
	id      int32
	piece   string
	logprob float64
}

// logprob is the log-softmax of the raw logits at id — the distribution the
// model gives, before temperature, penalties and truncation, as OpenAI
// reports it: log p_i = x_i − log Σ_j e^{x_j}. With top > 0 it also lists
// the top most likely tokens, most likely first.
func logprob(tok *tokenizer.Tokenizer, logits []float32, id int32, top, offset int) tokenLogprob {
	maxv := math.Inf(-1)
	for _, x := range logits {
		maxv = math.Max(maxv, float64(x))
	}
	var sum float64
	for _, x := range logits {
		sum += math.Exp(float64(x) - maxv)
	}
	lse := maxv + math.Log(sum)
	lp := tokenLogprob{id: id, piece: tok.Piece(id), logprob: float64(logits[id]) - lse, offset: offset}
	if top > 0 {
		best := topK(logits, top)
		lp.top = make([]altLogprob, len(best))
		for i, b := range best {
			lp.top[i] = altLogprob{id: b, piece: tok.Piece(b), logprob: float64(logits[b]) - lse}
		}
	}
	return lp
}

// topK returns the ids of the k largest logits, largest first, ties to the
// lower id.
func topK(logits []float32, k int) []int32 {
	k = min(k, len(logits))
	best := make([]int32, 0, k+1)
	for i, x := range logits {
		if len(best) == k && x <= logits[best[k-1]] {
			continue
		}
		at, _ := slices.BinarySearchFunc(best, x, func(id int32, x float32) int {
			if logits[id] >= x {
				return -1
			}
			return 1
		})
		best = slices.Insert(best, at, int32(i))
		if len(best) > k {
			best = best[:k]
		}
	}
	return best
}
