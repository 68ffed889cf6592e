// The residency hook, tested with a null device: a DeviceBackend whose
// "device memory" is Go byte slices and whose ops are tensor.Go{}'s, so that
// every result must be bit-identical to pure Go, while counters show what
// crossed between host and device.

package tensor_test

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/toyml/toy/toy/engine"
	"github.com/toyml/toy/toy/models/gpt2"
	"github.com/toyml/toy/toy/models/llama"
	"github.com/toyml/toy/toy/tensor"
)

// nullBuf is one allocation in the null device's memory.
type nullBuf struct {
	mem []byte
	d   *nullDevice
}

func (b *nullBuf) CopyToHost(dst []byte, off int) {
	b.d.downloads++
	copy(dst, b.mem[off:off+len(dst)])
}

// nullDevice counts uploads (host → device copies), downloads (device →
// host) and allocations.
type nullDevice struct {
	uploads, downloads, allocs int
}

var _ tensor.DeviceBackend = (*nullDevice)(nil)

func (d *nullDevice) Name() string   { return "null" }
func (d *nullDevice) Device() string { return "null device" }

func nbytes(t *tensor.Tensor) int {
	n, _ := t.DType().RowBytes(t.Len())
	return n
}

// resident returns t's device allocation and t's offset in it, uploading
// t's host copy when the device does not hold it.
func (d *nullDevice) resident(t *tensor.Tensor) (*nullBuf, int) {
	s, off, ok := t.Device()
	if !ok {
		host := t.HostBytes()
		if s == nil {
			d.allocs++
			s = &nullBuf{mem: make([]byte, t.StorageSize()), d: d}
		}
		copy(s.(*nullBuf).mem, host)
		d.uploads++
		t.SetDevice(s, false)
		_, off, _ = t.Device()
	}
	return s.(*nullBuf), off
}

// in returns a device-side copy of t as a host-only tensor for tensor.Go{}.
func (d *nullDevice) in(t *tensor.Tensor) *tensor.Tensor {
	if t == nil {
		return nil
	}
	b, off := d.resident(t)
	x, err := tensor.FromBytes(t.DType(), slices.Clone(b.mem[off:off+nbytes(t)]), t.Shape()...)
	if err != nil {
		panic(err)
	}
	return x
}

// out runs op into a host tensor shaped like t, then stores the result in
// t's device storage (allocating it when t has none).
func (d *nullDevice) out(t *tensor.Tensor, op func(o *tensor.Tensor)) {
	o := tensor.New(t.Shape()...)
	op(o)
	s, off, _ := t.Device()
	if s == nil {
		d.allocs++
		s = &nullBuf{mem: make([]byte, t.StorageSize()), d: d}
		t.SetDevice(s, true)
	}
	f := o.Data()
	for i, v := range f {
		bits := math.Float32bits(v)
		m := s.(*nullBuf).mem[off+4*i:]
		m[0], m[1], m[2], m[3] = byte(bits), byte(bits>>8), byte(bits>>16), byte(bits>>24)
	}
	t.DeviceWritten()
}

