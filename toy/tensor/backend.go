// The backend seam: the ops a compute device implements, and the functions
// that check shapes, allocate results and dispatch to the active backend.

package tensor

import (
	"fmt"
	"math"
	"slices"
	"sync"
)

// Backend is the small set of ops a compute device provides. Every method
// writes into out, which the caller has allocated with the right shape;
// shapes have been checked before a backend sees them.
type Backend interface {
	Name() string

	// MatMul: out[M, N] = x[M, K] · w[N, K]ᵀ, w of any supported type.
	MatMul(out, x, w *Tensor)
	// Add, Mul: elementwise; b has a's shape, or is one row broadcast over a's rows.
	Add(out, a, b *Tensor)
	Mul(out, a, b *Tensor)
	// Scale: out = a·s.
	Scale(out, a *Tensor, s float32)
	// RMSNorm: out = x / sqrt(mean(x²) + eps), per row, times w if not nil.
	RMSNorm(out, x, w *Tensor, eps float32)
	// LayerNorm: out = (x - mean) / sqrt(var + eps) · w + b per row (w, b may be nil).
	LayerNorm(out, x, w, b *Tensor, eps float32)
	// RoPE rotates the first o.Dim features of each head of x [T, H·Dh],
	// token t at position pos0+t, as RoPEWith describes.
	RoPE(out, x *Tensor, pos0 int, o RoPEOptions)
	// Softmax per row; with past ≥ 0, row t sees only columns ≤ past+t.
	Softmax(out, x *Tensor, past int)
	SiLU(out, x *Tensor)
	// Tanh: out = tanh(x), elementwise.
	Tanh(out, x *Tensor)
	GELU(out, x *Tensor)
	// GELUErf: out = x·Φ(x), the exact GELU, each value in float64
	// rounded once.
	GELUErf(out, x *Tensor)
	// Sigmoid: out = 1/(1 + e^{−x}).
	Sigmoid(out, x *Tensor)
	// Softplus: out = log(1 + e^x), x itself past 20.
	Softplus(out, x *Tensor)
	// SwiGLU: out = SiLU(gate) · up.
	SwiGLU(out, gate, up *Tensor)
	// SwiGLUOAI: gpt-oss's clamped SwiGLU, x·σ(alpha·x)·(y + 1) with
	// x = min(gate, limit), y = clamp(up, −limit, limit).
	SwiGLUOAI(out, gate, up *Tensor, alpha, limit float32)
	// Embedding: out[t] = table[ids[t]] as F32.
	Embedding(out, table *Tensor, ids []int32)
	// Attention: scaled-dot-product attention of q [T, H·Dh] over the
	// first past+T rows of k, v [S, KV·Dh], grouped heads when KV < H;
	// causal unless o says otherwise (see AttentionOptions).
	Attention(out, q, k, v *Tensor, nHead, nKV, past int, o AttentionOptions)
	// SetRows copies src [n, C] into rows [at, at+n) of dst [R, C].
	SetRows(dst *Tensor, at int, src *Tensor)
	// Columns copies columns [from, from+out.Cols()) of every row of x
	// into out (splitting fused projections).
	Columns(out, x *Tensor, from int)
	// PlaceColumns copies src [R, n] into columns [at, at+n) of out [R, C].
	// ConcatColumns calls it once for each part, on an out it has just
	// allocated, so a backend may treat out as written only: the columns
	// no call places are undefined.
	PlaceColumns(out, src *Tensor, at int)
	// ScatterAdd writes dst to out, then adds scale[j]·src[j] to row
	// ids[j] of out for j = 0, 1, … in order (scale nil: 1), each product
	// rounded before it is added.
	ScatterAdd(out, dst, src *Tensor, ids []int32, scale *Tensor)
	// CausalConv: y_t = Σ_j taps[:, j] ⊙ x_{t−L+1+j} for x [T, C], taps
	// [C, L], the positions before x from past [(L−1)·C] (nil: zeros),
	// the products added in tap order.
	CausalConv(out, past, x, taps *Tensor)
}

// Fused ops. Beside the primitives, a backend may offer a fused kernel for
// a larger op as an optional interface: ExpertsBackend (a mixture of
// experts' routing, kept on a device) and GatedDeltaNetBackend (the gated
// delta rule over all heads and tokens). Go offers none: each op's plain
// path, in Go on the host, is the reference its kernels are tested against.
// Every such op asks fused, under one rule: the kernel runs when the active
// backend offers it, unless the call records a gradient that only the
// plain path can give (grad).
//
// fused returns the backend for the op's inputs ts (beFor) and, when the
// kernel runs, the backend as F with ok true.
func fused[F any](grad bool, ts ...*Tensor) (b Backend, f F, ok bool) {
	b = beFor(ts...)
	if f, ok = b.(F); !ok || grad {
		var none F
		return b, none, false
	}
	return b, f, true
}

