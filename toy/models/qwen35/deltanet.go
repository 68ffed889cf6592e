// Qwen3.5's gated delta-rule layer and the state it keeps in the cache.

package qwen35

import (
	"fmt"

	"github.com/toyml/toy/toy/nn"
	"github.com/toyml/toy/toy/tensor"
)

// DeltaNet is the gated delta rule ("linear attention") of Qwen3.5's
// recurrent layers:
//
//	m = x·W_qkvᵀ                              [T, C]
//	q, k, v = split(SiLU(conv(m)))           depthwise causal convolution of L taps
//	β = σ(x·W_βᵀ),  g = A·softplus(x·W_αᵀ + b_dt)      [T, Hv] each
//	o = GatedDeltaNet(q, k, v, g, β)          per value head, a Ds × Ds state
//	out = (RMSNorm_head(o) ⊙ SiLU(x·W_zᵀ))·W_outᵀ
//
// Value head h reads query/key head h mod Hk (Qwen3.5), or with Grouped
// head h/(Hv/Hk) (Qwen3-Next, whose files also give W_β and W_α as one
// projection, BA, and in older conversions W_qkv and W_z as one, In).
type DeltaNet struct {
	QKV   *nn.Linear     `gguf:"attn_qkv,optional" shape:"(2*KHeads+VHeads)*StateDim, Embed" card:"W_qkv, delta rule's query, key and value projection"` // C rows: queries, keys, values
	Z     *nn.Linear     `gguf:"attn_gate,optional" shape:"VHeads*StateDim, Embed" card:"W_z, delta rule's output gate projection"`
	Conv  *tensor.Tensor `gguf:"ssm_conv1d.weight" shape:"(2*KHeads+VHeads)*StateDim, ConvTaps" card:"K, convolution taps, a row per channel"` // F32
	DT    *tensor.Tensor `gguf:"ssm_dt.bias" shape:"VHeads" card:"b_dt, decay bias"`
	A     *tensor.Tensor `gguf:"ssm_a" shape:"VHeads" card:"a, decay rates (a = −exp(A_log))"`
	Beta  *nn.Linear     `gguf:"ssm_beta,optional" shape:"VHeads, Embed" card:"W_β, step projection"`
	Alpha *nn.Linear     `gguf:"ssm_alpha,optional" shape:"VHeads, Embed" card:"W_α, decay projection"`
	Norm  *nn.RMSNorm    `gguf:"ssm_norm" shape:"StateDim" card:"γ_s, delta rule's output norm scale, shared by the heads"`
	Out   *nn.Linear     `gguf:"ssm_out" shape:"Embed, VHeads*StateDim" card:"W_out, delta rule's output projection"`

	// Qwen3-Next's fused projections, per key head kh (r = Hv/Hk value
	// heads to a group): In's rows are q_kh, k_kh, the group's r values
	// and r gates; BA's are the group's r β rows, then its r α rows.
	In *nn.Linear `gguf:"ssm_in,optional" shape:"(2*KHeads+2*VHeads)*StateDim, Embed" card:"W_in, delta rule's W_qkv and W_z, grouped by key head"`
	BA *nn.Linear `gguf:"ssm_ba,optional" shape:"2*VHeads, Embed" card:"W_βα, W_β and W_α, grouped by key head"`

	KHeads, VHeads, StateDim int
	Eps                      float32 // the L2 norm's ε on q and k
	Grouped                  bool    // value head h reads key head h/(Hv/Hk)
}

// How far a delta-rule layer can rewind (see state).
const (
	keepRows  = 64 // positions whose inputs are kept
	snapEvery = 16 // positions between snapshots while decoding
	maxSnaps  = 4  // snapshots kept
)

// Forward runs the layer on x [T, D]. With a cache, the recurrence starts
// from the state the cache holds after cache.Len positions and leaves it
// after the new ones; without one (training) x is the whole sequence from
// position 0.
func (d *DeltaNet) Forward(x *tensor.Tensor, cache *nn.KVCache) *tensor.Tensor {
	T, Hv := x.Rows(), d.VHeads
	m, z := d.project(x)                                       // [T, C], [T, Hv·Ds]
	b, a := d.steps(x)                                         // [T, Hv] each
	beta := tensor.Sigmoid(b)                                  // [T, Hv]
	g := tensor.Mul(tensor.Softplus(tensor.Add(a, d.DT)), d.A) // [T, Hv], ≤ 0
	var o *tensor.Tensor
	if cache == nil {
		o = d.mix(nil, m, g, beta, nil)
	} else {
		o = d.cached(cache, m, g, beta)
	}
	// o: [T, Hv·Ds]; each head RMS-normalised, then gated.
	o = tensor.Reshape(d.Norm.Forward(tensor.Reshape(o, T*Hv, d.StateDim)), T, Hv*d.StateDim)
	return d.Out.Forward(tensor.Mul(o, tensor.SiLU(z)))
}