func (d *nullDevice) MatMul(out, x, w *tensor.Tensor) {
	x, w = d.in(x), d.in(w)
	d.out(out, func(o *tensor.Tensor) { tensor.Go{}.MatMul(o, x, w) })
}
func (d *nullDevice) Add(out, a, b *tensor.Tensor) {
	a, b = d.in(a), d.in(b)
	d.out(out, func(o *tensor.Tensor) { tensor.Go{}.Add(o, a, b) })
}
func (d *nullDevice) Mul(out, a, b *tensor.Tensor) {
	a, b = d.in(a), d.in(b)
	d.out(out, func(o *tensor.Tensor) { tensor.Go{}.Mul(o, a, b) })
}
func (d *nullDevice) Scale(out, a *tensor.Tensor, s float32) {
	a = d.in(a)
	d.out(out, func(o *tensor.Tensor) { tensor.Go{}.Scale(o, a, s) })
}
func (d *nullDevice) RMSNorm(out, x, w *tensor.Tensor, eps float32) {
	x, w = d.in(x), d.in(w)
	d.out(out, func(o *tensor.Tensor) { tensor.Go{}.RMSNorm(o, x, w, eps) })
}
func (d *nullDevice) LayerNorm(out, x, w, b *tensor.Tensor, eps float32) {
	x, w, b = d.in(x), d.in(w), d.in(b)
	d.out(out, func(o *tensor.Tensor) { tensor.Go{}.LayerNorm(o, x, w, b, eps) })
}
func (d *nullDevice) RoPE(out, x *tensor.Tensor, pos0 int, opt tensor.RoPEOptions) {
	x, opt.Factors = d.in(x), d.in(opt.Factors)
	d.out(out, func(o *tensor.Tensor) { tensor.Go{}.RoPE(o, x, pos0, opt) })
}
func (d *nullDevice) Softmax(out, x *tensor.Tensor, past int) {
	x = d.in(x)
	d.out(out, func(o *tensor.Tensor) { tensor.Go{}.Softmax(o, x, past) })
}
func (d *nullDevice) SiLU(out, x *tensor.Tensor) {
	x = d.in(x)
	d.out(out, func(o *tensor.Tensor) { tensor.Go{}.SiLU(o, x) })
}
func (d *nullDevice) Tanh(out, x *tensor.Tensor) {
	x = d.in(x)
	d.out(out, func(o *tensor.Tensor) { tensor.Go{}.Tanh(o, x) })
}
func (d *nullDevice) GELU(out, x *tensor.Tensor) {
	x = d.in(x)
	d.out(out, func(o *tensor.Tensor) { tensor.Go{}.GELU(o, x) })
}
func (d *nullDevice) GELUErf(out, x *tensor.Tensor) {
	x = d.in(x)
	d.out(out, func(o *tensor.Tensor) { tensor.Go{}.GELUErf(o, x) })
}
func (d *nullDevice) Sigmoid(out, x *tensor.Tensor) {
	x = d.in(x)
	d.out(out, func(o *tensor.Tensor) { tensor.Go{}.Sigmoid(o, x) })
}
func (d *nullDevice) Softplus(out, x *tensor.Tensor) {
	x = d.in(x)
	d.out(out, func(o *tensor.Tensor) { tensor.Go{}.Softplus(o, x) })
}
func (d *nullDevice) SwiGLUOAI(out, gate, up *tensor.Tensor, alpha, limit float32) {
	gate, up = d.in(gate), d.in(up)
	d.out(out, func(o *tensor.Tensor) { tensor.Go{}.SwiGLUOAI(o, gate, up, alpha, limit) })
}
func (d *nullDevice) CausalConv(out, past, x, taps *tensor.Tensor) {
	past, x, taps = d.in(past), d.in(x), d.in(taps)
	d.out(out, func(o *tensor.Tensor) { tensor.Go{}.CausalConv(o, past, x, taps) })
}
func (d *nullDevice) ScatterAdd(out, dst, src *tensor.Tensor, ids []int32, scale *tensor.Tensor) {
	dst, src, scale = d.in(dst), d.in(src), d.in(scale)
	d.out(out, func(o *tensor.Tensor) { tensor.Go{}.ScatterAdd(o, dst, src, ids, scale) })
}
func (d *nullDevice) SwiGLU(out, gate, up *tensor.Tensor) {
	gate, up = d.in(gate), d.in(up)
	d.out(out, func(o *tensor.Tensor) { tensor.Go{}.SwiGLU(o, gate, up) })
}
func (d *nullDevice) Embedding(out, table *tensor.Tensor, ids []int32) {
	table = d.in(table)
	d.out(out, func(o *tensor.Tensor) { tensor.Go{}.Embedding(o, table, ids) })
}
func (d *nullDevice) Attention(out, q, k, v *tensor.Tensor, nHead, nKV, past int, opt tensor.AttentionOptions) {
	q, k, v = d.in(q), d.in(k), d.in(v)
	d.out(out, func(o *tensor.Tensor) { tensor.Go{}.Attention(o, q, k, v, nHead, nKV, past, opt) })
}
func (d *nullDevice) Columns(out, x *tensor.Tensor, from int) {
	x = d.in(x)
	d.out(out, func(o *tensor.Tensor) {
		for r := 0; r < x.Rows(); r++ {
			copy(o.Row(r), x.Row(r)[from:])
		}
	})
}
func (d *nullDevice) PlaceColumns(out, src *tensor.Tensor, at int) {
	src = d.in(src)
	s, off, _ := out.Device()
	if s == nil { // a fresh result: device memory, nothing to upload
		d.allocs++
		s = &nullBuf{mem: make([]byte, out.StorageSize()), d: d}
		out.SetDevice(s, true)
	}
	C, n := out.Cols(), src.Cols()
	for r := 0; r < src.Rows(); r++ {
		copy(s.(*nullBuf).mem[off+4*(r*C+at):], src.HostBytes()[4*r*n:4*(r+1)*n])
	}
	out.DeviceWritten()
}
func (d *nullDevice) SetRows(dst *tensor.Tensor, at int, src *tensor.Tensor) {
	b, off := d.resident(dst)
	s := d.in(src)
	rb, _ := dst.DType().RowBytes(dst.Cols())
	copy(b.mem[off+at*rb:], s.HostBytes())
	dst.DeviceWritten()
}

