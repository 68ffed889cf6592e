// The pure-Go backend: plain loops, the reference every other backend is
// tested against. Results follow llama.cpp's CPU arithmetic (float64 sums in
// norms and softmax, fp16-table GELU, iterated RoPE angles).

package tensor

import (
	"math"
	"sync"

	"github.com/toyml/toy/toy/tensor/quant"
)

// Go is the pure-Go backend.
type Go struct{}

// Name returns "go".
func (Go) Name() string { return "go" }

// rowsGrain is the fewest rows a goroutine gets in row-wise ops.
const rowsGrain = 4

func (Go) Add(out, a, b *Tensor) {
	byRows(out, a, b, func(o, x, y []float32) {
		x, y = x[:len(o)], y[:len(o)]
		for i := range o {
			o[i] = x[i] + y[i]
		}
	})
}

func (Go) Mul(out, a, b *Tensor) {
	byRows(out, a, b, func(o, x, y []float32) {
		x, y = x[:len(o)], y[:len(o)]
		for i := range o {
			o[i] = x[i] * y[i]
		}
	})
}

// byRows runs f over out and a in pieces of b's length, each with all of b:
// b is as long as a, or one row of it (broadcast to every row).
func byRows(out, a, b *Tensor, f func(o, x, y []float32)) {
	o, av, bv := out.f32, a.f32, b.f32
	for i := 0; i < len(o); i += len(bv) {
		n := len(bv)
		f(o[i:i+n:i+n], av[i:i+n:i+n], bv)
	}
}

func (Go) Scale(out, a *Tensor, s float32) {
	for i, v := range a.f32 {
		out.f32[i] = v * s
	}
}

func (Go) RMSNorm(out, x, w *Tensor, eps float32) {
	D := x.Cols()
	parallelFor(x.Rows(), rowsGrain, func(lo, hi int) {
		for r := lo; r < hi; r++ {
			xr, or := x.f32[r*D:(r+1)*D], out.f32[r*D:(r+1)*D]
			var sum float64
			for _, v := range xr {
				sum += float64(v * v)
			}
			mean := float32(sum / float64(D))
			scale := 1 / float32(math.Sqrt(float64(mean+eps)))
			for i, v := range xr {
				or[i] = v * scale
			}
			if w != nil {
				for i := range or {
					or[i] *= w.f32[i]
				}
			}
		}
	})
}

func (Go) LayerNorm(out, x, w, b *Tensor, eps float32) {
	D := x.Cols()
	parallelFor(x.Rows(), rowsGrain, func(lo, hi int) {
		for r := lo; r < hi; r++ {
			xr, or := x.f32[r*D:(r+1)*D], out.f32[r*D:(r+1)*D]
			var sum float64
			for _, v := range xr {
				sum += float64(v)
			}
			mean := float32(sum / float64(D))
			var sq float64
			for i, v := range xr {
				d := v - mean
				or[i] = d
				sq += float64(d * d)
			}
			variance := float32(sq / float64(D))
			scale := 1 / float32(math.Sqrt(float64(variance+eps)))
			for i := range or {
				or[i] *= scale
			}
			if w != nil {
				for i := range or {
					or[i] *= w.f32[i]
				}
			}
			if b != nil {
				for i := range or {
					or[i] += b.f32[i]
				}
			}
		}
	})
}

func (Go) RoPE(out, x *Tensor, pos0 int, o RoPEOptions) { rope(out, x, pos0, o, 1) }

func (Go) Softmax(out, x *Tensor, past int) {
	C := x.Cols()
	parallelFor(x.Rows(), rowsGrain, func(lo, hi int) {
		for r := lo; r < hi; r++ {
			n := C
			if past >= 0 {
				n = min(C, past+r+1)
			}
			softmaxRow(out.f32[r*C:r*C+n], x.f32[r*C:r*C+n])
			clear(out.f32[r*C+n : (r+1)*C])
		}
	})
}

// softmaxRow writes softmax(x) to out: max-subtracted exponentials, their sum
// in float64, then one multiplication by 1/sum.
func softmaxRow(out, x []float32) { softmaxSink(out, x, float32(math.Inf(-1))) }

// softmaxSink is softmaxRow with one more logit, sink, in the normalisation
// and not in the output (an attention sink; −∞: none), as llama.cpp's
// soft_max with sinks computes it: the max taken over the row and the
// sink, the sink's term added after the row's sum.
func softmaxSink(out, x []float32, sink float32) {
	m := sink
	for _, v := range x {
		m = max(m, v)
	}
	var sum float64
	for i, v := range x {
		e := softmaxExp(v - m)
		out[i] = e
		sum += float64(e)
	}
	if !math.IsInf(float64(sink), -1) {
		sum += float64(softmaxExp(sink - m))
	}
	inv := float32(1 / sum)
	for i := range out {
		out[i] *= inv
	}
}

