// Filling weight structs from GGUF tensors by struct tag.

package nn

import (
	"errors"
	"fmt"
	"reflect"

	"github.com/toyml/toy/toy/gguf"
	"github.com/toyml/toy/toy/tensor"
)

// Load fills the weights of v, a pointer to a struct, from f. A field tagged
// `gguf:"NAME"` reads tensors named prefix+NAME:
//
//	*tensor.Tensor        prefix+NAME
//	*Linear               prefix+NAME.weight, and prefix+NAME.bias if present
//	*Embedding, *RMSNorm  prefix+NAME.weight
//	*LayerNorm            prefix+NAME.weight and prefix+NAME.bias (if present)
//
// A nil pointer field is allocated; a non-nil one (say a *RMSNorm with its Eps
// already set) is filled in place. A tagged slice (Blocks []Block
// `gguf:"blk"`) reads element i under prefix+NAME.i. (blk.0.attn_q.weight,
// …). Untagged struct fields, and interface
// fields holding a pointer to a struct, are walked with the same prefix, so
// nested blocks share their parent's names. With the tag option ",optional" a
// missing tensor leaves the field nil instead of failing. With ",ifset" a nil
// field stays nil and a set one must find its tensors: for layers of
// different kinds that read the same tensor names (attention's RMSNorm or
// LayerNorm of the query and key heads), of which a model sets the one it has.
func Load(f *gguf.File, prefix string, v any) error {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.Elem().Kind() != reflect.Struct {
		return fmt.Errorf("nn.Load: want a pointer to a struct, got %T", v)
	}
	return walkFields(prefix, rv.Elem(), nil, func(w field) (reflect.Value, error) {
		if w.opt == "ifset" && w.v.IsNil() {
			return reflect.Value{}, nil // the model has no such layer, or a layer of another kind
		}
		fv := w.held()
		if !fv.IsValid() { // a nil interface field
			if w.opt == "optional" {
				return reflect.Value{}, nil // the architecture has no such layer
			}
			return reflect.Value{}, fmt.Errorf("nn.Load: %s: interface field %s is nil; set a concrete layer first", w.name, w.sf.Name)
		}
		return loadField(f, w.name, fv, w.opt == "optional")
	})
}

var (
	tensorType    = reflect.TypeFor[*tensor.Tensor]()
	linearType    = reflect.TypeFor[*Linear]()
	embeddingType = reflect.TypeFor[*Embedding]()
	rmsNormType   = reflect.TypeFor[*RMSNorm]()
	layerNormType = reflect.TypeFor[*LayerNorm]()
)

// loadField reads the tensors of one tagged field, allocating it when nil;
// for a pointer to a struct of its own weights it returns the struct to
// walk.
func loadField(f *gguf.File, name string, fv reflect.Value, optional bool) (reflect.Value, error) {
	get := func(n string) (*tensor.Tensor, error) {
		t, err := f.Tensor(n)
		if err != nil {
			return nil, fmt.Errorf("tensor %s: %w", n, err)
		}
		return t, nil
	}
	maybe := func(n string) (*tensor.Tensor, error) {
		if _, err := f.Info(n); errors.Is(err, gguf.ErrNoTensor) {
			return nil, nil
		}
		return get(n)
	}
	main := name
	if fv.Type() != tensorType {
		main = name + ".weight"
	}
	if _, err := f.Info(main); err != nil && optional {
		return reflect.Value{}, nil
	}
	if fv.Kind() == reflect.Pointer && fv.IsNil() && fv.Type() != tensorType {
		fv.Set(reflect.New(fv.Type().Elem()))
	}
	var err error
	switch fv.Type() {
	case tensorType:
		var t *tensor.Tensor
		if t, err = get(name); err == nil {
			fv.Set(reflect.ValueOf(t))
		}
	case linearType:
		l := fv.Interface().(*Linear)
		if l.W, err = get(main); err == nil {
			l.B, err = maybe(name + ".bias")
		}
	case embeddingType:
		fv.Interface().(*Embedding).W, err = get(main)
	case rmsNormType:
		fv.Interface().(*RMSNorm).W, err = get(main)
	case layerNormType:
		n := fv.Interface().(*LayerNorm)
		if n.W, err = get(main); err == nil {
			n.B, err = maybe(name + ".bias")
		}
	default:
		if fv.Kind() == reflect.Pointer && fv.Elem().Kind() == reflect.Struct {
			return fv.Elem(), nil
		}
		return reflect.Value{}, fmt.Errorf("nn.Load: field for %s has unsupported type %v", name, fv.Type())
	}
	return reflect.Value{}, err
}

// CheckShape returns an error unless t has exactly the given shape and a
// usable type: F32 for vectors (norms, biases), a float type for matrices.
func CheckShape(name string, t *tensor.Tensor, shape ...int) error {
	if t == nil {
		return fmt.Errorf("tensor %s is missing", name)
	}
	if !reflect.DeepEqual(t.Shape(), shape) {
		return fmt.Errorf("tensor %s has shape %v, want %v", name, t.Shape(), shape)
	}
	if len(shape) == 1 && t.DType() != tensor.F32 {
		return fmt.Errorf("tensor %s is %v; norm weights and biases must be F32", name, t.DType())
	}
	if t.DType() == tensor.I32 {
		return fmt.Errorf("tensor %s is I32, not a float type", name)
	}
	return nil
}

// CheckLinear checks a projection from in to out features: its weight
// [out, in] and, if present, its bias [out].
func CheckLinear(name string, l *Linear, out, in int) error {
	if l == nil {
		return fmt.Errorf("tensor %s.weight is missing", name)
	}
	if err := CheckShape(name+".weight", l.W, out, in); err != nil {
		return err
	}
	if l.B != nil {
		return CheckShape(name+".bias", l.B, out)
	}
	return nil
}
