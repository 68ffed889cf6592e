// Splitting work over rows across goroutines.

package tensor

import (
	"runtime"
	"sync"
	"sync/atomic"
)

var threads atomic.Int32

func init() { threads.Store(int32(runtime.NumCPU())) }

// SetThreads sets how many goroutines an op may use (at least 1).
func SetThreads(n int) { threads.Store(int32(max(n, 1))) }

// Threads returns the number of goroutines an op may use.
func Threads() int { return int(threads.Load()) }

// parallelFor calls fn over [0, n) in chunks of at least grain items, on up
// to Threads() goroutines, and returns when all chunks are done. Workers take
// chunks from a shared counter, so a slow core does not hold up the rest.
func parallelFor(n, grain int, fn func(lo, hi int)) {
	workers := min(Threads(), (n+grain-1)/max(grain, 1))
	if workers <= 1 {
		fn(0, n)
		return
	}
	chunk := max(grain, n/(workers*4))
	var next atomic.Int64
	var wg sync.WaitGroup
	work := func() {
		for {
			lo := int(next.Add(int64(chunk))) - chunk
			if lo >= n {
				return
			}
			fn(lo, min(lo+chunk, n))
		}
	}
	wg.Add(workers - 1)
	for w := 1; w < workers; w++ {
		go func() { defer wg.Done(); work() }()
	}
	work()
	wg.Wait()
}
