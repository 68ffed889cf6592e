// Random initialisation of fresh weights.

package nn

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"strconv"
	"strings"

	"github.com/toyml/toy/toy/tensor"
)

// Init draws fresh trainable F32 weights from a seeded generator: the same
// seed gives the same weights.
type Init struct {
	r *rand.Rand
}

// NewInit returns an initialiser seeded with seed.
func NewInit(seed uint64) *Init { return &Init{rand.New(rand.NewPCG(seed, 0x696e6974))} } // "init"

// Normal returns a tensor of N(0, std²) values.
func (in *Init) Normal(std float64, shape ...int) *tensor.Tensor {
	t := tensor.New(shape...)
	d := t.Data()
	for i := range d {
		d[i] = float32(in.r.NormFloat64() * std)
	}
	return t.SetRequiresGrad(true)
}

// Fill returns a tensor of shape holding v everywhere.
func (in *Init) Fill(v float32, shape ...int) *tensor.Tensor {
	t := tensor.New(shape...)
	d := t.Data()
	for i := range d {
		d[i] = v
	}
	return t.SetRequiresGrad(true)
}

// Linear returns a projection from in to out features with N(0, std²)
// weights and, if bias, a zero bias.
func (in *Init) Linear(out, inFeatures int, std float64, bias bool) *Linear {
	l := &Linear{W: in.Normal(std, out, inFeatures)}
	if bias {
		l.B = in.Fill(0, out)
	}
	return l
}

// Randomize draws every weight v (a pointer to a model struct, tagged as for
// Load, with its layers built) declares and does not hold yet, in field
// order, with the shapes its shape tags give over dims (the model's Config;
// the first of alternatives):
//
//	*Linear, *Embedding, *tensor.Tensor  N(0, std²); a Linear has no bias
//	*RMSNorm                             1
//	*LayerNorm                           weight 1, bias 0
//
// A tag `init:"resid"` draws with resid instead (the projections into the
// residual stream), `init:"STD"` with that number, and `init:"-"` leaves the
// field to the caller. A nil field is allocated unless its gguf tag says
// optional or ifset: a model's optional layers are those its constructor
// built (a Linear left empty there is drawn here). Weights already set are
// kept, so a family sets its special ones before or after. Panics on a
// shape it cannot evaluate: a programming error in the declarations.
func (in *Init) Randomize(v, dims any, std, resid float64) {
	walkFields("", reflect.ValueOf(v).Elem(), dimsOf(dims), func(w field) (reflect.Value, error) {
		if w.sf.Tag.Get("init") == "-" {
			return reflect.Value{}, nil
		}
		fv := w.held()
		if !fv.IsValid() || fv.Kind() != reflect.Pointer || fv.IsNil() && w.opt != "" {
			return reflect.Value{}, nil // an optional layer the constructor did not build
		}
		if fv.Type() == tensorType || isLeaf(reflect.Zero(fv.Type()).Interface()) {
			if fv.IsNil() && fv.Type() != tensorType {
				fv.Set(reflect.New(fv.Type().Elem()))
			}
			in.leaf(fv, w.sf, w.scope, std, resid)
			return reflect.Value{}, nil
		}
		if fv.IsNil() {
			fv.Set(reflect.New(fv.Type().Elem())) // a struct of weights of its own names
		}
		return structOf(fv), nil
	})
}

// leaf draws the weights of one leaf field fv (a pointer, or a nil
// *tensor.Tensor field) that it does not hold yet.
func (in *Init) leaf(fv reflect.Value, field reflect.StructField, s *scope, std, resid float64) {
	shape, ok := field.Tag.Lookup("shape")
	if !ok {
		return
	}
	first, _, _ := strings.Cut(shape, "|")
	var dims []int
	for _, e := range strings.Split(first, ",") {
		n, err := eval(e, s)
		if err != nil {
			panic(fmt.Sprintf("nn.Randomize: %s: shape %q: %v", field.Name, shape, err))
		}
		dims = append(dims, n)
	}
	switch t := field.Tag.Get("init"); t {
	case "":
	case "resid":
		std = resid
	default:
		x, err := strconv.ParseFloat(t, 64)
		if err != nil {
			panic(fmt.Sprintf("nn.Randomize: %s: init %q", field.Name, t))
		}
		std = x
	}
	switch x := fv.Interface().(type) {
	case *tensor.Tensor:
		if x == nil {
			fv.Set(reflect.ValueOf(in.Normal(std, dims...)))
		}
	case *Linear:
		if x.W == nil {
			x.W = in.Normal(std, dims...)
		}
	case *Embedding:
		if x.W == nil {
			x.W = in.Normal(std, dims...)
		}
	case *RMSNorm:
		if x.W == nil {
			x.W = in.Fill(1, dims...)
		}
	case *LayerNorm:
		if x.W == nil {
			x.W, x.B = in.Fill(1, dims...), in.Fill(0, dims...)
		}
	}
}
