// slots.go: parallel slots — several requests generating at once, each in
// a sequence of its own, their steps run together by one goroutine that
// owns the model (continuous batching).

package serve

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/toyml/toy/toy/engine"
)

// errBusy answers a request that finds every slot busy and the queue full.
var errBusy = errors.New("every slot is busy and the queue is full")

// generateError is the answer to a failed generation: 503 with Retry-After
// for a full queue, else 500.
func generateError(w http.ResponseWriter, err error) *apiError {
	if errors.Is(err, errBusy) {
		w.Header().Set("Retry-After", "1")
		return &apiError{Status: 503, Message: "the server is busy: " + err.Error() + "; retry later", Type: "server_error"}
	}
	return &apiError{Status: 500, Message: err.Error(), Type: "server_error"}
}

// prefillChunk bounds the prompt tokens one step runs for one slot, so that
// a long prompt delays the other slots' next tokens by a chunk at a time.
const prefillChunk = 256

// slot is one of the server's parallel sequences: a session (its KV cache
// and the tokens it holds, kept after a request for the next one that
// shares them), and while a request holds it, that request's progress.
type slot struct {
	id   int
	lm   lm                 // nil until first used; *engine.Session, or a test's stand-in
	spec *engine.Speculator // with a draft (then the only slot)
	busy bool

	// What /slots and /metrics show of the request holding it.
	started          time.Time
	prompt, decoded  int
	cached, maxToken int
}

// pool hands slots to requests: the free slot whose cached tokens share
// the longest prefix with the prompt, else the oldest in the queue waits.
type pool struct {
	mu       sync.Mutex
	slots    []*slot
	queue    []*waiter // first come, first served
	maxQueue int
	hits     int // requests that reused a cached prefix (for /metrics)
	// batchedSteps counts the forward passes that ran several slots' steps,
	// batchedRows the slots' steps they ran.
	batchedSteps, batchedRows int
}

type waiter struct {
	prompt []int32
	got    chan *slot // buffered: release hands a slot over without waiting
}

// acquire returns a slot for prompt, waiting in the queue when every slot
// is busy (calling queued first: a streaming reply starts its headers);
// errBusy when the queue is full too, ctx's error if the client goes away
// first.
func (p *pool) acquire(ctx context.Context, prompt []int32, queued func()) (*slot, error) {
	p.mu.Lock()
	if len(p.queue) == 0 {
		if sl := p.best(prompt); sl != nil {
			sl.busy = true
			p.mu.Unlock()
			return sl, nil
		}
	}
	if len(p.queue) >= p.maxQueue {
		p.mu.Unlock()
		return nil, errBusy
	}
	w := &waiter{prompt: prompt, got: make(chan *slot, 1)}
	p.queue = append(p.queue, w)
	p.mu.Unlock()
	queued()
	select {
	case sl := <-w.got:
		return sl, nil
	case <-ctx.Done():
		p.mu.Lock()
		defer p.mu.Unlock()
		for i, q := range p.queue {
			if q == w {
				p.queue = append(p.queue[:i], p.queue[i+1:]...)
				return nil, ctx.Err()
			}
		}
		sl := <-w.got // handed over as the client left: pass it on
		p.handOver(sl)
		return nil, ctx.Err()
	}
}

// release frees sl for the next request, the oldest waiting first.
func (p *pool) release(sl *slot) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.handOver(sl)
}

// handOver gives free slot sl to the first waiter, or marks it free. The
// caller holds p.mu.
func (p *pool) handOver(sl *slot) {
	sl.busy = false
	if len(p.queue) == 0 {
		return
	}
	w := p.queue[0]
	p.queue = p.queue[1:]
	best := p.best(w.prompt) // sl, or a slot with a longer shared prefix
	best.busy = true
	w.got <- best
}

// best returns the free slot whose tokens share the longest prefix with
// prompt (of equals, one already holding a cache, then the lowest), or nil
// when none is free. The caller holds p.mu.
func (p *pool) best(prompt []int32) *slot {
	var best *slot
	bestLen := -2
	for _, sl := range p.slots {
		if sl.busy {
			continue
		}
		n := -1 // an unused slot: its cache is not made yet
		if sl.lm != nil {
			n = commonPrefix(sl.lm.Tokens(), prompt)
		}
		if n > bestLen {
			best, bestLen = sl, n
		}
	}
	return best
}

// hit counts a request that reused a cached prefix.
func (p *pool) hit() {
	p.mu.Lock()
	p.hits++
	p.mu.Unlock()
}

// progress runs fn, which updates a slot's request progress, under p.mu.
func (p *pool) progress(sl *slot, fn func()) {
	p.mu.Lock()
	fn()
	p.mu.Unlock()
}

// counts returns the busy slots and the waiting requests.
func (p *pool) counts() (busy, waiting int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, sl := range p.slots {
		if sl.busy {
			busy++
		}
	}
	return busy, len(p.queue)
}

// work is a piece of model work for the model's goroutine: a step (slot
// sl consumes ids, and gets the logits after them) or any other use of
// the model (fn).
type work struct {
	sl   *slot
	ids  []int32
	fn   func()
	done chan stepResult
}

type stepResult struct {
	logits []float32
	err    error
}