var (
	backendMu sync.RWMutex
	active    Backend = Go{}
)

// SetBackend makes b the backend all ops run on.
func SetBackend(b Backend) {
	backendMu.Lock()
	active = b
	backendMu.Unlock()
}

// ActiveBackend returns the backend ops run on.
func ActiveBackend() Backend {
	backendMu.RLock()
	defer backendMu.RUnlock()
	return active
}

func be() Backend { return ActiveBackend() }

func mustF32(op, name string, t *Tensor) {
	if t.dtype != F32 {
		panic(fmt.Sprintf("%s: %s is %v %v, want F32", op, name, t.dtype, t.shape))
	}
}

func like(x *Tensor) *Tensor { return New(x.shape...) }

// MatMul returns x·wᵀ: x [M, K] (F32), w [N, K] (any type) → [M, N].
func MatMul(x, w *Tensor) *Tensor {
	mustF32("MatMul", "x", x)
	if len(w.shape) != 2 || x.Cols() != w.shape[1] {
		panic(fmt.Sprintf("MatMul: x %v and w %v: inner dimensions differ", x.shape, w.shape))
	}
	b := beFor(x, w)
	out := newOut(b, x.Rows(), w.shape[0])
	b.MatMul(out, x, w)
	record("MatMul", out, func(g *Tensor) []*Tensor {
		dx, dw := matmulGrads(g, x, w)
		return []*Tensor{dx, dw}
	}, x, w)
	return out
}

func checkBroadcast(op string, a, b *Tensor) {
	mustF32(op, "a", a)
	mustF32(op, "b", b)
	if b.Len() != a.Len() && b.Len() != a.Cols() {
		panic(fmt.Sprintf("%s: shapes %v and %v: b must match a or be one row of it", op, a.shape, b.shape))
	}
}

// Add returns a + b (b the same shape as a, or one row added to every row).
func Add(a, b *Tensor) *Tensor {
	checkBroadcast("Add", a, b)
	bk := beFor(a, b)
	out := newOut(bk, a.shape...)
	bk.Add(out, a, b)
	record("Add", out, func(g *Tensor) []*Tensor { return []*Tensor{g, broadcastGrad(g, b)} }, a, b)
	return out
}

// Mul returns a ⊙ b (b the same shape as a, or one row applied to every row).
func Mul(a, b *Tensor) *Tensor {
	checkBroadcast("Mul", a, b)
	bk := beFor(a, b)
	out := newOut(bk, a.shape...)
	bk.Mul(out, a, b)
	record("Mul", out, func(g *Tensor) []*Tensor {
		da, db := like(a), like(g)
		Go{}.Mul(da, g, b)
		Go{}.Mul(db, g, a)
		return []*Tensor{da, broadcastGrad(db, b)}
	}, a, b)
	return out
}

// Scale returns a·s.
func Scale(a *Tensor, s float32) *Tensor {
	mustF32("Scale", "a", a)
	b := beFor(a)
	out := newOut(b, a.shape...)
	b.Scale(out, a, s)
	record("Scale", out, func(g *Tensor) []*Tensor {
		d := like(g)
		Go{}.Scale(d, g, s)
		return []*Tensor{d}
	}, a)
	return out
}

func checkRowVec(op, name string, x, w *Tensor) {
	if w == nil {
		return
	}
	mustF32(op, name, w)
	if w.Len() != x.Cols() {
		panic(fmt.Sprintf("%s: x %v and %s %v: want %d elements", op, x.shape, name, w.shape, x.Cols()))
	}
}

// RMSNorm returns x / sqrt(mean(x²) + eps) ⊙ w per row; w [D] may be nil.
func RMSNorm(x, w *Tensor, eps float32) *Tensor {
	mustF32("RMSNorm", "x", x)
	checkRowVec("RMSNorm", "w", x, w)
	b := beFor(x, w)
	out := newOut(b, x.shape...)
	b.RMSNorm(out, x, w, eps)
	record("RMSNorm", out, func(g *Tensor) []*Tensor {
		dx, dw := rmsNormGrads(g, x, w, eps)
		return []*Tensor{dx, dw}
	}, x, w)
	return out
}