// on runs fn with b as the active backend.
func on(b tensor.Backend, fn func()) {
	old := tensor.ActiveBackend()
	tensor.SetBackend(b)
	defer tensor.SetBackend(old)
	fn()
}

func tinyLlama() *llama.Model {
	return llama.NewRandom(llama.Config{Arch: "llama", VocabSize: 96, ContextLength: 64, Embed: 32, Layers: 2, FFN: 64,
		Heads: 4, KVHeads: 2, HeadDim: 8, RopeDim: 8, RopeBase: 10000, NormEps: 1e-5}, 7)
}

// greedy decodes n tokens after prompt, returning the tokens and every
// step's logits.
func greedy(t *testing.T, m engine.Model, prompt []int32, n int) ([]int32, [][]float32) {
	t.Helper()
	s := engine.NewSession(m, len(prompt)+n)
	var ids []int32
	var all [][]float32
	logits, err := s.Next(prompt)
	for i := 0; i < n; i++ {
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, slices.Clone(logits))
		ids = append(ids, int32(argmax(logits)))
		logits, err = s.Next(ids[len(ids)-1:])
	}
	return ids, all
}

func argmax(x []float32) int {
	best := 0
	for i, v := range x {
		if v > x[best] {
			best = i
		}
	}
	return best
}

// TestNullDeviceMatchesGo: the same ops on the null device and on pure Go,
// so greedy tokens and every logit must be identical, for a Llama (RMSNorm,
// RoPE, grouped heads, SwiGLU) and a GPT-2 (LayerNorm, fused QKV split with
// Columns, GELU, position embeddings).
func TestNullDeviceMatchesGo(t *testing.T) {
	models := map[string]engine.Model{
		"llama": tinyLlama(),
		"gpt2": gpt2.NewRandom(gpt2.Config{VocabSize: 80, ContextLength: 32, Embed: 32, Layers: 2, FFN: 64,
			Heads: 4, NormEps: 1e-5}, 3),
	}
	prompt := []int32{1, 5, 9, 2, 7}
	for name, m := range models {
		var wantIDs, gotIDs []int32
		var want, got [][]float32
		on(tensor.Go{}, func() { wantIDs, want = greedy(t, m, prompt, 6) })
		on(&nullDevice{}, func() { gotIDs, got = greedy(t, m, prompt, 6) })
		if !slices.Equal(gotIDs, wantIDs) {
			t.Errorf("%s: null device decoded %v, pure Go %v", name, gotIDs, wantIDs)
		}
		for i := range want {
			if !slices.Equal(got[i], want[i]) {
				t.Errorf("%s: step %d logits differ from pure Go", name, i)
			}
		}
	}
}

