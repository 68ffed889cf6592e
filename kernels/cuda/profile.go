// Per-kernel timing: CUDA events around each launch, summed by name.

package cuda

import (
	"cmp"
	"slices"
	"time"
	"unsafe"
)

// KernelTime is what a profile (Backend.SetProfile) measured of one kernel
// or cuBLAS routine: how often it ran and its time on the GPU.
type KernelTime struct {
	Name  string
	Calls int
	Total time.Duration
}

// profiler brackets every launch and cuBLAS call with a pair of CUDA events
// on the stream and sums the time between them by name. The events are read
// when Profile asks, or every maxPending pairs, after the stream has caught
// up; they are then reused.
type profiler struct {
	free    []uintptr
	pending []profMark
	calls   map[string]int
	total   map[string]float64 // milliseconds
}

type profMark struct {
	name       string
	start, end uintptr
}

const maxPending = 4096

// SetProfile turns the per-kernel profile on or off (off discards it).
// Profiling records two events around every kernel, which costs a few
// microseconds a launch: time the run without it.
func (b *Backend) SetProfile(on bool) {
	defer b.enter()()
	if !on {
		if b.prof != nil {
			b.collect()
			for _, e := range b.prof.free {
				b.l.call("cuEventDestroy_v2", b.l.cu.eventDestroy, e)
			}
		}
		b.prof = nil
		return
	}
	if b.prof == nil {
		b.prof = &profiler{calls: map[string]int{}, total: map[string]float64{}}
	}
}

// Profile returns the kernels' times since profiling was turned on or last
// read, the longest first, and starts a new count.
func (b *Backend) Profile() []KernelTime {
	defer b.enter()()
	if b.prof == nil {
		return nil
	}
	b.collect()
	var out []KernelTime
	for name, n := range b.prof.calls {
		out = append(out, KernelTime{name, n, time.Duration(b.prof.total[name] * float64(time.Millisecond))})
	}
	slices.SortFunc(out, func(x, y KernelTime) int { return cmp.Or(cmp.Compare(y.Total, x.Total), cmp.Compare(x.Name, y.Name)) })
	clear(b.prof.calls)
	clear(b.prof.total)
	return out
}

// timed records the start event of a kernel or routine when profiling and
// returns the function that records its end.
func (b *Backend) timed(name string) func() {
	p := b.prof
	if p == nil {
		return func() {}
	}
	if len(p.pending) >= maxPending {
		b.collect()
	}
	start, end := b.event(), b.event()
	b.must(b.l.call("cuEventRecord", b.l.cu.eventRecord, start, b.stream))
	return func() {
		b.must(b.l.call("cuEventRecord", b.l.cu.eventRecord, end, b.stream))
		p.pending = append(p.pending, profMark{name, start, end})
	}
}

// event returns an unused CUDA event, from the ones collect freed or new.
func (b *Backend) event() uintptr {
	p := b.prof
	if n := len(p.free); n > 0 {
		e := p.free[n-1]
		p.free = p.free[:n-1]
		return e
	}
	var e uintptr
	b.must(b.l.call("cuEventCreate", b.l.cu.eventCreate, uintptr(unsafe.Pointer(&e)), 0))
	return e
}

// collect waits for the stream and adds up the pending pairs.
func (b *Backend) collect() {
	p := b.prof
	b.must(b.l.call("cuStreamSynchronize", b.l.cu.streamSynchronize, b.stream))
	for _, m := range p.pending {
		var ms float32
		b.must(b.l.call("cuEventElapsedTime", b.l.cu.eventElapsedTime, uintptr(unsafe.Pointer(&ms)), m.start, m.end))
		p.calls[m.name]++
		p.total[m.name] += float64(ms)
		p.free = append(p.free, m.start, m.end)
	}
	p.pending = p.pending[:0]
}
