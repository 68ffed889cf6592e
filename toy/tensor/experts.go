// Routed products for a mixture of experts: the choice of experts, and the
// products of the chosen ones, with the choice left where it was made (on
// a device, no read-back).

package tensor

import (
	"fmt"
	"math"
	"unsafe"
)

// ExpertsBackend is a set of fused kernels (see fused) that keep a mixture
// of experts' routing on a device, where reading the router's scores back
// to the host would stall every layer of every decode step. Each op is
// defined by the function of the same name below (TopK, GatherColumns,
// MatMulID, WeightedSum, RowSumReciprocal); without the interface they run
// on host copies. Their gradients (GatherColumns', WeightedSum's) read
// only the inputs and the output, so the kernels run while a tape records
// too.
type ExpertsBackend interface {
	TopK(ids, scores *Tensor, k, groups, groupsUsed int)
	GatherColumns(out, x, ids *Tensor)
	MatMulID(out, x, w, ids *Tensor)
	WeightedSum(out, h, w *Tensor)
	RowSumReciprocal(out, x *Tensor)
}

// MaxExperts is the most experts TopK chooses among, in at most MaxGroups
// groups.
const (
	MaxExperts = 1024
	MaxGroups  = 64
)

// noGrad panics when op would have to record a gradient it does not have.
func noGrad(op string, ts ...*Tensor) {
	if activeTape() == nil {
		return
	}
	for _, t := range ts {
		if t != nil && t.requiresGrad {
			panic(op + ": no gradient (inference only); train through the grouped products")
		}
	}
}

// int32s returns the elements of an I32 tensor on the host (not a copy).
func (t *Tensor) int32s() []int32 {
	t.hostRead()
	if len(t.raw) == 0 {
		return nil
	}
	return unsafe.Slice((*int32)(unsafe.Pointer(&t.raw[0])), len(t.raw)/4)
}

// Int32s returns a copy of the elements of an I32 tensor (the experts TopK
// chose).
func (t *Tensor) Int32s() []int32 {
	if t.dtype != I32 {
		panic(fmt.Sprintf("Int32s: tensor is %v", t.dtype))
	}
	return append([]int32(nil), t.int32s()...)
}

// newIDs returns an I32 tensor for ids: device memory on a device backend.
func newIDs(b Backend, T, k int) *Tensor {
	if isDeviceBackend(b) {
		return &Tensor{shape: []int{T, k}, dtype: I32, dev: &devState{size: 4 * T * k}}
	}
	return &Tensor{shape: []int{T, k}, dtype: I32, raw: make([]byte, 4*T*k)}
}

// TopK returns, for each row of scores [T, E], the indices of its k largest
// elements in ascending order of index, as an I32 tensor [T, k]; of equal
// scores the lower index wins. With groups > 1 the E experts form groups
// of E/groups consecutive ones, each scoring the sum of its two best
// elements, and only the experts of the groupsUsed best groups compete
// (DeepSeek's group-limited routing). The choice has no gradient.
func TopK(scores *Tensor, k, groups, groupsUsed int) *Tensor {
	mustF32("TopK", "scores", scores)
	T, E := scores.Rows(), scores.Cols()
	if groups < 1 {
		groups, groupsUsed = 1, 1
	}
	if k < 1 || k > E || E > MaxExperts || groups > MaxGroups || E%groups != 0 || groupsUsed < 1 || groupsUsed > groups ||
		k > groupsUsed*(E/groups) {
		panic(fmt.Sprintf("TopK: %d of %v in %d groups, %d used", k, scores.shape, groups, groupsUsed))
	}
	b, eb, ok := fused[ExpertsBackend](false, scores)
	ids := newIDs(b, T, k)
	if ok {
		eb.TopK(ids, scores, k, groups, groupsUsed)
	} else {
		topK(ids.int32s(), scores.hostRead().f32, T, E, k, groups, groupsUsed)
	}
	return ids
}

// topK is TopK on the host: ids [T·k] from p [T·E].
func topK(ids []int32, p []float32, T, E, k, groups, groupsUsed int) {
	chosen, barred := make([]bool, E), make([]bool, E)
	for t := range T {
		row := p[t*E : (t+1)*E]
		clear(chosen)
		clear(barred)
		if groups > 1 {
			barGroups(row, barred, groups, groupsUsed)
		}
		for range k {
			best := -1
			for e, v := range row {
				if !chosen[e] && !barred[e] && (best < 0 || v > row[best]) {
					best = e
				}
			}
			chosen[best] = true
		}
		j := t * k
		for e, c := range chosen {
			if c {
				ids[j] = int32(e)
				j++
			}
		}
	}
}

