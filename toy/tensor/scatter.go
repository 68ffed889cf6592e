// Picking out and putting back rows, for mixture-of-experts layers: one
// expert's matrix as a view of a stack of them, and the weighted scatter-add
// that returns each expert's output rows to the tokens they came from.

package tensor

import "fmt"

// Select returns x[i], the i-th sub-tensor along the outermost axis (shape
// x.Shape()[1:]), as a view through which gradients flow: one expert's
// [F, D] matrix of a stack [E, F, D]. x may be of any type (a quantized
// stack gives a quantized view); the gradient, for an F32 x, is g in slot i
// and zeros elsewhere.
func Select(x *Tensor, i int) *Tensor {
	if len(x.shape) < 2 || i < 0 || i >= x.shape[0] {
		panic(fmt.Sprintf("Select: index %d of shape %v", i, x.shape))
	}
	out := x.Slice(i, i+1).Reshape(x.shape[1:]...)
	out.requiresGrad, out.grad = false, nil // a new node, not x's leaf state
	record("Select", out, func(g *Tensor) []*Tensor {
		d := New(x.shape...)
		n := g.Len()
		copy(d.f32[i*n:(i+1)*n], g.f32)
		return []*Tensor{d}
	}, x)
	return out
}

// ScatterAdd returns dst [R, C] with row j of src [n, C], times scale[j],
// added to row ids[j]:
//
//	out = dst;   out[ids[j]] += scale[j] · src[j],   j = 0 … n−1 in order
//
// scale is F32 with n elements ([n] or [n, 1]), or nil for 1; ids may
// repeat. A mixture-of-experts layer combines its experts with it: each
// expert's output rows, weighted by their routing probabilities, go back to
// the tokens they were gathered from. Each product is rounded to float32
// before it is added (no fused multiply-add), as ggml multiplies and then
// adds. Gradients, with g = dL/d out:
//
//	d dst = g,   d src[j] = scale[j] · g[ids[j]],   d scale[j] = g[ids[j]] · src[j]
func ScatterAdd(dst *Tensor, ids []int32, src, scale *Tensor) *Tensor {
	mustF32("ScatterAdd", "dst", dst)
	mustF32("ScatterAdd", "src", src)
	R, C := dst.Rows(), dst.Cols()
	if src.Cols() != C || src.Rows() != len(ids) {
		panic(fmt.Sprintf("ScatterAdd: src %v for dst %v with %d ids: want [%d, %d]", src.shape, dst.shape, len(ids), len(ids), C))
	}
	for _, id := range ids {
		if id < 0 || int(id) >= R {
			panic(fmt.Sprintf("ScatterAdd: id %d out of range for dst %v", id, dst.shape))
		}
	}
	if scale != nil {
		mustF32("ScatterAdd", "scale", scale)
		if scale.Len() != len(ids) {
			panic(fmt.Sprintf("ScatterAdd: scale %v for %d ids", scale.shape, len(ids)))
		}
	}
	b := beFor(dst, src, scale)
	out := newOut(b, dst.shape...)
	b.ScatterAdd(out, dst, src, ids, scale)
	record("ScatterAdd", out, func(g *Tensor) []*Tensor {
		dsrc := New(src.shape...)
		var dscale *Tensor
		if scale != nil {
			dscale = New(scale.shape...)
		}
		for j, id := range ids {
			gr := g.f32[int(id)*C : (int(id)+1)*C]
			s := float32(1)
			if scale != nil {
				s = scale.f32[j]
				dscale.f32[j] = dotF32(gr, src.f32[j*C:(j+1)*C])
			}
			axpy(dsrc.f32[j*C:(j+1)*C], s, gr)
		}
		return []*Tensor{g, dsrc, dscale}
	}, dst, src, scale)
	return out
}

// ScatterAdd is the pure-Go scatter-add.
func (Go) ScatterAdd(out, dst, src *Tensor, ids []int32, scale *Tensor) {
	var s []float32
	if scale != nil {
		s = scale.f32
	}
	scatterAdd(out.f32, dst.f32, src.f32, ids, s, dst.Cols())
}

// scatterAdd is ScatterAdd in plain Go on rows of C elements.
func scatterAdd(out, dst, src []float32, ids []int32, scale []float32, C int) {
	copy(out, dst)
	for j, id := range ids {
		s := float32(1)
		if scale != nil {
			s = scale[j]
		}
		or, sr := out[int(id)*C:(int(id)+1)*C], src[j*C:(j+1)*C]
		for c, v := range sr {
			or[c] += float32(s * v) // the conversion keeps the product rounded (no FMA)
		}
	}
}
