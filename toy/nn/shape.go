// Declared weight shapes: the `shape` struct tag, checked after loading.

package nn

import (
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/toyml/toy/toy/tensor"
)

// CheckShapes verifies the weights of v (a pointer to a model or block
// struct, tagged as for Load) against the shapes its fields declare, and
// returns the first mismatch, naming the tensor, its shape and the one
// declared:
//
//	Q   *Linear  `gguf:"attn_q" shape:"Heads*HeadDim, Embed"`   // W [H·Dh, D], B [H·Dh]
//	W   *RMSNorm `gguf:"attn_norm" shape:"Embed"`               // W (and a LayerNorm's B) [D]
//	Sin *tensor.Tensor `gguf:"sinks.weight" shape:"Heads"`
//
// A shape is a comma-separated list of integer expressions (+ − * / and
// parentheses) over names; a name is an int field of the struct that holds
// the tag or of one enclosing it, the nearest first, and last of dims (the
// model's Config). Alternatives are separated by "|": "HeadDim | Heads*HeadDim".
// A field tagged `dims:"FFN=ExpertFFN"` renames for everything below it.
// A missing weight is an error unless its gguf tag says optional or ifset;
// vectors (norm weights, biases) must be F32.
func CheckShapes(v any, dims any) error {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.Elem().Kind() != reflect.Struct {
		return fmt.Errorf("nn.CheckShapes: want a pointer to a struct, got %T", v)
	}
	return walkFields("", rv.Elem(), dimsOf(dims), func(w field) (reflect.Value, error) {
		fv := w.held()
		if !fv.IsValid() || fv.Kind() != reflect.Pointer || fv.IsNil() {
			if w.opt == "optional" || w.opt == "ifset" {
				return reflect.Value{}, nil
			}
			return reflect.Value{}, fmt.Errorf("tensor %s is missing", w.name)
		}
		shape, declared := w.sf.Tag.Lookup("shape")
		if !declared {
			if isLeaf(fv.Interface()) {
				return reflect.Value{}, nil
			}
			return structOf(fv), nil
		}
		return reflect.Value{}, checkLeaf(w.name, fv.Interface(), shape, w.scope)
	})
}

// scope resolves the names of shape expressions: the int fields of v, or
// the renames of a dims tag, then its parent's.
type scope struct {
	v       reflect.Value     // a struct, or invalid
	renames map[string]string // name → expression in parent
	names   map[string]string // a GGUF tag's name → the name read (a `gguf-names` tag)
	parent  *scope
}

// tensorName returns the GGUF name a field tagged name reads in s: name,
// unless a `gguf-names:"name=other"` tag on an enclosing field renames it.
func (s *scope) tensorName(name string) string {
	for ; s != nil; s = s.parent {
		if n, ok := s.names[name]; ok {
			return n
		}
	}
	return name
}

// renamed returns the scope of a field tagged `dims:"A=expr, …"`: s with
// those renames, or s itself for no tag.
func (s *scope) renamed(dims string) *scope {
	if dims == "" {
		return s
	}
	r := &scope{renames: map[string]string{}, parent: s}
	for _, kv := range strings.Split(dims, ",") {
		k, e, _ := strings.Cut(kv, "=")
		r.renames[strings.TrimSpace(k)] = e
	}
	return r
}

func (s *scope) lookup(name string) (int, bool) {
	for ; s != nil; s = s.parent {
		if e, ok := s.renames[name]; ok {
			n, err := eval(e, s.parent)
			return n, err == nil
		}
		if s.v.IsValid() && s.v.Kind() == reflect.Struct {
			if f := s.v.FieldByName(name); f.IsValid() && f.CanInt() {
				return int(f.Int()), true
			}
		}
	}
	return 0, false
}

func isLeaf(x any) bool {
	switch x.(type) {
	case *tensor.Tensor, *Linear, *Embedding, *RMSNorm, *LayerNorm:
		return true
	}
	return false
}

