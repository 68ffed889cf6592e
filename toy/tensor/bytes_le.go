// Viewing little-endian F32 bytes as float32 without copying.

package tensor

import (
	"encoding/binary"
	"math"
	"unsafe"
)

// littleEndian is true on the hosts toy supports (amd64, arm64); the
// fallback keeps other hosts correct.
var littleEndian = func() bool { x := uint16(1); return *(*byte)(unsafe.Pointer(&x)) == 1 }()

// bytesAsFloat32 views b as float32 values when aligned little-endian memory
// allows it, and copies otherwise.
func bytesAsFloat32(b []byte) []float32 {
	n := len(b) / 4
	if n == 0 {
		return []float32{}
	}
	if littleEndian && uintptr(unsafe.Pointer(&b[0]))%4 == 0 {
		return unsafe.Slice((*float32)(unsafe.Pointer(&b[0])), n)
	}
	out := make([]float32, n)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return out
}
