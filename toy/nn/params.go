// Walking a model's tagged weight fields: collecting its tensors by GGUF
// name, and finding its projections.

package nn

import (
	"maps"
	"reflect"
	"strconv"
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
	visit(prefix, reflect.ValueOf(v).Elem(), func(name string, x any) {
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
	visit(prefix, reflect.ValueOf(v).Elem(), func(name string, x any) {
		if l, ok := x.(*Linear); ok {
			out[name] = l
		}
	})
	return out
}

// visit calls fn with the prefixed name and value of every non-nil tagged
// pointer field of sv, descending into untagged struct, pointer and
// interface fields with the same prefix.
func visit(prefix string, sv reflect.Value, fn func(name string, x any)) {
	st := sv.Type()
	for i := 0; i < st.NumField(); i++ {
		field, fv := st.Field(i), sv.Field(i)
		if !field.IsExported() {
			continue
		}
		tag, ok := field.Tag.Lookup("gguf")
		if !ok {
			visitAny(prefix, fv, fn)
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if fv.Kind() == reflect.Interface && !fv.IsNil() {
			fv = fv.Elem()
		}
		if fv.Kind() != reflect.Pointer || fv.IsNil() {
			continue
		}
		switch x := fv.Interface().(type) {
		case *tensor.Tensor, *Linear, *Embedding, *RMSNorm, *LayerNorm:
			fn(prefix+name, x)
		default:
			if fv.Elem().Kind() == reflect.Struct {
				visit(prefix+name+".", fv.Elem(), fn)
			}
		}
	}
}

func visitAny(prefix string, fv reflect.Value, fn func(name string, x any)) {
	switch fv.Kind() {
	case reflect.Struct:
		visit(prefix, fv, fn)
	case reflect.Pointer, reflect.Interface:
		if !fv.IsNil() {
			visitAny(prefix, fv.Elem(), fn)
		}
	}
}

// ModelWeights lists the weights of a model whose top-level fields are
// tagged (embeddings, final norm, head) and whose blocks are named
// "blk.N.", each tensor once (a tied head appears under its first name).
func ModelWeights(top any, blocks []Block) []Named {
	all := Collect("", top)
	for i := range blocks {
		all = append(all, Collect(blockPrefix(i), &blocks[i])...)
	}
	return Unique(all)
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

// BlockLinears returns every projection of model m's blocks by GGUF base
// name ("blk.N.attn_q", …): the blocks are the elements of m's exported
// field Blocks, a slice of Block or of a family's own block struct. A model
// without one has none.
func BlockLinears(m any) map[string]*Linear {
	v := reflect.ValueOf(m)
	for v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface {
		if v.IsNil() {
			return nil
		}
		v = v.Elem()
	}
	if v.Kind() != reflect.Struct {
		return nil
	}
	blocks := v.FieldByName("Blocks")
	if !blocks.IsValid() || blocks.Kind() != reflect.Slice {
		return nil
	}
	out := map[string]*Linear{}
	for i := range blocks.Len() {
		maps.Copy(out, Linears(blockPrefix(i), blocks.Index(i).Addr().Interface()))
	}
	return out
}

func blockPrefix(i int) string { return "blk." + strconv.Itoa(i) + "." }
