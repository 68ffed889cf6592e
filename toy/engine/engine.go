// Inference: a Session that runs a model over a growing KV cache (prefill
// the prompt once, then decode one token at a time), and Generate, the
// sampling loop on top of it, with speculative decoding when a draft model is
// given (speculate.go).

package engine

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/toyml/toy/toy/nn"
	"github.com/toyml/toy/toy/sample"
	"github.com/toyml/toy/toy/tensor"
)

// Model is what the engine needs of an architecture (layer 3).
type Model interface {
	// Hidden runs ids [T] at positions cache.Len() … and returns the final
	// normalised hidden states [T, D], appending to the cache.
	Hidden(ids []int32, cache *nn.Cache) *tensor.Tensor
	// Logits maps hidden states [T, D] to logits [T, V].
	Logits(h *tensor.Tensor) *tensor.Tensor
	// NewCache returns an empty cache for up to capacity positions.
	NewCache(capacity int) *nn.Cache
	VocabSize() int
	ContextLength() int
}

// Errors a caller can test for with errors.Is.
var (
	ErrTokenRange  = errors.New("token id out of range")
	ErrContextFull = errors.New("context is full")
	ErrEmptyPrompt = errors.New("empty prompt")
)

// Session is one sequence being run through a model: the KV cache and the
// tokens it holds.
type Session struct {
	model  Model
	cache  *nn.Cache
	tokens []int32
}

// NewSession returns a session holding up to capacity positions (at most the
// model's context length).
func NewSession(m Model, capacity int) *Session {
	capacity = max(1, min(capacity, m.ContextLength()))
	return &Session{model: m, cache: m.NewCache(capacity)}
}

// Tokens returns the tokens the session has consumed.
func (s *Session) Tokens() []int32 { return s.tokens }

// Capacity returns how many positions the session can hold.
func (s *Session) Capacity() int { return s.cache.Capacity() }

// Truncate forgets every position from n on, keeping the first n tokens and
// their keys and values, so that the session can continue them differently:
// a server reuses the prefix two consecutive prompts share this way.
//
// A model with recurrent layers keeps the inputs of only its last few
// positions; cut back further, the session runs the first n tokens again.
func (s *Session) Truncate(n int) {
	n = min(max(n, 0), len(s.tokens))
	s.cache.Truncate(n)
	if m := s.cache.Len(); m < n {
		s.model.Hidden(s.tokens[m:n], s.cache)
	}
	s.tokens = s.tokens[:n]
}

func (s *Session) check(ids []int32) error {
	if len(ids) == 0 {
		return ErrEmptyPrompt
	}
	for _, id := range ids {
		if id < 0 || int(id) >= s.model.VocabSize() {
			return fmt.Errorf("%w: %d (vocabulary has %d tokens)", ErrTokenRange, id, s.model.VocabSize())
		}
	}
	if len(s.tokens)+len(ids) > s.cache.Capacity() {
		return fmt.Errorf("%w: %d + %d tokens exceed %d positions", ErrContextFull, len(s.tokens), len(ids), s.cache.Capacity())
	}
	return nil
}

// Next consumes ids and returns the logits [V] for the token after them —
// prefill when ids is a prompt, one decode step when it is a single token.
func (s *Session) Next(ids []int32) ([]float32, error) {
	if err := s.check(ids); err != nil {
		return nil, err
	}
	h := s.model.Hidden(ids, s.cache)                       // [T, D]
	logits := s.model.Logits(h.Slice(h.Rows()-1, h.Rows())) // [1, V]
	s.tokens = append(s.tokens, ids...)
	if err := s.finite(logits.Data()); err != nil {
		return nil, err
	}
	return logits.Data(), nil
}

