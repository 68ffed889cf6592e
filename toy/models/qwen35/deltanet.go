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
// Value head h reads query/key head h mod Hk.
type DeltaNet struct {
	QKV   *nn.Linear     `gguf:"attn_qkv"`          // [C, D]: queries, keys, values
	Z     *nn.Linear     `gguf:"attn_gate"`         // [Hv·Ds, D]: the output gate
	Conv  *tensor.Tensor `gguf:"ssm_conv1d.weight"` // [C, L]
	DT    *tensor.Tensor `gguf:"ssm_dt.bias"`       // [Hv]
	A     *tensor.Tensor `gguf:"ssm_a"`             // [Hv], −exp(A_log): the decay rates
	Beta  *nn.Linear     `gguf:"ssm_beta"`          // [Hv, D]
	Alpha *nn.Linear     `gguf:"ssm_alpha"`         // [Hv, D]
	Norm  *nn.RMSNorm    `gguf:"ssm_norm"`          // [Ds], shared by the heads
	Out   *nn.Linear     `gguf:"ssm_out"`           // [D, Hv·Ds]

	KHeads, VHeads, StateDim int
	Eps                      float32 // the L2 norm's ε on q and k
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
	m := d.QKV.Forward(x)                                                       // [T, C]
	beta := tensor.Sigmoid(d.Beta.Forward(x))                                   // [T, Hv]
	g := tensor.Mul(tensor.Softplus(tensor.Add(d.Alpha.Forward(x), d.DT)), d.A) // [T, Hv], ≤ 0
	var o *tensor.Tensor
	if cache == nil {
		o = d.mix(nil, m, g, beta, nil)
	} else {
		o = d.cached(cache, m, g, beta)
	}
	// o: [T, Hv·Ds]; each head RMS-normalised, then gated.
	o = tensor.Reshape(d.Norm.Forward(tensor.Reshape(o, T*Hv, d.StateDim)), T, Hv*d.StateDim)
	return d.Out.Forward(tensor.Mul(o, tensor.SiLU(d.Z.Forward(x))))
}

// mix convolves m [T, C] (after past, the L−1 positions before it flat
// [1, (L−1)·C], zeros when nil) and runs the delta rule from state S (zeros
// when nil), which it leaves after the T positions.
func (d *DeltaNet) mix(past, m, g, beta, S *tensor.Tensor) *tensor.Tensor {
	C := m.Cols()
	y := tensor.SiLU(nn.CausalConv(past, m, d.Conv))
	kd := d.KHeads * d.StateDim
	q, k, v := tensor.Columns(y, 0, kd), tensor.Columns(y, kd, 2*kd), tensor.Columns(y, 2*kd, C)
	return tensor.GatedDeltaNet(q, k, v, g, beta, S, d.Eps)
}

// cached runs the layer over the cache: it first brings the state back to
// cache.Len if the cache was truncated, keeps snapshots and inputs for a
// later rewind, and appends T positions.
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
	past := st.past(n, m.Cols())
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
		o2 := d.mix(st.past(n+cut, m.Cols()), rows(m, cut, T), rows(g, cut, T), rows(beta, cut, T), st.S)
		o = tensor.New(T, o1.Cols())
		tensor.SetRows(o, 0, o1)
		tensor.SetRows(o, cut, o2)
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
	// rows is a ring of keepRows rows [m | g | β]: position p in row
	// p mod keepRows, valid for positions first … len−1.
	rows                []float32
	width, first, convL int
}

// snapshot is S after pos positions, and the rows of the convL−1
// positions before pos (zeros before 0), which the convolution of the
// next position reads.
type snapshot struct {
	pos     int
	s, rows []float32
}