// TestNullDeviceResidency: weights and the KV cache are uploaded once, on
// first use; after that a decode step uploads nothing and downloads one
// tensor, the logits the sampler reads.
func TestNullDeviceResidency(t *testing.T) {
	m := tinyLlama()
	d := &nullDevice{}
	on(d, func() {
		s := engine.NewSession(m, 32)
		if _, err := s.Next([]int32{1, 2, 3, 4}); err != nil {
			t.Fatal(err)
		}
		// Per layer: 2 norms, Q, K, V, O, gate, up, down, and the K and V caches;
		// then embedding, output norm and output head.
		weights := len(m.Blocks)*(2+7+2) + 3
		if d.uploads != weights {
			t.Errorf("prefill uploaded %d tensors, want %d (each weight and cache once)", d.uploads, weights)
		}
		if d.downloads != 1 {
			t.Errorf("prefill downloaded %d tensors, want 1 (the logits)", d.downloads)
		}
		up, down := d.uploads, d.downloads
		for i := 0; i < 5; i++ {
			logits, err := s.Next([]int32{int32(i + 5)})
			if err != nil {
				t.Fatal(err)
			}
			_ = argmax(logits)
		}
		if d.uploads != up {
			t.Errorf("5 decode steps uploaded %d tensors, want 0", d.uploads-up)
		}
		if d.downloads-down != 5 {
			t.Errorf("5 decode steps downloaded %d tensors, want 5 (one per token)", d.downloads-down)
		}
	})
}

// TestNullDeviceConcat: ConcatColumns joins device-resident parts on the
// device (nothing comes down until the result is read) into what pure Go
// gives.
func TestNullDeviceConcat(t *testing.T) {
	a := tensor.FromFloat32([]float32{1, 2, 3, 4}, 2, 2)
	b := tensor.FromFloat32([]float32{5, 6, 7, 8, 9, 10}, 2, 3)
	want := tensor.ConcatColumns(a, b, a).Float32s()
	if !slices.Equal(want, []float32{1, 2, 5, 6, 7, 1, 2, 3, 4, 8, 9, 10, 3, 4}) {
		t.Fatalf("ConcatColumns on the host: %v", want)
	}
	d := &nullDevice{}
	on(d, func() {
		x, y := tensor.Scale(a, 1), tensor.Scale(b, 1) // device-resident parts
		out := tensor.ConcatColumns(x, y, x)
		if d.downloads != 0 {
			t.Errorf("ConcatColumns downloaded %d tensors, want 0", d.downloads)
		}
		if got := out.Float32s(); !slices.Equal(got, want) {
			t.Errorf("ConcatColumns on the device: %v, want %v", got, want)
		}
	})
}

// TestNullDeviceHostWrites: handing a weight's host copy out for writing
// (Data) makes the device copy stale, and the next op uploads it again —
// how an optimizer step reaches the device.
func TestNullDeviceHostWrites(t *testing.T) {
	d := &nullDevice{}
	x := tensor.FromFloat32([]float32{1, 2}, 1, 2)
	w := tensor.FromFloat32([]float32{1, 0, 0, 1}, 2, 2) // identity
	on(d, func() {
		y := tensor.MatMul(x, w)
		if got := y.Float32s(); !slices.Equal(got, []float32{1, 2}) {
			t.Fatalf("x·I = %v", got)
		}
		y = tensor.MatMul(x, w)
		if d.uploads != 2 {
			t.Fatalf("two products uploaded %d tensors, want 2 (x and w once)", d.uploads)
		}
		w.Data()[0] = 3 // host write: the device copy is stale
		y = tensor.MatMul(x, w)
		if d.uploads != 3 {
			t.Errorf("after a host write %d uploads, want 3 (w again)", d.uploads)
		}
		if got := y.Float32s(); !slices.Equal(got, []float32{3, 2}) {
			t.Errorf("after w[0,0] = 3: x·w = %v, want [3 2]", got)
		}
	})
}

