// Collecting a model's trainable tensors by their GGUF names.

package nn

import (
	"reflect"
	"strings"

	"github.com/toyml/toy/toy/tensor"
)

// Named is a weight tensor with its GGUF name.
type Named struct {
	Name string
	T    *tensor.Tensor
}

// Collect returns the weights of v (a pointer to a struct tagged as for Load)
// under their GGUF names, prefixed; nil fields are skipped. It walks the same
// fields Load fills, so Collect after Load lists every tensor loaded.
func Collect(prefix string, v any) []Named {
	var out []Named
	collectStruct(prefix, reflect.ValueOf(v).Elem(), &out)
	return out
}

func collectStruct(prefix string, sv reflect.Value, out *[]Named) {
	st := sv.Type()
	for i := 0; i < st.NumField(); i++ {
		field, fv := st.Field(i), sv.Field(i)
		if !field.IsExported() {
			continue
		}
		tag, ok := field.Tag.Lookup("gguf")
		if !ok {
			collectAny(prefix, fv, out)
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if fv.Kind() == reflect.Interface && !fv.IsNil() {
			fv = fv.Elem()
		}
		if fv.Kind() != reflect.Pointer || fv.IsNil() {
			continue
		}
		add := func(suffix string, t *tensor.Tensor) {
			if t != nil {
				*out = append(*out, Named{prefix + name + suffix, t})
			}
		}
		switch x := fv.Interface().(type) {
		case *tensor.Tensor:
			add("", x)
		case *Linear:
			add(".weight", x.W)
			add(".bias", x.B)
		case *Embedding:
			add(".weight", x.W)
		case *RMSNorm:
			add(".weight", x.W)
		case *LayerNorm:
			add(".weight", x.W)
			add(".bias", x.B)
		default:
			if fv.Elem().Kind() == reflect.Struct {
				collectStruct(prefix+name+".", fv.Elem(), out)
			}
		}
	}
}

func collectAny(prefix string, fv reflect.Value, out *[]Named) {
	switch fv.Kind() {
	case reflect.Struct:
		collectStruct(prefix, fv, out)
	case reflect.Pointer, reflect.Interface:
		if !fv.IsNil() {
			collectAny(prefix, fv.Elem(), out)
		}
	}
}