func newState(c Config) *state {
	w := c.ConvChannels() + 2*c.VHeads
	return &state{S: tensor.New(c.VHeads, c.StateDim*c.StateDim), rows: make([]float32, keepRows*w), width: w, convL: c.ConvL,
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

// take copies S and the rows before pos into s's buffers.
func (st *state) take(s snapshot, pos int) snapshot {
	s.pos = pos
	s.s = append(s.s[:0], st.S.Data()...)
	s.rows = s.rows[:0]
	for p := pos - (st.convL - 1); p < pos; p++ {
		if p < 0 {
			s.rows = append(s.rows, make([]float32, st.width)...)
		} else {
			s.rows = append(s.rows, st.row(p)...)
		}
	}
	return s
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
	S := st.S.Data()
	if n == 0 {
		clear(S)
		st.len, st.first, st.snaps = 0, 0, st.snaps[:0]
		return
	}
	s, ok := st.snapFor(n)
	if !ok {
		panic(fmt.Sprintf("qwen35: the delta-rule state cannot go back to position %d (it keeps %d … %d); truncate through nn.Cache", n, st.first, st.len))
	}
	copy(S, s.s)
	C, L := d.Conv.Dim(0), st.convL
	if s.pos < n {
		m, g, beta := st.inputs(s.pos, n, C, d.VHeads)
		d.mix(st.pastOf(s, C), m, g, beta, st.S)
	}
	// The rows before n that the next call's convolution reads: kept, or
	// (n a snapshot's position, older than the ring) the snapshot's own.
	st.len = n
	if lo := max(0, n-(L-1)); lo < st.first {
		for p := lo; p < s.pos; p++ {
			copy(st.slot(p), s.rows[(p-(s.pos-(L-1)))*st.width:][:st.width])
		}
		st.first = lo
	}
}

// inputs gathers the kept m [n, C], g and β [n, Hv] of positions a … b−1.
func (st *state) inputs(a, b, C, Hv int) (m, g, beta *tensor.Tensor) {
	m, g, beta = tensor.New(b-a, C), tensor.New(b-a, Hv), tensor.New(b-a, Hv)
	md, gd, bd := m.Data(), g.Data(), beta.Data()
	for p := a; p < b; p++ {
		r := st.row(p)
		i := p - a
		copy(md[i*C:(i+1)*C], r[:C])
		copy(gd[i*Hv:(i+1)*Hv], r[C:C+Hv])
		copy(bd[i*Hv:(i+1)*Hv], r[C+Hv:])
	}
	return m, g, beta
}

// slot is the ring row of position p.
func (st *state) slot(p int) []float32 {
	i := p % keepRows
	return st.rows[i*st.width : (i+1)*st.width]
}

// row is the kept row of position p.
func (st *state) row(p int) []float32 {
	if p < st.first || p >= st.len {
		panic(fmt.Sprintf("qwen35: position %d's inputs are not kept (%d … %d)", p, st.first, st.len))
	}
	return st.slot(p)
}

// past returns m of the L−1 positions before n, flat [1, (L−1)·C], zeros
// before position 0.
func (st *state) past(n, C int) *tensor.Tensor {
	L := st.convL
	past := tensor.New(1, (L-1)*C)
	pd := past.Data()
	for j := range L - 1 {
		if p := n - (L - 1) + j; p >= 0 {
			copy(pd[j*C:(j+1)*C], st.row(p)[:C])
		}
	}
	return past
}

// pastOf is past for a snapshot's position, from the rows it keeps.
func (st *state) pastOf(s snapshot, C int) *tensor.Tensor {
	L := st.convL
	past := tensor.New(1, (L-1)*C)
	pd := past.Data()
	for j := range L - 1 {
		copy(pd[j*C:(j+1)*C], s.rows[j*st.width:][:C])
	}
	return past
}

// store keeps the inputs of positions n … n+T−1 (the last keepRows of
// them) and advances len.
func (st *state) store(n int, m, g, beta *tensor.Tensor) {
	T, C, Hv := m.Rows(), m.Cols(), g.Cols()
	md, gd, bd := hostData(m), hostData(g), hostData(beta)
	from := max(0, T-keepRows)
	st.len = n + T
	st.first = max(st.first, n+T-keepRows)
	for i := from; i < T; i++ {
		r := st.row(n + i)
		copy(r[:C], md[i*C:(i+1)*C])
		copy(r[C:C+Hv], gd[i*Hv:(i+1)*Hv])
		copy(r[C+Hv:], bd[i*Hv:(i+1)*Hv])
	}
}

// hostData returns t's elements on the host, leaving a device copy current
// (Data would mark it stale, and the device would be sent it again).
func hostData(t *tensor.Tensor) []float32 {
	if t.OnDevice() {
		return t.Float32s()
	}
	return t.Data()
}