// softmaxExp is float32(e^x), or 0 where e^x is below float32's smallest
// normal number, 2⁻¹²⁶. A softmax's sum is at least 1 (its largest term is
// e⁰), so such a term changes no sum and, weighing a value, adds less than
// 2⁻¹²⁶ of it; but a CPU takes a microcode assist of a hundred cycles or
// more at each denormal float it multiplies. Scores spread wider than 87
// (soft-capped or sharply peaked heads) made attention five times slower.
func softmaxExp(x float32) float32 {
	e := math.Exp(float64(x))
	if e < 0x1p-126 {
		return 0
	}
	return float32(e)
}

func (Go) SiLU(out, x *Tensor) {
	for i, v := range x.f32 {
		out.f32[i] = silu(v)
	}
}

func silu(v float32) float32 { return v / (1 + float32(math.Exp(float64(-v)))) }

func (Go) Tanh(out, x *Tensor) {
	for i, v := range x.f32 {
		out.f32[i] = tanh32(v)
	}
}

// tanh32 is tanh in double precision, rounded to float32.
func tanh32(v float32) float32 { return float32(math.Tanh(float64(v))) }

func (Go) SwiGLU(out, gate, up *Tensor) {
	for i, g := range gate.f32 {
		out.f32[i] = silu(g) * up.f32[i]
	}
}

// geluTable holds GELU of every fp16 input, rounded to fp16: ggml evaluates
// GELU by rounding x to fp16 and looking it up, and toy does the same so that
// GPT-2 matches llama.cpp to 1e-4 rather than ~3e-3.
var geluTable = sync.OnceValue(func() *[1 << 16]uint16 {
	var t [1 << 16]uint16
	for i := range t {
		t[i] = quant.F32ToFP16(geluExact(quant.FP16ToF32(uint16(i))))
	}
	return &t
})

// geluExact is tanh-GELU in float32.
func geluExact(x float32) float32 {
	const sqrt2OverPi, coefA = 0.79788456080286535587989211986876, 0.044715
	return 0.5 * x * (1 + float32(math.Tanh(float64(sqrt2OverPi*x*(1+coefA*x*x)))))
}

func (Go) GELU(out, x *Tensor) {
	tab := geluTable()
	for i, v := range x.f32 {
		switch {
		case v <= -10:
			out.f32[i] = 0
		case v >= 10:
			out.f32[i] = v
		default:
			out.f32[i] = quant.FP16ToF32(tab[quant.F32ToFP16(v)])
		}
	}
}

func (Go) Embedding(out, table *Tensor, ids []int32) {
	D := table.shape[1]
	rowBytes, _ := table.dtype.RowBytes(D)
	for t, id := range ids {
		dst := out.f32[t*D : (t+1)*D]
		if table.dtype == F32 {
			copy(dst, table.f32[int(id)*D:])
			continue
		}
		DecodeRow(dst, table.raw[int(id)*rowBytes:(int(id)+1)*rowBytes], table.dtype)
	}
}

func (Go) Attention(out, q, k, v *Tensor, nHead, nKV, past int, o AttentionOptions) {
	T, dh := q.Rows(), q.Cols()/nHead
	group := nHead / nKV
	qc, kc := q.Cols(), k.Cols()
	parallelFor(T*nHead, 1, func(lo, hi int) {
		scores := make([]float32, past+T)
		for job := lo; job < hi; job++ {
			t, h := job/nHead, job%nHead
			kvh := h / group
			qr := q.f32[t*qc+h*dh : t*qc+(h+1)*dh]
			first, last := o.Keys(t, T, past) // the keys this query sees
			p := scores[first : last+1]
			for s := first; s <= last; s++ {
				p[s-first] = o.softCap(dotF32(k.f32[s*kc+kvh*dh:s*kc+(kvh+1)*dh], qr) * o.Scale)
			}
			softmaxSink(p, p, o.sink(h))
			or := out.f32[t*qc+h*dh : t*qc+(h+1)*dh]
			clear(or)
			for s := first; s <= last; s++ {
				ps := p[s-first]
				vr := v.f32[s*kc+kvh*dh : s*kc+(kvh+1)*dh]
				for i := range or {
					or[i] += ps * vr[i]
				}
			}
		}
	})
}

func (Go) SetRows(dst *Tensor, at int, src *Tensor) {
	C := dst.Cols()
	copy(dst.f32[at*C:], src.f32)
}

func (Go) Columns(out, x *Tensor, from int) {
	C, n := x.Cols(), out.Cols()
	for r := range x.Rows() {
		copy(out.f32[r*n:(r+1)*n], x.f32[r*C+from:r*C+from+n])
	}
}

func (Go) PlaceColumns(out, src *Tensor, at int) {
	C, n := out.Cols(), src.Cols()
	for r := range src.Rows() {
		copy(out.f32[r*C+at:r*C+at+n], src.f32[r*n:(r+1)*n])
	}
}