// barGroups marks in barred the experts of all but the used best of groups
// groups of consecutive experts in row, a group scoring the sum of its two
// best scores (ties to the lower index).
func barGroups(row []float32, barred []bool, groups, used int) {
	n := len(row) / groups
	score := make([]float32, groups)
	for g := range score {
		a, b := float32(math.Inf(-1)), float32(math.Inf(-1)) // the best two
		for _, v := range row[g*n : (g+1)*n] {
			if v > a {
				a, b = v, a
			} else if v > b {
				b = v
			}
		}
		if n == 1 {
			b = 0
		}
		score[g] = a + b
	}
	keep := make([]bool, groups)
	for range used {
		best := -1
		for g, v := range score {
			if !keep[g] && (best < 0 || v > score[best]) {
				best = g
			}
		}
		keep[best] = true
	}
	for e := range barred {
		barred[e] = !keep[e/n]
	}
}

// checkIDs panics unless ids is an I32 [T, k] for T rows.
func checkIDs(op string, ids *Tensor, T int) (k int) {
	if ids.dtype != I32 || len(ids.shape) != 2 || ids.Rows() != T {
		panic(fmt.Sprintf("%s: ids %v %v for %d rows, want I32 [%d, k]", op, ids.dtype, ids.shape, T, T))
	}
	return ids.Cols()
}

// GatherColumns returns out [T, k] with out[t, j] = x[t, ids[t, j]], for x
// [T, E] and ids an I32 [T, k] (TopK's): the chosen experts' scores. The
// gradient goes to the gathered elements of x.
func GatherColumns(x, ids *Tensor) *Tensor {
	mustF32("GatherColumns", "x", x)
	T, E := x.Rows(), x.Cols()
	k := checkIDs("GatherColumns", ids, T)
	var out *Tensor
	if b, eb, ok := fused[ExpertsBackend](false, x, ids); ok {
		out = newOut(b, T, k)
		eb.GatherColumns(out, x, ids)
	} else {
		out = New(T, k)
		xs, is := x.hostRead().f32, ids.int32s()
		for i, e := range is {
			if e < 0 || int(e) >= E {
				panic(fmt.Sprintf("GatherColumns: id %d out of range for %v", e, x.shape))
			}
			out.f32[i] = xs[(i/k)*E+int(e)]
		}
	}
	record("GatherColumns", out, func(g *Tensor) []*Tensor {
		d := New(T, E)
		for i, e := range ids.int32s() {
			d.f32[(i/k)*E+int(e)] += g.f32[i]
		}
		return []*Tensor{d, nil}
	}, x, ids)
	return out
}

