// Walking a model's tagged weight fields: collecting its tensors by GGUF
// name, and finding its projections.

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
// fields Load fills, so Collect after Load lists every tensor loaded. LoRA
// adapters are listed as NAME.weight.lora_a and NAME.weight.lora_b, the names
// llama.cpp's adapter files use.
func Collect(prefix string, v any) []Named {
	var out []Named
	add := func(name string, t *tensor.Tensor) {
		if t != nil {
			out = append(out, Named{name, t})
		}
	}
	visit(prefix, v, func(name string, x any) {
		switch x := x.(type) {
		case *tensor.Tensor:
			add(name, x)
		case *Linear:
			add(name+".weight", x.W)
			add(name+".bias", x.B)
			if x.LoRA != nil {
				add(name+".weight.lora_a", x.LoRA.A)
				add(name+".weight.lora_b", x.LoRA.B)
			}
		case *Embedding:
			add(name+".weight", x.W)
		case *RMSNorm:
			add(name+".weight", x.W)
		case *LayerNorm:
			add(name+".weight", x.W)
			add(name+".bias", x.B)
		}
	})
	return out
}

// Linears returns the projections of v by GGUF base name (prefix+tag, e.g.
// "blk.0.attn_q").
func Linears(prefix string, v any) map[string]*Linear {
	out := map[string]*Linear{}
	visit(prefix, v, func(name string, x any) {
		if l, ok := x.(*Linear); ok {
			out[name] = l
		}
	})
	return out
}

// visit calls fn with the prefixed name and value of every non-nil tagged
// leaf field of v (a pointer to a struct), walking as Load does.
func visit(prefix string, v any, fn func(name string, x any)) {
	walkFields(prefix, reflect.ValueOf(v).Elem(), nil, func(w field) (reflect.Value, error) {
		p := w.held()
		if !p.IsValid() || p.Kind() != reflect.Pointer || p.IsNil() {
			return reflect.Value{}, nil
		}
		if isLeaf(p.Interface()) {
			fn(w.name, p.Interface())
			return reflect.Value{}, nil
		}
		return structOf(p), nil
	})
}

// Unique returns ws with every tensor listed once, under its first name (a
// tied output head stays token_embd.weight).
func Unique(ws []Named) []Named {
	seen := map[*tensor.Tensor]bool{}
	var out []Named
	for _, w := range ws {
		if !seen[w.T] {
			seen[w.T] = true
			out = append(out, w)
		}
	}
	return out
}

// FindLinears returns the projections of model m by GGUF base name
// ("blk.0.attn_q"): every *Linear reachable from m — through pointers,
// interfaces, structs (unexported fields too), slices, arrays and maps —
// whose weight is listed in ws (a model's Weights()) as "NAME.weight". A
// model of any layout, a user's included, has its projections found by the
// names it gives its weights; a Linear not in ws is not returned.
func FindLinears(m any, ws []Named) map[string]*Linear {
	names := map[*tensor.Tensor]string{}
	for _, w := range ws {
		if base, ok := strings.CutSuffix(w.Name, ".weight"); ok && w.T != nil {
			names[w.T] = base
		}
	}
	out := map[string]*Linear{}
	type ref struct {
		at uintptr
		t  reflect.Type
	}
	seen := map[ref]bool{} // a pointer to a struct and one to its first field share an address
	var walk func(v reflect.Value)
	walk = func(v reflect.Value) {
		switch v.Kind() {
		case reflect.Pointer:
			if v.IsNil() || seen[ref{v.Pointer(), v.Type()}] {
				return
			}
			switch v.Type() {
			case linearType:
				if l := (*Linear)(v.UnsafePointer()); l.W != nil {
					if name, ok := names[l.W]; ok {
						out[name] = l
					}
				}
				return
			case tensorType:
				return
			}
			seen[ref{v.Pointer(), v.Type()}] = true
			walk(v.Elem())
		case reflect.Interface:
			if !v.IsNil() {
				walk(v.Elem())
			}
		case reflect.Struct:
			for i := range v.NumField() {
				walk(v.Field(i))
			}
		case reflect.Slice, reflect.Array:
			if holdsPointers(v.Type().Elem()) {
				for i := range v.Len() {
					walk(v.Index(i))
				}
			}
		case reflect.Map:
			if holdsPointers(v.Type().Elem()) {
				for it := v.MapRange(); it.Next(); {
					walk(it.Value())
				}
			}
		}
	}
	walk(reflect.ValueOf(m))
	return out
}

// holdsPointers reports whether values of t can lead to a *Linear (a
// []float32 cannot, and is not walked).
func holdsPointers(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Pointer, reflect.Interface, reflect.Struct, reflect.Slice, reflect.Array, reflect.Map:
		return true
	}
	return false
}
