// The residency hook, tested with a null device: a DeviceBackend whose
// "device memory" is Go byte slices and whose ops are tensor.Go{}'s, so that
// every result must be bit-identical to pure Go, while counters show what
// crossed between host and device.

package tensor_test

import (
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

func (b *nullBuf) CopyFromHost(src []byte) {
	b.d.uploads++
	copy(b.mem, src)
}

func (b *nullBuf) CopyToHost(dst []byte, off int) {
	b.d.downloads++
	copy(dst, b.mem[off:off+len(dst)])
}

// nullDevice counts uploads (host → device copies), downloads (device →
// host), allocations and the allocations cleared to zeros.
type nullDevice struct {
	uploads, downloads, allocs, clears int
}

var _ tensor.DeviceBackend = (*nullDevice)(nil)

func (d *nullDevice) Name() string   { return "null" }
func (d *nullDevice) Device() string { return "null device" }

func (d *nullDevice) Alloc(size int, zero bool) tensor.DeviceStorage {
	d.allocs++
	if zero {
		d.clears++
	}
	return &nullBuf{mem: make([]byte, size), d: d}
}

func nbytes(t *tensor.Tensor) int {
	n, _ := t.DType().RowBytes(t.Len())
	return n
}

// in returns a device-side copy of t as a host-only tensor for tensor.Go{}.
func (d *nullDevice) in(t *tensor.Tensor) *tensor.Tensor {
	if t == nil {
		return nil
	}
	s, off := tensor.DeviceIn(d, t)
	x, err := tensor.FromBytes(t.DType(), slices.Clone(s.(*nullBuf).mem[off:off+nbytes(t)]), t.Shape()...)
	if err != nil {
		panic(err)
	}
	return x
}

// out runs op into a host tensor shaped like t, then stores the result in
// t's device storage.
func (d *nullDevice) out(t *tensor.Tensor, op func(o *tensor.Tensor)) {
	o := tensor.New(t.Shape()...)
	op(o)
	s, off := tensor.DeviceOut(d, t)
	copy(s.(*nullBuf).mem[off:], o.Bytes())
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
	tensor.DeviceIn(d, out) // a part of out: the rest stays
	s, off := tensor.DeviceOut(d, out)
	C, n := out.Cols(), src.Cols()
	for r := 0; r < src.Rows(); r++ {
		copy(s.(*nullBuf).mem[off+4*(r*C+at):], src.Bytes()[4*r*n:4*(r+1)*n])
	}
}
func (d *nullDevice) SetRows(dst *tensor.Tensor, at int, src *tensor.Tensor) {
	src = d.in(src)
	tensor.DeviceIn(d, dst) // the rows around them stay
	s, off := tensor.DeviceOut(d, dst)
	rb, _ := dst.DType().RowBytes(dst.Cols())
	copy(s.(*nullBuf).mem[off+at*rb:], src.Bytes())
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
		// Per layer: 2 norms, Q, K, V, O, gate, up, down; then embedding,
		// output norm and output head. The K and V caches are cleared on the
		// device, not uploaded.
		weights := len(m.Blocks)*(2+7) + 3
		if d.uploads != weights {
			t.Errorf("prefill uploaded %d tensors, want %d (each weight once)", d.uploads, weights)
		}
		if d.clears != 2*len(m.Blocks) {
			t.Errorf("prefill cleared %d allocations on the device, want %d (the caches)", d.clears, 2*len(m.Blocks))
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
		if d.allocs != 2 {
			t.Fatalf("Scale on a device backend made %d allocations, want 2 (x and its output)", d.allocs)
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

// TestNullDeviceOut: DeviceOut gives a whole fresh tensor memory with
// nothing copied over, but brings the whole allocation over for a view of
// it, so that the rows around the view survive the write; a tensor another
// device holds comes to the next one through the host.
func TestNullDeviceOut(t *testing.T) {
	d := &nullDevice{}
	fresh := tensor.New(2, 2)
	if s, off := tensor.DeviceOut(d, fresh); s == nil || off != 0 || d.uploads != 0 || d.clears != 0 {
		t.Fatalf("DeviceOut of a host tensor: offset %d, %d uploads, %d clears; want 0, 0, 0", off, d.uploads, d.clears)
	}

	x := tensor.FromFloat32([]float32{1, 2, 3, 4, 5, 6}, 3, 2)
	x.ShareStorage()
	row := x.Slice(1, 2)
	s, off := tensor.DeviceOut(d, row)
	if off != 8 || d.uploads != 1 {
		t.Fatalf("DeviceOut of row 1: offset %d, %d uploads; want 8, 1 (the whole of x)", off, d.uploads)
	}
	copy(s.(*nullBuf).mem[off:], tensor.FromFloat32([]float32{30, 40}, 1, 2).Bytes())
	if got := x.Float32s(); !slices.Equal(got, []float32{1, 2, 30, 40, 5, 6}) {
		t.Errorf("after writing row 1 on the device, x = %v", got)
	}

	e := &nullDevice{}
	var y *tensor.Tensor
	on(d, func() { y = tensor.Scale(x, 2) })
	down := d.downloads
	on(e, func() { y = tensor.Scale(y, 0.5) })
	if d.downloads-down != 1 || e.uploads != 1 {
		t.Errorf("moving a tensor between devices: %d downloads from the first, %d uploads to the second; want 1, 1", d.downloads-down, e.uploads)
	}
	if got := y.Float32s(); !slices.Equal(got, []float32{1, 2, 30, 40, 5, 6}) {
		t.Errorf("x·2·0.5 across two devices = %v", got)
	}
}