// LayerNorm returns (x - mean)/sqrt(var + eps) ⊙ w + b per row; w, b [D] may be nil.
func LayerNorm(x, w, b *Tensor, eps float32) *Tensor {
	mustF32("LayerNorm", "x", x)
	checkRowVec("LayerNorm", "w", x, w)
	checkRowVec("LayerNorm", "b", x, b)
	bk := beFor(x, w, b)
	out := newOut(bk, x.shape...)
	bk.LayerNorm(out, x, w, b, eps)
	record("LayerNorm", out, func(g *Tensor) []*Tensor {
		dx, dw, db := layerNormGrads(g, x, w, b, eps)
		return []*Tensor{dx, dw, db}
	}, x, w, b)
	return out
}

// Reshape returns x's elements under a new shape, as a view through which
// gradients flow (the method Tensor.Reshape makes a view the tape does not
// see). Per-head ops use it: [T, H·Dh] as [T·H, Dh] and back.
func Reshape(x *Tensor, shape ...int) *Tensor {
	out := x.Reshape(shape...)
	out.requiresGrad, out.grad = false, nil // a new node, not x's leaf state
	record("Reshape", out, func(g *Tensor) []*Tensor { return []*Tensor{g.Reshape(x.shape...)} }, x)
	return out
}

// Softmax returns exp(x − max) / Σ exp(x − max) per row, a term below
// float32's smallest normal number (2⁻¹²⁶) as 0. With past ≥ 0 it is
// causal: row t keeps columns 0 … past+t and gives the rest probability 0.
func Softmax(x *Tensor, past int) *Tensor {
	mustF32("Softmax", "x", x)
	b := beFor(x)
	out := newOut(b, x.shape...)
	b.Softmax(out, x, past)
	record("Softmax", out, func(g *Tensor) []*Tensor { return []*Tensor{softmaxGrad(g, out)} }, x)
	return out
}

// SiLU returns x·σ(x).
func SiLU(x *Tensor) *Tensor {
	mustF32("SiLU", "x", x)
	b := beFor(x)
	out := newOut(b, x.shape...)
	b.SiLU(out, x)
	record("SiLU", out, func(g *Tensor) []*Tensor {
		d := like(g)
		for i, v := range x.f32 {
			d.f32[i] = g.f32[i] * siluGrad(v)
		}
		return []*Tensor{d}
	}, x)
	return out
}

// Tanh returns tanh(x) elementwise; d tanh(x)/dx = 1 − tanh²(x).
// Gemma 2 soft-caps its logits with it: c·tanh(z/c).
func Tanh(x *Tensor) *Tensor {
	mustF32("Tanh", "x", x)
	b := beFor(x)
	out := newOut(b, x.shape...)
	b.Tanh(out, x)
	record("Tanh", out, func(g *Tensor) []*Tensor {
		d := like(g)
		for i, v := range x.f32 {
			y := tanh32(v)
			d.f32[i] = g.f32[i] * (1 - y*y)
		}
		return []*Tensor{d}
	}, x)
	return out
}

// GELU returns the tanh approximation ½x(1 + tanh(√(2/π)(x + 0.044715x³))).
// For inference it is evaluated like ggml, through an fp16 table (≤ 4e-3 from
// exact, and what llama.cpp gives); while a tape records (training) it is
// exact, as PyTorch's gelu(approximate="tanh").
func GELU(x *Tensor) *Tensor {
	mustF32("GELU", "x", x)
	if !Recording() || !x.requiresGrad {
		b := beFor(x)
		out := newOut(b, x.shape...)
		b.GELU(out, x)
		return out
	}
	out := like(x)
	for i, v := range x.hostRead().f32 {
		out.f32[i] = geluExact(v)
	}
	record("GELU", out, func(g *Tensor) []*Tensor {
		d := like(g)
		for i, v := range x.f32 {
			d.f32[i] = g.f32[i] * geluGrad(v)
		}
		return []*Tensor{d}
	}, x)
	return out
}