// project returns m = x·W_qkvᵀ [T, C] and z = x·W_zᵀ [T, Hv·Ds], from In's
// groups when the file fuses them.
func (d *DeltaNet) project(x *tensor.Tensor) (m, z *tensor.Tensor) {
	if d.In == nil {
		return d.QKV.Forward(x), d.Z.Forward(x)
	}
	// One row per (token, key head): [q | k | r values | r gates].
	T, Hk, Ds, r := x.Rows(), d.KHeads, d.StateDim, d.VHeads/d.KHeads
	y := tensor.Reshape(d.In.Forward(x), T*Hk, (2+2*r)*Ds)
	part := func(from, to int) *tensor.Tensor { return tensor.Reshape(tensor.Columns(y, from, to), T, Hk*(to-from)) }
	m = tensor.ConcatColumns(part(0, Ds), part(Ds, 2*Ds), part(2*Ds, (2+r)*Ds))
	return m, part((2+r)*Ds, (2+2*r)*Ds)
}

// steps returns β's and α's projections of x, [T, Hv] each, from BA's
// groups when the file fuses them.
func (d *DeltaNet) steps(x *tensor.Tensor) (beta, alpha *tensor.Tensor) {
	if d.BA == nil {
		return d.Beta.Forward(x), d.Alpha.Forward(x)
	}
	T, Hk, r := x.Rows(), d.KHeads, d.VHeads/d.KHeads
	y := tensor.Reshape(d.BA.Forward(x), T*Hk, 2*r) // one row per (token, key head): [r β | r α]
	return tensor.Reshape(tensor.Columns(y, 0, r), T, d.VHeads), tensor.Reshape(tensor.Columns(y, r, 2*r), T, d.VHeads)
}

// mix convolves m [T, C] (after past, the L−1 positions before it flat
// [1, (L−1)·C], zeros when nil) and runs the delta rule from state S (zeros
// when nil), which it leaves after the T positions.
func (d *DeltaNet) mix(past, m, g, beta, S *tensor.Tensor) *tensor.Tensor {
	C := m.Cols()
	y := tensor.SiLU(tensor.CausalConv(past, m, d.Conv))
	kd := d.KHeads * d.StateDim
	q, k, v := tensor.Columns(y, 0, kd), tensor.Columns(y, kd, 2*kd), tensor.Columns(y, 2*kd, C)
	if r := d.VHeads / d.KHeads; d.Grouped && r > 1 {
		// GatedDeltaNet pairs value head h with key head h mod Hk; repeat
		// each key head r times in place, so that h reads h/r.
		q, k = repeatHeads(q, d.KHeads, r), repeatHeads(k, d.KHeads, r)
	}
	return tensor.GatedDeltaNet(q, k, v, g, beta, S, d.Eps)
}

// repeatHeads returns x [T, H·Ds] with each head repeated r times in
// place: [T, H·r·Ds], head j·r + i a copy of head j.
func repeatHeads(x *tensor.Tensor, H, r int) *tensor.Tensor {
	T := x.Rows()
	heads := tensor.Reshape(x, T*H, x.Cols()/H)
	copies := make([]*tensor.Tensor, r)
	for i := range copies {
		copies[i] = heads
	}
	return tensor.Reshape(tensor.ConcatColumns(copies...), T, r*x.Cols())
}

