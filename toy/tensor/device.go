// Device-resident storage: the hook that lets a device backend (CUDA)
// keep a tensor's elements in its own memory, and copy them back to the host
// only when Go code reads them.

package tensor

import (
	"fmt"
	"sync"
	"unsafe"
)

// DeviceBackend is a Backend whose ops take and leave tensors in device
// memory. With one active, the ops of this package give the backend outputs
// that have no host storage yet; the backend attaches its own (SetDevice)
// and the elements stay on the device until Go code reads them.
//
// The residency rules, for a tensor t with device storage:
//   - Data, Row, Bytes, Float32s and String copy the elements back to the
//     host first (once, until a device op writes t again);
//   - Data, Row and Bytes hand out the host copy for writing, so the device
//     copy counts as stale afterwards and the backend uploads it again
//     before its next use (Device reports current == false);
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
}

// DeviceStorage is one allocation in a device backend's memory.
type DeviceStorage interface {
	// CopyToHost copies the allocation's bytes [off, off+len(dst)) into dst,
	// after the device work that writes them has finished.
	CopyToHost(dst []byte, off int)
}

// devState is the residency of one device allocation, shared by every view
// (Reshape, Slice) of the tensor it was attached to.
type devState struct {
	mu          sync.Mutex
	buf         DeviceStorage // nil until the backend attaches one
	size        int           // bytes
	host        []byte        // host copy of the whole allocation; nil until needed
	hostCurrent bool          // host holds the allocation's contents
	devCurrent  bool          // buf holds them (false after host was handed out for writing)
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
// NeverWritten), and host memory is taken only if Go code reads it. For
// buffers that live on the device, such as a KV cache.
func Zeros(shape ...int) *Tensor { return newOut(ActiveBackend(), shape...) }

// NeverWritten reports whether t (made by Zeros, or an op's output under a
// device backend) has no storage yet and holds zeros: a device backend can
// clear an allocation for it instead of uploading HostBytes.
func (t *Tensor) NeverWritten() bool {
	d := t.dev
	if d == nil {
		return false
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.buf == nil && d.host == nil
}

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

// Device returns the device storage holding t's elements, the byte offset of
// t's first element in it, and whether it holds t's current contents. s is
// nil when t has none; current is false when Go code may have changed the
// host copy since the device's was made (the backend uploads HostBytes
// again, then calls SetDevice). For device backends.
func (t *Tensor) Device() (s DeviceStorage, off int, current bool) {
	d := t.dev
	if d == nil {
		return nil, 0, false
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.buf, t.devOff, d.buf != nil && d.devCurrent
}

// StorageSize is the size in bytes of the allocation t's elements live in:
// the whole device allocation when t is a view of one, t's own elements
// otherwise. A device backend allocates this much for a tensor that has no
// storage of its own yet.
func (t *Tensor) StorageSize() int {
	if d := t.dev; d != nil {
		return d.size
	}
	return t.storageLen()
}

// HostBytes returns the host copy of the allocation t's elements live in
// (StorageSize bytes, current), for a device backend to upload. It is not a
// copy: a tensor made from host data (a weight, a memory-mapped GGUF tensor)
// shares it.
func (t *Tensor) HostBytes() []byte {
	if d := t.dev; d != nil {
		t.hostRead()
		return d.host
	}
	return t.ownBytes()
}

// SetDevice attaches s, an allocation of StorageSize bytes, as t's device
// storage (or replaces the one there; views of t share it). With written
// true a device op has just written it (or is about to): host reads copy it
// back. With written false it holds a copy of HostBytes (an upload), and the
// host copy stays current.
func (t *Tensor) SetDevice(s DeviceStorage, written bool) {
	if s == nil {
		panic("SetDevice: nil storage")
	}
	d := t.dev
	if d == nil {
		d = &devState{size: t.storageLen(), host: t.ownBytes(), hostCurrent: true}
		if d.host == nil && d.size > 0 {
			d.host = make([]byte, d.size)
		}
		t.devOff = 0
		t.dev = d
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.buf != nil && d.buf != s && !written && !d.hostCurrent {
		panic("SetDevice: replacing device storage whose contents the host does not hold")
	}
	d.buf = s
	d.devCurrent = true
	if written {
		d.hostCurrent = false
	}
}

// ShareStorage makes the views taken of t from now on (Slice, Select,
// Reshape) share its storage on a device: the first op that needs any of
// them on a device backend uploads the whole of t, once, and t itself and
// every view then use that one copy, where views of a host tensor would
// each get their own. A mixture of experts calls it on its stacked experts,
// which it reads both per expert (views) and whole. It changes nothing on
// the host, and nothing for a tensor already on a device.
func (t *Tensor) ShareStorage() {
	if t.dev != nil {
		return
	}
	d := &devState{size: t.storageLen(), host: t.ownBytes(), hostCurrent: true}
	if d.host == nil && d.size > 0 {
		d.host = make([]byte, d.size)
	}
	t.dev, t.devOff = d, 0
}

// DeviceWritten records that a device op wrote t's storage (attached with
// SetDevice): the host copy is stale until the next host read.
func (t *Tensor) DeviceWritten() {
	d := t.dev
	if d == nil || d.buf == nil {
		panic(fmt.Sprintf("DeviceWritten: tensor %v has no device storage", t.shape))
	}
	d.mu.Lock()
	d.hostCurrent = false
	d.devCurrent = true
	d.mu.Unlock()
}

// OnDevice reports whether t has device storage attached.
func (t *Tensor) OnDevice() bool {
	d := t.dev
	if d == nil {
		return false
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.buf != nil
}
