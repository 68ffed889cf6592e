// The worker pool that splits an op's rows across cores.

package cpu

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/toyml/toy/toy/tensor"
)

// pool is a set of persistent worker goroutines parked on a channel. An op
// hands each helper the same task; the helpers and the calling goroutine take
// chunks from a shared counter until none are left, so a core slowed by other
// work holds up no one. A worker that finishes a task looks for the next one
// for up to idleSpin, yielding between looks, then blocks in a channel
// receive: the ops of a forward pass follow each other within microseconds,
// and waking a parked thread takes tens of them — in a decode step, time in
// which the caller would run most chunks alone. Nothing spins once a model
// stops running ops.
type pool struct {
	mu      sync.Mutex
	workers int
	tasks   chan *task
}

type task struct {
	n, chunk int
	fn       func(lo, hi int)
	next     atomic.Int64  // the first item not yet taken
	left     atomic.Int64  // chunks not yet finished
	done     chan struct{} // closed when left reaches zero
}

// work runs chunks until none are left to take. A helper that comes late
// finds none and never calls fn.
func (t *task) work() {
	for {
		lo := int(t.next.Add(int64(t.chunk))) - t.chunk
		if lo >= t.n {
			return
		}
		t.fn(lo, min(lo+t.chunk, t.n))
		if t.left.Add(-1) == 0 {
			close(t.done)
		}
	}
}

// wait returns when every chunk is finished, looking for up to idleSpin
// before it blocks (a blocked caller also takes tens of microseconds to wake).
func (t *task) wait() {
	start := time.Now()
	for i := 1; t.left.Load() > 0; i++ {
		if i%16 == 0 && time.Since(start) > idleSpin {
			<-t.done
			return
		}
		runtime.Gosched()
	}
}

var workers = &pool{tasks: make(chan *task, 64)}

// run calls fn over [0, n) in chunks of chunk items on up to tensor.Threads()
// goroutines (the caller among them), and returns when all chunks are done.
func (p *pool) run(n, chunk int, fn func(lo, hi int)) {
	chunk = max(chunk, 1)
	helpers := min(tensor.Threads(), (n+chunk-1)/chunk) - 1
	if helpers <= 0 {
		fn(0, n)
		return
	}
	p.grow(helpers)
	t := &task{n: n, chunk: chunk, fn: fn, done: make(chan struct{})}
	t.left.Store(int64((n + chunk - 1) / chunk))
	for i := 0; i < helpers; i++ {
		p.tasks <- t
	}
	t.work()
	t.wait() // for the chunks the helpers took, not for helpers still on their way
}

// grow starts workers until there are at least n.
func (p *pool) grow(n int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for ; p.workers < n; p.workers++ {
		go func() {
			for {
				p.next().work()
			}
		}()
	}
}

// idleSpin is how long a worker looks for a new task before it parks (a
// variable for BenchmarkDecodeLayer, which compares it with parking at once).
var idleSpin = 100 * time.Microsecond

// next returns the next task: one queued within idleSpin, else the next one
// after parking.
func (p *pool) next() *task {
	var start time.Time
	for i := 0; ; i++ {
		select {
		case t := <-p.tasks:
			return t
		default:
		}
		if i == 0 {
			start = time.Now()
		} else if i%16 == 0 && time.Since(start) > idleSpin {
			return <-p.tasks
		}
		runtime.Gosched()
	}
}

// split returns a chunk size for n rows on the current thread count: about
// four chunks per thread, a multiple of align rows, at least minRows.
func split(n, align, minRows int) int {
	c := (n + 4*tensor.Threads() - 1) / (4 * tensor.Threads())
	c = max(c, minRows)
	return (c + align - 1) / align * align
}