// checkLeaf checks one weight (and its bias) against a declared shape.
func checkLeaf(name string, x any, shape string, s *scope) error {
	var alts [][]int
	for _, alt := range strings.Split(shape, "|") {
		var dims []int
		for _, e := range strings.Split(alt, ",") {
			n, err := eval(e, s)
			if err != nil {
				return fmt.Errorf("nn.CheckShapes: %s: shape %q: %w", name, shape, err)
			}
			dims = append(dims, n)
		}
		alts = append(alts, dims)
	}
	want := func(n string, t *tensor.Tensor, bias bool) error {
		for _, a := range alts {
			if bias {
				a = a[:1]
			}
			if slices.Equal(t.Shape(), a) {
				return CheckShape(n, t, a...)
			}
		}
		sh := strings.TrimSpace(shape)
		if bias {
			sh, _, _ = strings.Cut(sh, ",")
		}
		w := fmt.Sprint(alts[0])
		if bias {
			w = fmt.Sprint(alts[0][:1])
		}
		return fmt.Errorf("tensor %s has shape %v, want %s (%s)", n, t.Shape(), w, sh)
	}
	pair := func(w, b *tensor.Tensor) error {
		if w == nil {
			return fmt.Errorf("tensor %s.weight is missing", name)
		}
		if err := want(name+".weight", w, false); err != nil {
			return err
		}
		if b != nil {
			return want(name+".bias", b, true)
		}
		return nil
	}
	switch x := x.(type) {
	case *tensor.Tensor:
		return want(name, x, false)
	case *Linear:
		return pair(x.W, x.B)
	case *Embedding:
		return pair(x.W, nil)
	case *RMSNorm:
		return pair(x.W, nil)
	case *LayerNorm:
		if x.B != nil {
			if err := pair(x.W, nil); err != nil {
				return err
			}
			return want(name+".bias", x.B, false)
		}
		return pair(x.W, nil)
	}
	return fmt.Errorf("nn.CheckShapes: %s: a shape tag on %T", name, x)
}

// eval computes an integer expression over the names of s: + − * / and
// parentheses, left to right within a precedence level.
func eval(e string, s *scope) (int, error) {
	p := &parser{src: strings.TrimSpace(e), s: s}
	n := p.sum()
	p.space()
	if p.err == nil && p.i < len(p.src) {
		p.err = fmt.Errorf("unexpected %q", p.src[p.i:])
	}
	return n, p.err
}

type parser struct {
	src string
	i   int
	s   *scope
	err error
}

func (p *parser) space() {
	for p.i < len(p.src) && p.src[p.i] == ' ' {
		p.i++
	}
}

func (p *parser) peek() byte {
	p.space()
	if p.i < len(p.src) {
		return p.src[p.i]
	}
	return 0
}

func (p *parser) sum() int {
	n := p.product()
	for c := p.peek(); c == '+' || c == '-'; c = p.peek() {
		p.i++
		if m := p.product(); c == '+' {
			n += m
		} else {
			n -= m
		}
	}
	return n
}

func (p *parser) product() int {
	n := p.atom()
	for c := p.peek(); c == '*' || c == '/'; c = p.peek() {
		p.i++
		m := p.atom()
		switch {
		case c == '*':
			n *= m
		case m == 0:
			if p.err == nil {
				p.err = fmt.Errorf("division by zero")
			}
		default:
			n /= m
		}
	}
	return n
}

func (p *parser) atom() int {
	c := p.peek()
	if c == '(' {
		p.i++
		n := p.sum()
		if p.peek() != ')' && p.err == nil {
			p.err = fmt.Errorf("missing )")
		}
		p.i++
		return n
	}
	j := p.i
	for p.i < len(p.src) && (p.src[p.i] == '_' || p.src[p.i] >= '0' && p.src[p.i] <= '9' ||
		p.src[p.i] >= 'a' && p.src[p.i] <= 'z' || p.src[p.i] >= 'A' && p.src[p.i] <= 'Z') {
		p.i++
	}
	word := p.src[j:p.i]
	if word == "" {
		if p.err == nil {
			p.err = fmt.Errorf("expected a number or a name at %q", p.src[j:])
		}
		return 0
	}
	if n, err := strconv.Atoi(word); err == nil {
		return n
	}
	n, ok := p.s.lookup(word)
	if !ok && p.err == nil {
		p.err = fmt.Errorf("no int field %s", word)
	}
	return n
}

