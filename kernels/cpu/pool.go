// The worker pool that splits an op's rows across cores.

package cpu

import (
	"sync"
	"sync/atomic"

	"github.com/toyml/toy/toy/tensor"
)

// pool is a set of persistent worker goroutines parked on a channel. An op
// hands each helper the same task; the helpers and the calling goroutine take
// chunks from a shared counter until none are left, so a core slowed by other
// work holds up no one. Idle workers block in a channel receive: nothing
// spins while no op runs.
type pool struct {
	mu      sync.Mutex
	workers int
	tasks   chan *task
}

type task struct {
	n, chunk int
	fn       func(lo, hi int)
	next     atomic.Int64
	wg       sync.WaitGroup
}

func (t *task) work() {
	for {
		lo := int(t.next.Add(int64(t.chunk))) - t.chunk
		if lo >= t.n {
			return
		}
		t.fn(lo, min(lo+t.chunk, t.n))
	}
}

var workers = &pool{tasks: make(chan *task, 64)}

// run calls fn over [0, n) in chunks of chunk items on up to tensor.Threads()
// goroutines (the caller among them), and returns when all are done.
func (p *pool) run(n, chunk int, fn func(lo, hi int)) {
	chunk = max(chunk, 1)
	helpers := min(tensor.Threads(), (n+chunk-1)/chunk) - 1
	if helpers <= 0 {
		fn(0, n)
		return
	}
	p.grow(helpers)
	t := &task{n: n, chunk: chunk, fn: fn}
	t.wg.Add(helpers)
	for i := 0; i < helpers; i++ {
		p.tasks <- t
	}
	t.work()
	t.wg.Wait()
}

// grow starts workers until there are at least n.
func (p *pool) grow(n int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for ; p.workers < n; p.workers++ {
		go func() {
			for t := range p.tasks {
				t.work()
				t.wg.Done()
			}
		}()
	}
}

// split returns a chunk size for n rows on the current thread count: about
// four chunks per thread, a multiple of align rows, at least minRows.
func split(n, align, minRows int) int {
	c := (n + 4*tensor.Threads() - 1) / (4 * tensor.Threads())
	c = max(c, minRows)
	return (c + align - 1) / align * align
}