// NextBatch runs one step of several sessions over the same model in one
// forward pass — the batched decoding of a server's parallel slots: session
// i consumes ids[i] and out[i] holds the logits [V] after them. The rows of
// all the sessions go through the projections as one matrix, and each
// attends over its own cache (nn.BatchCache), so each gets the logits Next
// gives it alone where the model's kernels compute each row independently
// of the others (check with a probe before relying on it: a model whose
// layers cannot run a batch — recurrent ones — panics here, and one whose
// frame numbers positions from the cache gives other logits). An id out
// of range or a full context changes no session; after a panic their
// caches are unknown.
func NextBatch(m Model, sessions []*Session, ids [][]int32) ([][]float32, error) {
	if len(sessions) != len(ids) || len(sessions) == 0 {
		return nil, fmt.Errorf("engine: %d sessions, %d id lists", len(sessions), len(ids))
	}
	caches, rows := make([]*nn.Cache, len(sessions)), make([]int, len(sessions))
	var all []int32
	for i, s := range sessions {
		if err := s.check(ids[i]); err != nil {
			return nil, err
		}
		caches[i], rows[i] = s.cache, len(ids[i])
		all = append(all, ids[i]...)
	}
	h := m.Hidden(all, nn.BatchCache(caches, rows)) // [ΣT, D]
	last := tensor.Zeros(len(sessions), h.Cols())
	at := 0
	for i, n := range rows {
		at += n
		tensor.SetRows(last, i, h.Slice(at-1, at))
	}
	logits := m.Logits(last) // [B, V]
	out := make([][]float32, len(sessions))
	for i, s := range sessions {
		s.tokens = append(s.tokens, ids[i]...)
		out[i] = logits.Slice(i, i+1).Data()
		if err := s.finite(out[i]); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// finite returns ErrNonFinite, with the first weight that holds a NaN or an
// infinity when there is one (the usual cause), if x has such a value.
func (s *Session) finite(x []float32) error {
	bad := -1
	for i, v := range x {
		if v-v != 0 { // NaN for a NaN or an infinity, 0 for every finite v
			bad = i
			break
		}
	}
	if bad < 0 {
		return nil
	}
	err := fmt.Errorf("%w: logit %d is %v after %d positions", ErrNonFinite, bad, x[bad], len(s.tokens))
	if m, ok := s.model.(interface{ Weights() []nn.Named }); ok {
		for _, w := range m.Weights() {
			if w.T.DType() != tensor.F32 {
				continue // quantized weights hold finite codes; their scales are checked by the loader
			}
			for _, v := range w.T.Data() {
				if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
					return fmt.Errorf("%w; weight %s holds %v", err, w.Name, v)
				}
			}
		}
	}
	return err
}

// All consumes ids and returns the logits after every one of them, [T, V].
func (s *Session) All(ids []int32) (*tensor.Tensor, error) {
	if err := s.check(ids); err != nil {
		return nil, err
	}
	logits := s.model.Logits(s.model.Hidden(ids, s.cache))
	s.tokens = append(s.tokens, ids...)
	if err := s.finite(logits.Data()); err != nil {
		return nil, err
	}
	return logits, nil
}

// Options configures Generate.
type Options struct {
	MaxTokens int           // tokens to generate
	Sample    sample.Params // the zero value is greedy
	// Stop, if set, ends generation after a token for which it returns true
	// (the token is included in the result).
	Stop func(id int32) bool
	// OnToken, if set, sees each generated token as it is produced.
	OnToken func(id int32)
	// Constraint, if set, limits the tokens that may come next and follows
	// the ones drawn (a grammar: grammar.Tokens); see
	// sample.Sampler.SampleConstrained. Generation stops, with Reason
	// "stop", when it allows no token.
	Constraint sample.Constraint
	// Draft, if set, is a session of a smaller model over the same
	// vocabulary, fresh or holding a prefix of the prompt, that guesses
	// DraftTokens tokens ahead (default 8): speculative decoding, see
	// speculate.go. The tokens generated are those Generate would give.
	// The draft guesses under a fork of Constraint when it has a Fork()
	// method (grammar.Tokens), else freely.
	Draft       *Session
	DraftTokens int
	// LogProbs asks for Result.LogProbs.
	LogProbs bool
}

// Result is what Generate produced.
type Result struct {
	IDs         []int32       // generated tokens (not the prompt)
	PrefillTime time.Duration // time to consume the prompt and sample the first token
	DecodeTime  time.Duration // time for every later token
	Reason      string        // "length", "stop", "context" or "canceled"
	// Drafted and Accepted count, with a Draft, the draft's guesses and
	// those the model kept.
	Drafted, Accepted int
	// LogProbs, when Options.LogProbs is set, holds for each generated
	// token the log-probability the model gave it: log softmax(logits)[id]
	// at temperature 1, before penalties and filters (sample.LogProb).
	LogProbs []float32
}

// DecodeTokensPerSecond is the decode speed: tokens after the first divided
// by their time (prefill excluded). Zero when fewer than two were generated.
func (r Result) DecodeTokensPerSecond() float64 {
	if len(r.IDs) < 2 || r.DecodeTime <= 0 {
		return 0
	}
	return float64(len(r.IDs)-1) / r.DecodeTime.Seconds()
}

// Generate runs prompt through m and samples up to opts.MaxTokens tokens.
// The session must be fresh or hold a prefix the prompt continues. It stops
// with Reason "canceled" and ctx's error at the next token once ctx — or the
// interrupt context current when it started (SetInterrupt) — is done.
func Generate(ctx context.Context, s *Session, prompt []int32, opts Options) (r Result, err error) {
	ctx, release := WithInterrupt(ctx)
	defer release()
	// next runs one token; with a draft, through a Speculator.
	next := func(id int32) ([]float32, error) { return s.Next([]int32{id}) }
	length := func() int { return len(s.tokens) }
	if opts.Draft != nil {
		sp, err := NewSpeculator(s, opts.Draft, opts.DraftTokens)
		if err != nil {
			return r, err
		}
		defer func() { sp.Settle(); r.Drafted, r.Accepted = sp.Drafted, sp.Accepted }()
		next = func(id int32) ([]float32, error) { return sp.Next(id, opts.Constraint, opts.MaxTokens-len(r.IDs)) }
		length = sp.Len
	}
	sampler := sample.New(opts.Sample)
	start := time.Now()
	logits, err := s.Next(prompt)
	if err != nil {
		return r, err
	}
	history := append([]int32(nil), s.tokens...)
	for len(r.IDs) < opts.MaxTokens {
		if err := ctx.Err(); err != nil {
			r.Reason = "canceled"
			return r, err
		}
		var id int32
		if opts.Constraint != nil {
			if id = sampler.SampleConstrained(logits, history, opts.Constraint); id < 0 {
				r.Reason = "stop"
				break
			}
		} else {
			id = sampler.Sample(logits, history)
		}
		r.IDs = append(r.IDs, id)
		if opts.LogProbs {
			r.LogProbs = append(r.LogProbs, float32(sample.LogProb(logits, id)))
		}
		history = append(history, id)
		if len(r.IDs) == 1 {
			r.PrefillTime = time.Since(start)
			start = time.Now()
		}
		if opts.OnToken != nil {
			opts.OnToken(id)
		}
		if opts.Stop != nil && opts.Stop(id) {
			r.Reason = "stop"
			break
		}
		if len(r.IDs) == opts.MaxTokens {
			break
		}
		if length() >= s.Capacity() {
			r.Reason = "context"
			break
		}
		if logits, err = next(id); err != nil {
			return r, err
		}
	}
	if r.Reason == "" {
		r.Reason = "length"
	}
	if len(r.IDs) > 0 {
		r.DecodeTime = time.Since(start)
	}
	return r, nil
}