// runModel is the goroutine that owns the model: it takes the work queued
// since its last step, runs every step in it as one batched forward pass
// (when the model computes each row as it would alone: batched, checked
// at start) or one by one, and answers each. It ends when quit closes.
//
// Before a step it waits a little for every slot of the last step to send
// its next: the first request goroutine to wake would otherwise come back
// alone and run a step by itself while the others queue behind it (on a
// SmolLM2-sized model a step of one and a step of seven take a third longer
// than one of eight).
func (s *Server) runModel(in <-chan work, quit <-chan struct{}) {
	var last []*slot // the slots of the last step
	var took time.Duration
	timer := time.NewTimer(0)
	for {
		var ws []work
		back := 0 // of last, the slots whose next step is in ws
		add := func(w work) {
			ws = append(ws, w)
			if w.fn == nil && slices.Contains(last, w.sl) {
				back++
			}
		}
		if len(last) > 1 {
			timer.Reset(gatherWait(took))
		gather:
			for back < len(last) {
				select {
				case w := <-in:
					add(w)
				case <-timer.C:
					break gather // a reply ended, or its client is slow
				case <-quit:
					return
				}
			}
			timer.Stop() // (since Go 1.23 no stale fire is left to drain)
		}
		if len(ws) == 0 {
			select {
			case w := <-in:
				add(w)
			case <-quit:
				return
			}
		}
	more:
		for {
			select {
			case w := <-in:
				add(w)
			default:
				break more
			}
		}
		start := time.Now()
		s.step(ws)
		took = time.Since(start)
		last = last[:0]
		for _, w := range ws {
			if w.fn == nil {
				last = append(last, w.sl)
			}
		}
	}
}

// gatherWait is how long the model's goroutine waits for the slots of a
// step that took took to send their next steps: a quarter of it, at least
// 2 ms (a slot whose reply has ended does not come back, and costs one
// wait).
func gatherWait(took time.Duration) time.Duration { return max(took/4, 2*time.Millisecond) }

// step runs one round of work.
func (s *Server) step(ws []work) {
	var steps []work
	for _, w := range ws {
		if w.fn != nil {
			w.done <- stepResult{err: protect(w.fn)}
		} else {
			steps = append(steps, w)
		}
	}
	if len(steps) > 1 && s.batched {
		sessions, ids := make([]*engine.Session, len(steps)), make([][]int32, len(steps))
		ok := true
		for i, w := range steps {
			sess, isSession := w.sl.lm.(*engine.Session)
			ok = ok && isSession
			sessions[i], ids[i] = sess, w.ids
		}
		if ok {
			s.pool.mu.Lock()
			s.pool.batchedSteps++
			s.pool.batchedRows += len(steps)
			s.pool.mu.Unlock()
			var out [][]float32
			err := protect(func() {
				var err error
				if out, err = engine.NextBatch(s.model.Net, sessions, ids); err != nil {
					out = nil // a check failed and nothing changed: run them one by one for their own errors
				}
			})
			if err != nil { // a panic: the caches are unknown
				for _, w := range steps {
					w.done <- stepResult{err: err}
				}
				return
			}
			if out != nil {
				for i, w := range steps {
					w.done <- stepResult{logits: out[i]}
				}
				return
			}
		}
	}
	for _, w := range steps {
		var r stepResult
		r.err = protect(func() { r.logits, r.err = w.sl.lm.Next(w.ids) })
		w.done <- r
	}
}

// protect runs fn and returns a panic in it as an error (a bug in a forward
// pass: the request fails, the server keeps serving).
func protect(fn func()) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = &panicError{p}
		}
	}()
	fn()
	return nil
}

// panicError is a panic in model work, as an error.
type panicError struct{ v any }

func (e *panicError) Error() string { return fmt.Sprintf("internal error: %v", e.v) }

// onModel runs fn on the model's goroutine (directly when the server has
// one slot: the request holding it owns the model).
func (s *Server) onModel(fn func()) error {
	if s.work == nil {
		fn()
		return nil
	}
	done := make(chan stepResult, 1)
	s.work <- work{fn: fn, done: done}
	return (<-done).err
}

// next has slot sl consume ids and returns the logits [V] after them: one
// step with the other slots' (a prompt in chunks of prefillChunk tokens).
// With one slot the request runs the model itself.
func (s *Server) next(sl *slot, ids []int32) ([]float32, error) {
	if s.work == nil {
		return sl.lm.Next(ids)
	}
	for {
		n := min(len(ids), prefillChunk)
		done := make(chan stepResult, 1)
		s.work <- work{sl: sl, ids: ids[:n], done: done}
		r := <-done
		if r.err != nil || n == len(ids) {
			return r.logits, r.err
		}
		ids = ids[n:]
	}
}

// probeBatch reports whether the model decodes a batch of sequences with
// the logits each gets alone, bit for bit (see engine.NextBatch): on two
// fresh small sessions, a prompt each, then a token each.
func (s *Server) probeBatch() bool {
	V := int32(s.model.VocabSize())
	ok := true
	err := protect(func() {
		alone := []*engine.Session{s.model.NewSession(4), s.model.NewSession(4)}
		together := []*engine.Session{s.model.NewSession(4), s.model.NewSession(4)}
		for _, ids := range [][][]int32{{{1 % V, 2 % V}, {3 % V}}, {{4 % V}, {5 % V}}} {
			got, err := engine.NextBatch(s.model.Net, together, ids)
			if err != nil {
				ok = false
				return
			}
			for i := range ids {
				want, err := alone[i].Next(ids[i])
				if err != nil || !equalBits(got[i], want) {
					ok = false
					return
				}
			}
		}
	})
	return ok && err == nil
}

func equalBits(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] && !(a[i] != a[i] && b[i] != b[i]) {
			return false
		}
	}
	return true
}