// Declared is one weight tensor a model declares: its GGUF name, its card
// tag (`card:"SYMBOL, meaning"`, "" when the field has none) and its
// declared shape (the shape tag's alternatives, each as written and as
// evaluated for this model; nil when undeclared). A bias is listed after
// its weight, with the first dimension of each alternative.
type Declared struct {
	Name, Card string
	Bias       bool
	Exprs      []string
	Dims       [][]int
}

// DeclaredWeights lists every weight v (a pointer to a model struct, as
// for CheckShapes) declares, present or not: nil weights and nil pointers
// to blocks are walked by their types, so a model made without weights
// lists all it could hold (a nil interface field, whose type is unknown,
// lists nothing, as does an unset ",ifset" field). Linear, LayerNorm and RMSNorm list NAME.weight (and
// NAME.bias; an RMSNorm never has one), Embedding NAME.weight.
func DeclaredWeights(v, dims any) []Declared {
	var out []Declared
	walkFields("", reflect.ValueOf(v).Elem(), dimsOf(dims), func(w field) (reflect.Value, error) {
		if w.opt == "ifset" && w.v.IsNil() {
			return reflect.Value{}, nil // a layer of another kind reads these names
		}
		fv := w.held()
		if !fv.IsValid() || fv.Kind() != reflect.Pointer {
			return reflect.Value{}, nil
		}
		t := fv.Type()
		d := Declared{Name: w.name, Card: w.sf.Tag.Get("card")}
		if shape, declared := w.sf.Tag.Lookup("shape"); declared {
			for _, alt := range strings.Split(shape, "|") {
				var dims []int
				for _, e := range strings.Split(alt, ",") {
					n, _ := eval(e, w.scope)
					dims = append(dims, n)
				}
				d.Exprs, d.Dims = append(d.Exprs, rewrite(strings.TrimSpace(alt), w.scope)), append(d.Dims, dims)
			}
		}
		bias := func(b Declared) {
			b.Name, b.Bias, b.Dims, b.Exprs = d.Name+".bias", true, nil, nil
			for k := range d.Exprs {
				first, _, _ := strings.Cut(d.Exprs[k], ",")
				b.Exprs, b.Dims = append(b.Exprs, strings.TrimSpace(first)), append(b.Dims, d.Dims[k][:1])
			}
			out = append(out, b)
		}
		switch t {
		case tensorType:
			out = append(out, d)
		case linearType:
			out = append(out, d.suffixed(".weight"))
			bias(d)
		case layerNormType:
			b := d.suffixed(".bias")
			b.Bias = true
			out = append(out, d.suffixed(".weight"), b)
		case embeddingType, rmsNormType:
			out = append(out, d.suffixed(".weight"))
		default:
			if t.Elem().Kind() == reflect.Struct {
				if fv.IsNil() {
					fv = reflect.New(t.Elem()) // walked by its type
				}
				return fv.Elem(), nil
			}
		}
		return reflect.Value{}, nil
	})
	return out
}

func (d Declared) suffixed(s string) Declared {
	d.Name += s
	return d
}

// rewrite writes expr with the renames of s's dims tags applied, so that
// it names the sizes of the config: FFN under `dims:"FFN=ExpertFFN"` is
// ExpertFFN.
func rewrite(expr string, s *scope) string {
	var b strings.Builder
	start := -1
	for i, r := range expr + " " {
		if r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || start >= 0 && r >= '0' && r <= '9' {
			if start < 0 {
				start = i
			}
			continue
		}
		if start >= 0 {
			b.WriteString(resolveName(expr[start:i], s))
			start = -1
		}
		if i < len(expr) {
			b.WriteRune(r)
		}
	}
	return b.String()
}

func resolveName(name string, s *scope) string {
	for ; s != nil; s = s.parent {
		if e, ok := s.renames[name]; ok {
			e = rewrite(strings.TrimSpace(e), s.parent)
			if strings.ContainsAny(e, "+-") {
				e = "(" + e + ")"
			}
			return e
		}
		if s.v.IsValid() && s.v.Kind() == reflect.Struct {
			if f := s.v.FieldByName(name); f.IsValid() && f.CanInt() {
				return name
			}
		}
	}
	return name
}
