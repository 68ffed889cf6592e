// Reverse-mode automatic differentiation: a tape of recorded ops, replayed
// backwards.

package tensor

import (
	"fmt"
	"sync"
)

// Tape records the ops run while it is active, so that Backward can compute
// gradients by the chain rule, last op first. Nothing is recorded when no
// tape is active (inference), and ops whose inputs need no gradient are not
// recorded either.
//
//	tape := tensor.NewTape()
//	tensor.Record(tape)
//	loss := tensor.CrossEntropy(model.Forward(ids), targets)
//	tensor.Record(nil)
//	tape.Backward(loss) // fills w.Grad() for every w with SetRequiresGrad(true)
type Tape struct {
	ops []tapeOp
}

type tapeOp struct {
	name     string
	out      *Tensor
	inputs   []*Tensor
	backward func(g *Tensor) []*Tensor // gradient of each input given the output's
}

var (
	tapeMu  sync.Mutex
	current *Tape
)

// NewTape returns an empty tape.
func NewTape() *Tape { return &Tape{} }

// Record makes t the active tape (nil stops recording) and returns the one
// that was active.
func Record(t *Tape) *Tape {
	tapeMu.Lock()
	defer tapeMu.Unlock()
	old := current
	current = t
	return old
}

func activeTape() *Tape {
	tapeMu.Lock()
	defer tapeMu.Unlock()
	return current
}

// Recording reports whether a tape is active.
func Recording() bool { return activeTape() != nil }

// SetRequiresGrad marks a tensor as a leaf whose gradient Backward computes
// (a trainable parameter). Only F32 tensors can require gradients.
func (t *Tensor) SetRequiresGrad(on bool) *Tensor {
	if on && t.dtype != F32 {
		panic(fmt.Sprintf("SetRequiresGrad: tensor %v is %v; only F32 tensors are trainable", t.shape, t.dtype))
	}
	t.requiresGrad = on
	return t
}

// RequiresGrad reports whether gradients flow to t.
func (t *Tensor) RequiresGrad() bool { return t.requiresGrad }

// Grad returns the gradient accumulated by Backward, or nil.
func (t *Tensor) Grad() *Tensor { return t.grad }

// ZeroGrad forgets the accumulated gradient.
func (t *Tensor) ZeroGrad() { t.grad = nil }

// record adds an op to the active tape when any input needs a gradient; the
// output then needs one too.
func record(name string, out *Tensor, backward func(g *Tensor) []*Tensor, inputs ...*Tensor) {
	tp := activeTape()
	if tp == nil {
		return
	}
	needs := false
	for _, in := range inputs {
		if in != nil && in.requiresGrad {
			needs = true
		}
	}
	if !needs {
		return
	}
	out.requiresGrad = true
	tp.ops = append(tp.ops, tapeOp{name, out, inputs, backward})
}

// Backward computes d loss / d t for every tensor t that requires a gradient
// and adds it to t.Grad() (so gradients accumulate over calls until
// ZeroGrad). loss must be a single element recorded on this tape. The tape
// is emptied.
func (tp *Tape) Backward(loss *Tensor) {
	if loss.Len() != 1 {
		panic(fmt.Sprintf("Backward: loss has shape %v, want one element", loss.shape))
	}
	prev := Record(nil) // gradient arithmetic is not itself recorded
	defer Record(prev)
	grads := map[*Tensor]*Tensor{loss: FromFloat32([]float32{1}, loss.shape...)}
	leaves := map[*Tensor]bool{}
	held := map[*Tensor]bool{} // gradient tensors stored in grads, so none is stored twice
	for i := len(tp.ops) - 1; i >= 0; i-- {
		op := tp.ops[i]
		g := grads[op.out]
		if g == nil {
			continue
		}
		delete(grads, op.out)
		// Rules read host memory: device-resident operands come back first.
		g.hostRead()
		op.out.hostRead()
		for _, in := range op.inputs {
			if in != nil && in.dev != nil {
				in.hostRead()
			}
		}
		for j, gi := range op.backward(g) {
			in := op.inputs[j]
			if gi == nil || in == nil || !in.requiresGrad {
				continue
			}
			if acc := grads[in]; acc != nil {
				addInto(acc, gi)
			} else {
				if held[gi] { // a rule passed one tensor to two inputs
					gi = FromFloat32(append([]float32(nil), gi.f32...), gi.shape...)
				}
				held[gi] = true
				grads[in] = gi
			}
			leaves[in] = true
		}
	}
	for t := range leaves {
		g := grads[t]
		if g == nil { // an intermediate result, consumed above
			continue
		}
		if t.grad == nil {
			t.grad = g.Reshape(t.shape...)
		} else {
			addInto(t.grad, g)
		}
	}
	tp.ops = nil
}

// addInto adds b to a in place (same number of elements).
func addInto(a, b *Tensor) {
	for i, v := range b.f32 {
		a.f32[i] += v
	}
}