// SwiGLU returns SiLU(gate) ⊙ up.
func SwiGLU(gate, up *Tensor) *Tensor {
	mustF32("SwiGLU", "gate", gate)
	mustF32("SwiGLU", "up", up)
	if gate.Len() != up.Len() {
		panic(fmt.Sprintf("SwiGLU: gate %v and up %v differ", gate.shape, up.shape))
	}
	b := beFor(gate, up)
	out := newOut(b, gate.shape...)
	b.SwiGLU(out, gate, up)
	record("SwiGLU", out, func(g *Tensor) []*Tensor {
		dg, du := like(g), like(g)
		for i, v := range gate.f32 {
			dg.f32[i] = g.f32[i] * up.f32[i] * siluGrad(v)
			du.f32[i] = g.f32[i] * silu(v)
		}
		return []*Tensor{dg, du}
	}, gate, up)
	return out
}

// Embedding returns the rows of table [V, D] named by ids, as F32 [T, D].
func Embedding(table *Tensor, ids []int32) *Tensor {
	if len(table.shape) != 2 {
		panic(fmt.Sprintf("Embedding: table %v is not a matrix", table.shape))
	}
	for _, id := range ids {
		if id < 0 || int(id) >= table.shape[0] {
			panic(fmt.Sprintf("Embedding: id %d out of range for table %v", id, table.shape))
		}
	}
	b := beFor(table)
	out := newOut(b, len(ids), table.shape[1])
	b.Embedding(out, table, ids)
	record("Embedding", out, func(g *Tensor) []*Tensor {
		D := table.shape[1]
		d := New(table.shape...)
		for t, id := range ids {
			axpy(d.f32[int(id)*D:(int(id)+1)*D], 1, g.f32[t*D:(t+1)*D])
		}
		return []*Tensor{d}
	}, table)
	return out
}

// AttentionOptions select an attention op's scores and mask. The zero
// value but for Scale is plain causal attention.
type AttentionOptions struct {
	// Scale multiplies each score q·k; usually 1/√Dh.
	Scale float32
	// SoftCap, when > 0, bounds each scaled score s smoothly to
	// (−SoftCap, SoftCap) before the softmax: s ← SoftCap·tanh(s/SoftCap)
	// (Gemma 2's attention logit soft-capping).
	SoftCap float32
	// Window, when > 0, is a sliding window: the query at position p sees
	// only the keys at positions p−Window+1 … p (Mistral, Gemma 2's local
	// layers).
	Window int
	// Bidirectional drops the causal mask: every query sees all past+T keys
	// (encoders: ViT).
	Bidirectional bool
	// Chunk, when > 0, cuts the positions into chunks of Chunk (0 … Chunk−1,
	// Chunk … 2·Chunk−1, …): a query sees only the keys of its own chunk
	// (Llama 4's chunked local attention). It combines with Window and the
	// causal mask.
	Chunk int
	// Sinks, when set, holds one logit per query head [H] that joins each
	// softmax as a key with no value (gpt-oss's attention sinks): the
	// probabilities of the real keys sum to less than 1,
	// p_s = e^{u_s} / (Σ_s' e^{u_s'} + e^{sink_h}). F32; a constant (no
	// gradient reaches it).
	Sinks *Tensor
}

// Keys returns the keys query t (at position past+t) of T sees: lo … hi.
func (o AttentionOptions) Keys(t, T, past int) (lo, hi int) {
	hi = past + t
	if o.Bidirectional {
		hi = past + T - 1
	}
	if o.Window > 0 {
		lo = max(0, past+t-o.Window+1)
	}
	if o.Chunk > 0 {
		start := (past + t) / o.Chunk * o.Chunk // the first position of the query's chunk
		lo, hi = max(lo, start), min(hi, start+o.Chunk-1)
	}
	return lo, hi
}

// sink is head h's sink logit, −∞ without sinks.
func (o AttentionOptions) sink(h int) float32 {
	if o.Sinks == nil {
		return float32(math.Inf(-1))
	}
	return o.Sinks.Data()[h]
}

// softCap applies o's score cap to a scaled score s.
func (o AttentionOptions) softCap(s float32) float32 {
	if o.SoftCap <= 0 {
		return s
	}
	return o.SoftCap * tanh32(s/o.SoftCap)
}

// Attention returns causal attention of q [T, H·Dh] over the first past+T rows
// of k, v [S, KV·Dh]: query t (at position past+t) attends to keys 0 … past+t,
//
//	out = softmax(scale · q·kᵀ + mask) · v,
//
// head h using key/value head h/(H/KV).
func Attention(q, k, v *Tensor, nHead, nKV, past int, scale float32) *Tensor {
	return AttentionWith(q, k, v, nHead, nKV, past, AttentionOptions{Scale: scale})
}

