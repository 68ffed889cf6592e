// Device-resident storage: the hook that lets a device backend (CUDA)
// keep a tensor's elements in its own memory, and copy them back to the host
// only when Go code reads them.

package tensor

import (
	"sync"
	"unsafe"
)

// DeviceBackend is a Backend whose ops take and leave tensors in device
// memory. The backend owns that memory (Alloc); this package keeps track of
// which copy of each tensor is current. An op finds its operands with
// DeviceIn and its output with DeviceOut; with a device backend active, the
// ops of this package give it outputs that have no host storage at all.
//
// The residency rules, for a tensor t with device storage:
//   - Data, Row, Bytes, Float32s and String copy the elements back to the
//     host first (once, until a device op writes t again);
//   - Data, Row and Bytes hand out the host copy for writing, so the device
//     copy counts as stale afterwards and DeviceIn copies it over again;
//   - a host backend (tensor.Go{}, the native CPU one) sees the host copy,
//     made current before the op runs;
//   - gradient rules (Tape.Backward) run on the host: with a device backend
//     active the forward pass runs on the device and the backward pass on
//     tensor.Go{}.
//
// Tensors without device storage pay one nil check per access.
type DeviceBackend interface {
	Backend
	// Device names the device ("NVIDIA H200").
	Device() string
	// Alloc returns size bytes of the device's memory, cleared to zeros
	// when zero is set.
	Alloc(size int, zero bool) DeviceStorage
}

// DeviceStorage is one allocation in a device backend's memory.
type DeviceStorage interface {
	// CopyFromHost copies src into the allocation's first len(src) bytes,
	// in order with the device's work.
	CopyFromHost(src []byte)
	// CopyToHost copies the allocation's bytes [off, off+len(dst)) into dst,
	// after the device work that writes them has finished.
	CopyToHost(dst []byte, off int)
}

// devState is the residency of one allocation, shared by every view
// (Reshape, Slice) of the tensor it was attached to.
type devState struct {
	mu          sync.Mutex
	buf         DeviceStorage // nil until a backend allocates one
	owner       DeviceBackend // the backend buf belongs to
	size        int           // bytes
	host        []byte        // host copy of the whole allocation; nil until needed
	hostCurrent bool          // host holds the allocation's contents
	devCurrent  bool          // buf holds them (false after host was handed out for writing)
}

// DeviceIn returns the allocation on b that holds t's current elements and
// the byte offset of t's first element in it, for an op that reads t. When b
// does not hold them, it allocates the whole of what t is a view of and
// copies the host's copy over; a tensor never written (Zeros, an output no op
// has written yet) is cleared on the device instead. An op that writes part
// of t calls DeviceIn, then DeviceOut.
func DeviceIn(b DeviceBackend, t *Tensor) (DeviceStorage, int) {
	d := t.attach()
	d.mu.Lock()
	defer d.mu.Unlock()
	d.toDevice(b)
	return d.buf, t.devOff
}

// DeviceOut is DeviceIn for an op that writes every element of t: the host
// copy is stale afterwards, and the next host read copies t back. A tensor
// that is a whole allocation and has no device copy gets fresh memory, with
// nothing copied over.
func DeviceOut(b DeviceBackend, t *Tensor) (DeviceStorage, int) {
	d := t.attach()
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.buf == nil && t.devOff == 0 && t.storageLen() == d.size {
		d.buf, d.owner = b.Alloc(d.size, false), b
	} else {
		d.toDevice(b)
	}
	d.devCurrent, d.hostCurrent = true, false
	return d.buf, t.devOff
}

// toDevice makes b's allocation hold the current contents. Called with d.mu
// held.
func (d *devState) toDevice(b DeviceBackend) {
	if d.buf != nil && d.owner == b && d.devCurrent {
		return
	}
	never := d.buf == nil && d.host == nil // zeros
	if d.buf == nil || d.owner != b {
		d.readHost() // another backend's copy may be the current one
		d.buf, d.owner = b.Alloc(d.size, never), b
	}
	if !never {
		d.buf.CopyFromHost(d.host)
	}
	d.devCurrent = true
}