// cached runs the layer over the cache: it first brings the state back to
// cache.Len if the cache was truncated, keeps snapshots and inputs for a
// later rewind, and appends T positions. Everything it keeps is a tensor
// written by tensor ops, so on a device backend it stays on the device.
func (d *DeltaNet) cached(cache *nn.KVCache, m, g, beta *tensor.Tensor) *tensor.Tensor {
	st, ok := cache.State.(*state)
	if !ok {
		panic(fmt.Sprintf("qwen35: a delta-rule layer's cache holds %T (make it with Model.NewCache)", cache.State))
	}
	n, T := cache.Len, m.Rows()
	if n+T > cache.K.Rows() {
		panic(fmt.Sprintf("qwen35: %d positions + %d new exceed the context of %d", n, T, cache.K.Rows()))
	}
	if st.len != n {
		st.restore(d, n)
	}
	past := st.past(n)
	if T > 1 || n-st.newest() >= snapEvery {
		st.snapshot(n) // before the rows of this call overwrite those before n
	}
	st.store(n, m, g, beta)
	var o *tensor.Tensor
	if T <= 2*snapEvery {
		o = d.mix(past, m, g, beta, st.S)
	} else {
		// A long call (a prompt): another snapshot near its end, where a
		// rewind is likely to land.
		cut := T - snapEvery
		rows := func(t *tensor.Tensor, a, b int) *tensor.Tensor { return t.Slice(a, b) }
		o1 := d.mix(past, rows(m, 0, cut), rows(g, 0, cut), rows(beta, 0, cut), st.S)
		st.snapshot(n + cut)
		o2 := d.mix(st.past(n+cut), rows(m, cut, T), rows(g, cut, T), rows(beta, cut, T), st.S)
		o = concatRows(o1, o2)
	}
	if T > 1 {
		// The state after a prompt is kept apart from the recent ones:
		// choices and chat turns go back to it after long replies.
		st.prompt = st.take(st.prompt, n+T)
	}
	cache.Len = n + T
	return o
}

// state is a delta-rule layer's cache: the state S after len positions,
// snapshots of S at a few recent positions and at the end of the last
// prompt, and the inputs (m, g, β) of the last keepRows positions, so that
// a truncated cache (a speculative guess not taken, a regenerated reply)
// can be brought back by replaying them from a snapshot.
type state struct {
	S     *tensor.Tensor // [Hv, Ds·Ds], after len positions
	len   int
	snaps []snapshot // oldest first
	// prompt is the state at the end of the last call of several tokens.
	prompt snapshot
	// ring holds keepRows rows [m | g | β]: position p in row
	// p mod keepRows, valid for positions first … len−1.
	ring         *tensor.Tensor // [keepRows, C + 2·Hv]
	C, Hv        int
	first, convL int
}

// snapshot is S after pos positions, and the ring rows of the convL−1
// positions before pos (zeros before 0), which the convolution of the
// next position reads.
type snapshot struct {
	pos     int
	s, rows *tensor.Tensor // [Hv, Ds·Ds], [convL−1, C + 2·Hv]
}

func newState(c Config) *state {
	C, Hv := c.ConvChannels(), c.VHeads
	ring := tensor.New(keepRows, C+2*Hv)
	ring.ShareStorage() // its row views are one allocation on a device
	return &state{S: tensor.New(Hv, c.StateDim*c.StateDim), ring: ring, C: C, Hv: Hv, convL: c.ConvTaps,
		prompt: snapshot{pos: -1}}
}

// Rewind implements nn.Recurrent.
func (st *state) Rewind(n int) int {
	if n <= 0 || n >= st.len {
		return max(n, 0)
	}
	if _, ok := st.snapFor(n); ok {
		return n
	}
	return 0
}

// snapFor finds the newest snapshot from which n can be reached: n itself,
// or one at or before n from whose position on the inputs are kept.
func (st *state) snapFor(n int) (snapshot, bool) {
	best, found := snapshot{pos: -1}, false
	consider := func(s snapshot) {
		if s.pos > best.pos && (s.pos == n || s.pos >= st.first && s.pos < n) {
			best, found = s, true
		}
	}
	consider(st.prompt)
	for _, s := range st.snaps {
		consider(s)
	}
	return best, found
}

// newest is the position of the newest recent snapshot (far back when
// none).
func (st *state) newest() int {
	if len(st.snaps) == 0 {
		return -1 << 30
	}
	return st.snaps[len(st.snaps)-1].pos
}

// snapshot keeps S as the state after pos positions among the recent ones.
func (st *state) snapshot(pos int) {
	var old snapshot
	if len(st.snaps) == maxSnaps {
		old = st.snaps[0]
		st.snaps = append(st.snaps[:0], st.snaps[1:]...)
	}
	st.snaps = append(st.snaps, st.take(old, pos))
}

// take copies S and the rows before pos into s, into its tensors when it
// has them.
func (st *state) take(s snapshot, pos int) snapshot {
	s.pos = pos
	s.s = copyInto(s.s, st.S)
	s.rows = copyInto(s.rows, st.window(pos))
	return s
}

// copyInto copies src into dst and returns it, or returns a copy of src
// when dst is nil (on the device when src is there).
func copyInto(dst, src *tensor.Tensor) *tensor.Tensor {
	if dst == nil {
		return tensor.Columns(src, 0, src.Cols())
	}
	tensor.SetRows(dst, 0, src)
	return dst
}