// MatMulID returns the products of a mixture's chosen experts. For ids an
// I32 [T, k] and w [E, N, K] (the experts' stacked matrices, any weight
// type), row s = t·k + j of the result [T·k, N] is x_r · w[ids[t, j]]ᵀ,
// where x is [T, K] (r = t: every expert of a token sees its row) or
// [T·k, K] (r = s: each chosen expert its own row). Each row is what
// MatMul gives for it. No gradient: it serves inference (a mixture's
// grouped products train).
//
// On the host the rows are grouped by expert: each chosen expert runs
// once, on all the rows routed to it — one product of n rows rather than n
// of one, so that its weights are read once and a native backend's
// prefill kernels take batches — and the rows go back to their places.
// (Bit for bit the same rows, except on a backend whose products depend on
// the row count: a fused native one's F32/F16 prefill, within its
// tolerance.)
func MatMulID(x, w, ids *Tensor) *Tensor {
	mustF32("MatMulID", "x", x)
	noGrad("MatMulID", x, w)
	if len(w.shape) != 3 || x.Cols() != w.shape[2] {
		panic(fmt.Sprintf("MatMulID: x %v with experts %v", x.shape, w.shape))
	}
	T := ids.Rows()
	k := checkIDs("MatMulID", ids, T)
	if x.Rows() != T && x.Rows() != T*k {
		panic(fmt.Sprintf("MatMulID: x %v for ids %v", x.shape, ids.shape))
	}
	E, N, K := w.shape[0], w.shape[1], w.shape[2]
	if b, eb, ok := fused[ExpertsBackend](false, x, w, ids); ok {
		out := newOut(b, T*k, N)
		eb.MatMulID(out, x, w, ids)
		return out
	}
	rows := make([][]int, E) // rows[e]: the result rows s routed to expert e, ascending
	for s, e := range ids.int32s() {
		if e < 0 || int(e) >= E {
			panic(fmt.Sprintf("MatMulID: expert %d of %d", e, E))
		}
		rows[e] = append(rows[e], s)
	}
	out := New(T*k, N)
	xs := x.hostRead().f32
	per := x.Rows() / T // rows of x per token: 1 or k
	for e, re := range rows {
		if len(re) == 0 {
			continue
		}
		xe := New(len(re), K) // [n, K]: the rows of x routed to e
		for j, s := range re {
			r := s
			if per == 1 {
				r = s / k
			}
			copy(xe.f32[j*K:(j+1)*K], xs[r*K:(r+1)*K])
		}
		ye := MatMul(xe, Select(w, e)).hostRead().f32 // [n, N]
		for j, s := range re {
			copy(out.f32[s*N:(s+1)*N], ye[j*N:(j+1)*N])
		}
	}
	return out
}

// WeightedSum returns out [T, D] with out[t] = Σ_j w[t, j] · h[t·k + j],
// for h [T·k, D] and w [T, k] (F32): the chosen experts' outputs, weighted
// and added back to their token. The sum runs in j order from zero, each
// product rounded to float32 before it is added, so it equals ScatterAdd
// of the same rows into zeros. Gradients, with g = dL/d out:
//
//	d h[t·k + j] = w[t, j] · g[t],   d w[t, j] = g[t] · h[t·k + j]
func WeightedSum(h, w *Tensor) *Tensor {
	mustF32("WeightedSum", "h", h)
	mustF32("WeightedSum", "w", w)
	T, k, D := w.Rows(), w.Cols(), h.Cols()
	if len(w.shape) != 2 || h.Rows() != T*k {
		panic(fmt.Sprintf("WeightedSum: h %v with weights %v", h.shape, w.shape))
	}
	var out *Tensor
	if b, eb, ok := fused[ExpertsBackend](false, h, w); ok {
		out = newOut(b, T, D)
		eb.WeightedSum(out, h, w)
	} else {
		out = New(T, D)
		hs, ws := h.hostRead().f32, w.hostRead().f32
		for t := range T {
			o := out.f32[t*D : (t+1)*D]
			for j := range k {
				s := ws[t*k+j]
				for c, v := range hs[(t*k+j)*D : (t*k+j+1)*D] {
					o[c] += float32(s * v)
				}
			}
		}
	}
	record("WeightedSum", out, func(g *Tensor) []*Tensor {
		dh, dw := New(h.shape...), New(w.shape...)
		for t := range T {
			gr := g.f32[t*D : (t+1)*D]
			for j := range k {
				s := t*k + j
				axpy(dh.f32[s*D:(s+1)*D], w.f32[s], gr)
				dw.f32[s] = dotF32(gr, h.f32[s*D:(s+1)*D])
			}
		}
		return []*Tensor{dh, dw}
	}, h, w)
	return out
}

// RowSumReciprocal returns [T, 1] with out[t] = 1 / Σ_j x[t, j] for x [T, k],
// the sum taken in j order in float32: the first guess of the Newton step
// with which a mixture divides its chosen scores by their sum (DeepSeek-V3's
// router). A constant: no gradient flows through it.
func RowSumReciprocal(x *Tensor) *Tensor {
	mustF32("RowSumReciprocal", "x", x)
	T, k := x.Rows(), x.Cols()
	if b, eb, ok := fused[ExpertsBackend](false, x); ok {
		out := newOut(b, T, 1)
		eb.RowSumReciprocal(out, x)
		return out
	}
	out := New(T, 1)
	xs := x.hostRead().f32
	for t := range T {
		var sum float32
		for _, v := range xs[t*k : (t+1)*k] {
			sum += v
		}
		out.f32[t] = 1 / sum
	}
	return out
}
