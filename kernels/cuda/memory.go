// Device memory: buffers attached to tensors, a caching allocator, and
// copies between host and device.

package cuda

import (
	"fmt"
	"math/bits"
	"runtime"
	"unsafe"
)

// buffer is one device allocation, a tensor's DeviceStorage. When no tensor
// refers to it any more, a cleanup hands its memory back to the pool.
type buffer struct {
	b    *Backend
	ptr  uintptr
	size int
}

// CopyFromHost copies src into the buffer's first len(src) bytes, in stream
// order. Called inside an op (tensor.DeviceIn).
func (s *buffer) CopyFromHost(src []byte) {
	if len(src) > s.size {
		panic(fmt.Sprintf("cuda: CopyFromHost of %d bytes into a buffer of %d", len(src), s.size))
	}
	s.b.upload(s.ptr, src)
}

// CopyToHost copies bytes [off, off+len(dst)) to dst once the stream's work
// so far has finished.
func (s *buffer) CopyToHost(dst []byte, off int) {
	if len(dst) == 0 {
		return
	}
	if off < 0 || off+len(dst) > s.size {
		panic(fmt.Sprintf("cuda: CopyToHost of bytes [%d, %d) from a buffer of %d", off, off+len(dst), s.size))
	}
	b := s.b
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	b.must(b.l.call("cuCtxSetCurrent", b.l.cu.ctxSetCurrent, b.ctx))
	b.must(b.l.call("cuMemcpyDtoHAsync", b.l.cu.memcpyDtoHAsync, uintptr(unsafe.Pointer(&dst[0])), s.ptr+uintptr(off), uintptr(len(dst)), b.stream))
	b.must(b.l.call("cuStreamSynchronize", b.l.cu.streamSynchronize, b.stream))
	runtime.KeepAlive(dst)
	b.downloads.Add(1)
}

// sizeClass rounds n up so that freed buffers are reused for requests of
// similar size: multiples of 256 bytes up to 4 KiB, then of 1/8 of the next
// power of two (at most a quarter wasted).
func sizeClass(n int) int {
	if n <= 4096 {
		return (max(n, 1) + 255) &^ 255
	}
	step := 1 << (bits.Len(uint(n-1)) - 3)
	return (n + step - 1) / step * step
}

// freed is what a buffer's cleanup needs: not the buffer itself.
type freed struct {
	ptr  uintptr
	size int
}

// take returns device memory of at least n bytes (its size class c), from
// the pool when some of that class is free. Called with the backend entered.
func (b *Backend) take(n int) (p uintptr, c int) {
	c = sizeClass(n)
	if free := b.pool[c]; len(free) > 0 {
		p = free[len(free)-1]
		b.pool[c] = free[:len(free)-1]
		b.pooled -= int64(c)
		return p, c
	}
	return b.memAlloc(c), c
}

// give puts memory taken with take back in the pool.
func (b *Backend) give(p uintptr, c int) {
	b.pool[c] = append(b.pool[c], p)
	b.pooled += int64(c)
}

// alloc returns a buffer of at least n bytes for a tensor's storage; its
// memory returns to the pool when the buffer becomes unreachable.
func (b *Backend) alloc(n int) *buffer {
	p, c := b.take(n)
	s := &buffer{b: b, ptr: p, size: c}
	runtime.AddCleanup(s, b.release, freed{p, c})
	return s
}

// memAlloc allocates c bytes with cuMemAlloc; when the device is full it
// returns the pool's memory to the driver, lets Go's collector find dead
// tensors, and tries again.
func (b *Backend) memAlloc(c int) uintptr {
	var p uintptr
	err := b.l.call("cuMemAlloc", b.l.cu.memAlloc, uintptr(unsafe.Pointer(&p)), uintptr(c))
	if err == nil {
		b.sinceGC += int64(c)
		if b.sinceGC > b.info.TotalMem/8 { // device memory the Go heap does not see
			b.sinceGC = 0
			runtime.GC()
		}
		return p
	}
	runtime.GC()
	b.must(b.l.call("cuStreamSynchronize", b.l.cu.streamSynchronize, b.stream))
	b.drainReleased()
	for class, free := range b.pool {
		for _, q := range free {
			b.l.call("cuMemFree", b.l.cu.memFree, q)
		}
		delete(b.pool, class)
	}
	b.pooled = 0
	if err := b.l.call("cuMemAlloc", b.l.cu.memAlloc, uintptr(unsafe.Pointer(&p)), uintptr(c)); err != nil {
		panic(fmt.Sprintf("cuda: allocating %d bytes on %s: %v", c, b.info.Name, err))
	}
	return p
}

// release is a buffer's cleanup: it queues the memory for the pool (the
// pool itself is touched only by ops, which hold b.mu). Stream order keeps
// reuse safe: a kernel still reading it was launched before any that will
// write it.
func (b *Backend) release(f freed) {
	b.relMu.Lock()
	b.released = append(b.released, f)
	b.relMu.Unlock()
}

func (b *Backend) drainReleased() {
	b.relMu.Lock()
	r := b.released
	b.released = nil
	b.relMu.Unlock()
	for _, f := range r {
		b.give(f.ptr, f.size)
	}
}

// upload copies host bytes to p (from pageable memory: the call returns
// once the driver has staged them, so src may change afterwards).
func (b *Backend) upload(p uintptr, src []byte) {
	if len(src) == 0 {
		return
	}
	b.must(b.l.call("cuMemcpyHtoDAsync", b.l.cu.memcpyHtoDAsync, p, uintptr(unsafe.Pointer(&src[0])), uintptr(len(src)), b.stream))
	runtime.KeepAlive(src)
	b.uploads.Add(1)
}