// restore brings S back to the state after n ≤ len positions: zeros for 0,
// else a snapshot and a replay of the kept inputs since.
func (st *state) restore(d *DeltaNet, n int) {
	if n > st.len {
		panic(fmt.Sprintf("qwen35: the cache holds %d positions but the layer's state only %d", n, st.len))
	}
	for len(st.snaps) > 0 && st.newest() > n {
		st.snaps = st.snaps[:len(st.snaps)-1]
	}
	if st.prompt.pos > n {
		st.prompt.pos = -1
	}
	if n == 0 {
		clear(st.S.Data())
		st.len, st.first, st.snaps = 0, 0, st.snaps[:0]
		return
	}
	s, ok := st.snapFor(n)
	if !ok {
		panic(fmt.Sprintf("qwen35: the delta-rule state cannot go back to position %d (it keeps %d … %d); truncate through nn.Cache", n, st.first, st.len))
	}
	tensor.SetRows(st.S, 0, s.s)
	if s.pos < n {
		rows := st.rowsOf(s.pos, n)
		m := tensor.Columns(rows, 0, st.C)
		g, beta := tensor.Columns(rows, st.C, st.C+st.Hv), tensor.Columns(rows, st.C+st.Hv, st.C+2*st.Hv)
		d.mix(st.convRows(s.rows), m, g, beta, st.S)
	}
	// The rows before n that the next call's convolution reads: kept, or
	// (n a snapshot's position, older than the ring) the snapshot's own.
	st.len = n
	L := st.convL
	if lo := max(0, n-(L-1)); lo < st.first {
		for p := lo; p < s.pos; p++ {
			j := p - (s.pos - (L - 1))
			tensor.SetRows(st.ring, p%keepRows, s.rows.Slice(j, j+1))
		}
		st.first = lo
	}
}

// rowsOf returns the kept rows [b−a, C + 2·Hv] of positions a … b−1: a
// view of the ring, or a copy where they wrap around it.
func (st *state) rowsOf(a, b int) *tensor.Tensor {
	if a < st.first || b > st.len || b-a > keepRows {
		panic(fmt.Sprintf("qwen35: the inputs of positions %d … %d are not kept (%d … %d)", a, b-1, st.first, st.len-1))
	}
	i := a % keepRows
	if i+b-a <= keepRows {
		return st.ring.Slice(i, i+b-a)
	}
	return concatRows(st.ring.Slice(i, keepRows), st.ring.Slice(0, i+b-a-keepRows))
}

// window returns the rows of the convL−1 positions before pos, zeros
// before position 0.
func (st *state) window(pos int) *tensor.Tensor {
	L := st.convL
	if pos >= L-1 {
		return st.rowsOf(pos-(L-1), pos)
	}
	zeros := tensor.New(L-1-pos, st.ring.Cols())
	if pos == 0 {
		return zeros
	}
	return concatRows(zeros, st.rowsOf(0, pos))
}

// past returns m of the L−1 positions before n, flat [1, (L−1)·C], zeros
// before position 0.
func (st *state) past(n int) *tensor.Tensor { return st.convRows(st.window(n)) }

// convRows returns the m columns of window rows, flat as the convolution
// takes its past.
func (st *state) convRows(w *tensor.Tensor) *tensor.Tensor {
	return tensor.Reshape(tensor.Columns(w, 0, st.C), 1, w.Rows()*st.C)
}

// store keeps the inputs of positions n … n+T−1 (the last keepRows of
// them) and advances len.
func (st *state) store(n int, m, g, beta *tensor.Tensor) {
	T := m.Rows()
	from := max(0, T-keepRows)
	rows := tensor.ConcatColumns(m.Slice(from, T), g.Slice(from, T), beta.Slice(from, T))
	st.len = n + T
	st.first = max(st.first, n+T-keepRows)
	i, k := (n+from)%keepRows, rows.Rows()
	if head := min(k, keepRows-i); head < k {
		tensor.SetRows(st.ring, i, rows.Slice(0, head))
		tensor.SetRows(st.ring, 0, rows.Slice(head, k))
	} else {
		tensor.SetRows(st.ring, i, rows)
	}
}

// concatRows returns a's rows, then b's: [R_a + R_b, C].
func concatRows(a, b *tensor.Tensor) *tensor.Tensor {
	C := a.Cols()
	flat := tensor.ConcatColumns(tensor.Reshape(a, 1, a.Len()), tensor.Reshape(b, 1, b.Len()))
	return tensor.Reshape(flat, a.Rows()+b.Rows(), C)
}