// AttentionWith is Attention with the scores and mask o chooses: soft-capped
// scores, a sliding window, chunks, or no causal mask,
//
//	out = softmax(cap(o.Scale · q·kᵀ) + mask) · v.
func AttentionWith(q, k, v *Tensor, nHead, nKV, past int, o AttentionOptions) *Tensor {
	mustF32("Attention", "q", q)
	mustF32("Attention", "k", k)
	mustF32("Attention", "v", v)
	T := q.Rows()
	if nHead <= 0 || nKV <= 0 || nHead%nKV != 0 || q.Cols()%nHead != 0 {
		panic(fmt.Sprintf("Attention: q %v with %d heads, %d KV heads", q.shape, nHead, nKV))
	}
	dh := q.Cols() / nHead
	if k.Cols() != nKV*dh || v.Cols() != nKV*dh || k.Rows() < past+T || v.Rows() < past+T {
		panic(fmt.Sprintf("Attention: q %v, k %v, v %v: want k, v with ≥ %d rows of %d", q.shape, k.shape, v.shape, past+T, nKV*dh))
	}
	if o.SoftCap < 0 || o.Window < 0 || o.Chunk < 0 || math.IsNaN(float64(o.SoftCap)) {
		panic(fmt.Sprintf("Attention: options %+v: soft cap, window and chunk must be ≥ 0", o))
	}
	if o.Chunk >= past+T {
		o.Chunk = 0 // every position lies in the first chunk: nothing to mask
	}
	if o.Sinks != nil && (o.Sinks.dtype != F32 || o.Sinks.Len() != nHead) {
		panic(fmt.Sprintf("Attention: sinks %v %v for %d heads, want F32 [%d]", o.Sinks.dtype, o.Sinks.shape, nHead, nHead))
	}
	b := beFor(q, k, v)
	if o.Chunk > 0 && isDeviceBackend(b) {
		// No device kernel masks by chunk yet: past its first chunk, chunked
		// attention runs on the host (the device's copies of q, k and v
		// come back first, and the output goes up at its next use).
		b = Go{}
		q.hostRead()
		k.hostRead()
		v.hostRead()
	}
	out := newOut(b, q.shape...)
	b.Attention(out, q, k, v, nHead, nKV, past, o)
	record("Attention", out, func(g *Tensor) []*Tensor {
		dq, dk, dv := attentionGrads(g, q, k, v, nHead, nKV, past, o)
		return []*Tensor{dq, dk, dv}
	}, q, k, v)
	return out
}

// SetRows copies src [n, C] into rows [at, at+n) of dst [R, C].
func SetRows(dst *Tensor, at int, src *Tensor) {
	mustF32("SetRows", "dst", dst)
	mustF32("SetRows", "src", src)
	if src.Cols() != dst.Cols() || at < 0 || at+src.Rows() > dst.Rows() {
		panic(fmt.Sprintf("SetRows: %v into rows [%d, %d) of %v", src.shape, at, at+src.Rows(), dst.shape))
	}
	b := beFor(src)
	if !isDeviceBackend(b) && dst.dev != nil {
		dst.hostWrite()
	}
	b.SetRows(dst, at, src)
}

// Columns returns columns [from, to) of every row of x, as a new tensor
// [rows, to−from] (how fused projections are split).
func Columns(x *Tensor, from, to int) *Tensor {
	mustF32("Columns", "x", x)
	C := x.Cols()
	if from < 0 || to > C || from >= to {
		panic(fmt.Sprintf("Columns: [%d, %d) of %v", from, to, x.shape))
	}
	b := beFor(x)
	out := newOut(b, x.Rows(), to-from)
	b.Columns(out, x, from)
	record("Columns", out, func(g *Tensor) []*Tensor {
		d := New(x.shape...)
		for r := 0; r < x.Rows(); r++ {
			copy(d.f32[r*C+from:r*C+to], g.Row(r))
		}
		return []*Tensor{d}
	}, x)
	return out
}