// readHost makes d.host hold the allocation's contents, copying them from
// the device when a device op wrote them last. Called with d.mu held.
func (d *devState) readHost() {
	if d.host == nil {
		d.host = make([]byte, d.size)
		if d.buf == nil { // never written: zeros
			d.hostCurrent = true
		}
	}
	if !d.hostCurrent {
		d.buf.CopyToHost(d.host, 0)
		d.hostCurrent = true
	}
}

// isDeviceBackend reports whether b keeps tensors in device memory.
func isDeviceBackend(b Backend) bool {
	_, ok := b.(DeviceBackend)
	return ok
}

// beFor returns the active backend. For a host backend, the host copies of
// the device-resident tensors among ts are made current first.
func beFor(ts ...*Tensor) Backend {
	b := ActiveBackend()
	if !isDeviceBackend(b) {
		for _, t := range ts {
			if t != nil && t.dev != nil {
				t.hostRead()
			}
		}
	}
	return b
}

// newOut returns an F32 output of the given shape for an op on b: host
// storage for a host backend; for a device backend, none yet — the backend
// attaches device storage when it writes the output.
func newOut(b Backend, shape ...int) *Tensor {
	if !isDeviceBackend(b) {
		return New(shape...)
	}
	n := checkShape("New", shape)
	return &Tensor{shape: append([]int(nil), shape...), dtype: F32, dev: &devState{size: 4 * n, hostCurrent: false}}
}

// Zeros returns a zero-filled F32 tensor of the given shape, as New does.
// With a device backend active it has no storage until first used: the
// backend makes its zeros in device memory (no host copy, no upload; see
// DeviceIn), and host memory is taken only if Go code reads it. For
// buffers that live on the device, such as a KV cache.
func Zeros(shape ...int) *Tensor { return newOut(ActiveBackend(), shape...) }

// ownBytes returns t's own elements as bytes, as its host fields hold them.
func (t *Tensor) ownBytes() []byte {
	if t.dtype == F32 {
		if len(t.f32) == 0 {
			return nil
		}
		return unsafe.Slice((*byte)(unsafe.Pointer(&t.f32[0])), 4*len(t.f32))
	}
	return t.raw
}

// storageLen is the number of bytes t's own elements occupy.
func (t *Tensor) storageLen() int {
	n, _ := t.dtype.RowBytes(t.Len())
	return n
}

// hostRead makes t's host fields hold its current elements (copying them
// from the device when a device op wrote them last) and returns t.
func (t *Tensor) hostRead() *Tensor {
	d := t.dev
	if d == nil {
		return t
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.readHost()
	n := t.storageLen()
	b := d.host[t.devOff : t.devOff+n]
	if t.dtype == F32 {
		if n > 0 {
			t.f32 = unsafe.Slice((*float32)(unsafe.Pointer(&b[0])), n/4)
		} else {
			t.f32 = []float32{}
		}
	} else {
		t.raw = b
	}
	return t
}

// hostWrite is hostRead for a caller that may change the host copy: the
// device copy is stale afterwards.
func (t *Tensor) hostWrite() *Tensor {
	t.hostRead()
	if d := t.dev; d != nil {
		d.mu.Lock()
		d.devCurrent = false
		d.mu.Unlock()
	}
	return t
}

// ShareStorage makes the views taken of t from now on (Slice, Select,
// Reshape) share its storage on a device: the first op that needs any of
// them on a device backend uploads the whole of t, once, and t itself and
// every view then use that one copy, where views of a host tensor would
// each get their own. A mixture of experts calls it on its stacked experts,
// which it reads both per expert (views) and whole. It changes nothing on
// the host, and nothing for a tensor already on a device.
func (t *Tensor) ShareStorage() { t.attach() }

// attach returns t's residency, giving t one over its own elements when it
// has none.
func (t *Tensor) attach() *devState {
	if t.dev != nil {
		return t.dev
	}
	d := &devState{size: t.storageLen(), host: t.ownBytes(), hostCurrent: true}
	if d.host == nil && d.size > 0 {
		d.host = make([]byte, d.size)
	}
	t.dev, t.devOff = d, 0
	return d
}