// TestNullDeviceViews: Slice and Reshape of a device-resident tensor are
// views of the same allocation; reading one downloads the allocation once.
func TestNullDeviceViews(t *testing.T) {
	d := &nullDevice{}
	x := tensor.FromFloat32([]float32{1, 2, 3, 4, 5, 6}, 3, 2)
	on(d, func() {
		y := tensor.Scale(x, 10) // [3, 2] on the device
		if y.OnDevice() != true {
			t.Fatal("the output of an op on a device backend has no device storage")
		}
		row := y.Slice(2, 3)
		flat := y.Reshape(6)
		if got := row.Float32s(); !slices.Equal(got, []float32{50, 60}) {
			t.Errorf("Slice(2, 3) = %v, want [50 60]", got)
		}
		if got := flat.Float32s(); !slices.Equal(got, []float32{10, 20, 30, 40, 50, 60}) {
			t.Errorf("Reshape(6) = %v", got)
		}
		if d.downloads != 1 {
			t.Errorf("reading two views downloaded %d times, want 1", d.downloads)
		}
		// An op on a view reads the right rows of the allocation.
		z := tensor.Scale(y.Slice(1, 2), 0.5)
		if got := z.Float32s(); !slices.Equal(got, []float32{15, 20}) {
			t.Errorf("Scale(Slice(1, 2), 0.5) = %v, want [15 20]", got)
		}
	})
	// Back on pure Go, device-resident tensors are read from the host copy.
	on(tensor.Go{}, func() {
		y := tensor.Scale(x, 10)
		on(d, func() { y = tensor.Scale(x, 10) })
		z := tensor.Add(y, y)
		if got := z.Data(); !slices.Equal(got, []float32{20, 40, 60, 80, 100, 120}) {
			t.Errorf("pure Go over a device-resident tensor: %v", got)
		}
	})
}

// TestNullDeviceBackward: with a device backend the forward pass runs on
// the device and Backward on the host; gradients equal pure Go's.
func TestNullDeviceBackward(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	randT := func(shape ...int) *tensor.Tensor {
		x := tensor.New(shape...)
		for i := range x.Data() {
			x.Data()[i] = float32(r.NormFloat64())
		}
		return x
	}
	x, w, g := randT(3, 8), randT(5, 8), randT(8)
	grads := func(b tensor.Backend) (loss float32, dw, dg []float32) {
		w.SetRequiresGrad(true).ZeroGrad()
		g.SetRequiresGrad(true).ZeroGrad()
		on(b, func() {
			tape := tensor.NewTape()
			tensor.Record(tape)
			h := tensor.RMSNorm(x, g, 1e-5)
			y := tensor.SiLU(tensor.MatMul(h, w))
			l := tensor.CrossEntropy(y, []int32{0, 4, 2})
			tensor.Record(nil)
			tape.Backward(l)
			loss = l.Float32s()[0]
		})
		return loss, w.Grad().Float32s(), g.Grad().Float32s()
	}
	l0, dw0, dg0 := grads(tensor.Go{})
	l1, dw1, dg1 := grads(&nullDevice{})
	if l0 != l1 || !slices.Equal(dw0, dw1) || !slices.Equal(dg0, dg1) {
		t.Errorf("null device: loss %v, dw[:3] %v, dg[:3] %v; pure Go: %v, %v, %v", l1, dw1[:3], dg1[:3], l0, dw0[:3], dg0[:3])
	}
}