// ConcatColumns returns parts [R, C_i] side by side, as one [R, ΣC_i]
// (torch.cat along the last dimension): row r is part 0's row r, then
// part 1's, and so on.
func ConcatColumns(parts ...*Tensor) *Tensor {
	if len(parts) == 0 {
		panic("ConcatColumns: no parts")
	}
	parts = slices.Clone(parts) // the caller's slice may be reused; the tape keeps these
	R, C := parts[0].Rows(), 0
	for i, p := range parts {
		mustF32("ConcatColumns", fmt.Sprintf("part %d", i), p)
		if len(p.shape) != 2 || p.Rows() != R {
			panic(fmt.Sprintf("ConcatColumns: part %d is %v, part 0 has %d rows", i, p.shape, R))
		}
		C += p.Cols()
	}
	b := beFor(parts...)
	out := newOut(b, R, C)
	at := 0
	for _, p := range parts {
		b.PlaceColumns(out, p, at)
		at += p.Cols()
	}
	record("ConcatColumns", out, func(g *Tensor) []*Tensor {
		grads := make([]*Tensor, len(parts))
		at := 0
		for i, p := range parts {
			n := p.Cols()
			d := New(R, n)
			for r := range R {
				copy(d.f32[r*n:(r+1)*n], g.f32[r*C+at:r*C+at+n])
			}
			grads[i], at = d, at+n
		}
		return grads
	}, parts...)
	return out
}

// CrossEntropy returns the mean over rows of −log softmax(logits)[target]:
// logits [T, V], one target per row; rows whose target is negative (padding,
// ignored positions) are left out of the mean. The result is one element;
// its gradient is (softmax − onehot(target)) / n on the counted rows.
func CrossEntropy(logits *Tensor, targets []int32) *Tensor {
	mustF32("CrossEntropy", "logits", logits)
	T, V := logits.Rows(), logits.Cols()
	if len(targets) != T {
		panic(fmt.Sprintf("CrossEntropy: logits %v with %d targets", logits.shape, len(targets)))
	}
	probs := New(T, V)
	var total float64
	n := 0
	for t, y := range targets {
		if y < 0 {
			continue
		}
		if int(y) >= V {
			panic(fmt.Sprintf("CrossEntropy: target %d out of range for %d classes", y, V))
		}
		row := logits.Row(t)
		m := float32(math.Inf(-1))
		for _, v := range row {
			m = max(m, v)
		}
		var sum float64
		for _, v := range row {
			sum += math.Exp(float64(v - m))
		}
		lse := float64(m) + math.Log(sum)
		total += lse - float64(row[y])
		for i, v := range row {
			probs.Row(t)[i] = float32(math.Exp(float64(v) - lse))
		}
		n++
	}
	loss := New(1)
	if n > 0 {
		loss.f32[0] = float32(total / float64(n))
	}
	record("CrossEntropy", loss, func(g *Tensor) []*Tensor {
		d := New(T, V)
		if n == 0 {
			return []*Tensor{d}
		}
		scale := g.f32[0] / float32(n)
		for t, y := range targets {
			if y < 0 {
				continue
			}
			dr := d.Row(t)
			for i, p := range probs.Row(t) {
				dr[i] = p * scale
			}
			dr[y] -= scale
		}
		return []*Tensor{d}
	}, logits)
	return loss
}

// Sum returns the sum of all elements as a one-element tensor.
func Sum(x *Tensor) *Tensor {
	mustF32("Sum", "x", x)
	x.hostRead()
	var s float64
	for _, v := range x.f32 {
		s += float64(v)
	}
	out := FromFloat32([]float32{float32(s)}, 1)
	record("Sum", out, func(g *Tensor) []*Tensor {
		d := like(x)
		for i := range d.f32 {
			d.f32[i] = g.f32[0]
		}
		return []*Tensor{d}
	}, x)
	return out
}

// Dropout zeroes each element of x with probability p and scales the rest
// by 1/(1−p), with a mask drawn from seed (the same seed, the same mask).
func Dropout(x *Tensor, p float32, seed uint64) *Tensor {
	mustF32("Dropout", "x", x)
	if p <= 0 {
		return x
	}
	if p >= 1 {
		panic(fmt.Sprintf("Dropout: probability %v", p))
	}
	x.hostRead()
	mask := make([]float32, x.Len())
	s := seed
	keep := 1 / (1 - p)
	for i := range mask {
		s += 0x9e3779b97f4a7c15 // splitmix64
		z := (s ^ s>>30) * 0xbf58476d1ce4e5b9
		z = (z ^ z>>27) * 0x94d049bb133111eb
		z ^= z >> 31
		if float32(z>>40)/(1<<24) >= p {
			mask[i] = keep
		}
	}
	out := like(x)
	for i, v := range x.f32 {
		out.f32[i] = v * mask[i]
	}
	record("Dropout", out, func(g *Tensor) []*Tensor {
		d := like(g)
		for i, v := range g.f32 {
			d.f32[i] = v * mask[i]
		}
		return []*Tensor{d}
	}, x)
	return out
}
