// One walk over a model's tagged weight fields, for loading, collecting,
// checking, declaring and initialising them.

package nn

import (
	"reflect"
	"strconv"
	"strings"
)

// field is a tagged field holding weights, met by walkFields: a leaf
// (*tensor.Tensor, *Linear, *Embedding, *RMSNorm, *LayerNorm), an interface
// field holding a layer, or a pointer to a struct of weights of its own
// names.
type field struct {
	name  string              // prefix + the gguf tag's name
	opt   string              // the tag's option: "", "optional" or "ifset"
	sf    reflect.StructField // its declaration (tags, Go name)
	v     reflect.Value       // the field, settable where the walked struct is
	scope *scope              // the names of its shape expressions
}

// held returns the pointer f holds: the field itself, or what an interface
// field holds; invalid for a nil interface.
func (f field) held() reflect.Value {
	v := f.v
	if v.Kind() == reflect.Interface {
		if v.IsNil() {
			return reflect.Value{}
		}
		v = v.Elem()
	}
	return v
}

// walkFields calls fn for each tagged field of sv (a struct) that holds
// weights, in field order, and walks the struct fn returns, if any, under
// prefix+name+"." (a block of its own names). Untagged fields holding a
// struct — directly, through a pointer or an interface — are walked under
// the same prefix, and the elements of a tagged slice (Blocks []Block
// `gguf:"blk"`) under prefix+name+".i.". Scopes follow the structs, with
// the renames of `dims` tags; a `gguf-names:"a=b, …"` tag on an untagged
// field makes the fields tagged a below it read b (LFM2's final norm is
// token_embd_norm, not the Decoder's output_norm).
func walkFields(prefix string, sv reflect.Value, parent *scope, fn func(f field) (reflect.Value, error)) error {
	s := &scope{v: sv, parent: parent}
	for i := range sv.NumField() {
		sf, fv := sv.Type().Field(i), sv.Field(i)
		if !sf.IsExported() {
			continue
		}
		inner := s.renamed(sf.Tag.Get("dims"))
		if names := sf.Tag.Get("gguf-names"); names != "" { // an embedded frame whose tensors a family names otherwise
			inner = &scope{names: map[string]string{}, parent: inner}
			for _, kv := range strings.Split(names, ",") {
				k, v, _ := strings.Cut(kv, "=")
				inner.names[strings.TrimSpace(k)] = strings.TrimSpace(v)
			}
		}
		tag, tagged := sf.Tag.Lookup("gguf")
		name, opt, _ := strings.Cut(tag, ",")
		name = s.tensorName(name)
		switch {
		case !tagged:
			if e := structOf(fv); e.IsValid() {
				if err := walkFields(prefix, e, inner, fn); err != nil {
					return err
				}
			}
		case !holdsWeights(fv.Kind()):
			// a Config's metadata key (see gguf.File.ReadConfig), not a weight
		case fv.Kind() == reflect.Slice:
			for j := range fv.Len() {
				if e := structOf(fv.Index(j)); e.IsValid() {
					if err := walkFields(prefix+name+"."+strconv.Itoa(j)+".", e, inner, fn); err != nil {
						return err
					}
				}
			}
		default:
			sub, err := fn(field{name: prefix + name, opt: opt, sf: sf, v: fv, scope: inner})
			if err == nil && sub.IsValid() {
				err = walkFields(prefix+name+".", sub, inner, fn)
			}
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// structOf returns the struct v holds, directly or through pointers and
// interfaces, or an invalid value.
func structOf(v reflect.Value) reflect.Value {
	for (v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface) && !v.IsNil() {
		v = v.Elem()
	}
	if v.Kind() == reflect.Struct {
		return v
	}
	return reflect.Value{}
}

// holdsWeights reports whether a tagged field of kind k names weights: a
// pointer, an interface holding one, or a slice of blocks.
func holdsWeights(k reflect.Kind) bool {
	return k == reflect.Pointer || k == reflect.Interface || k == reflect.Slice
}

// dimsOf returns the scope of a model's Config (a struct or a pointer to
// one) for shape expressions.
func dimsOf(dims any) *scope {
	s := &scope{v: reflect.ValueOf(dims)}
	if s.v.Kind() == reflect.Pointer {
		s.v = s.v.Elem()
	}
	return s
}
