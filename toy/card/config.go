// Declared hyperparameters: a Config's `card` struct tags, written into a
// card and read back.

package card

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"unicode"
)

// Hypers returns the hyperparameters of cfg (a family's Config) declared
// with a `card:"SYMBOL, meaning"` tag, in field order, each under its key,
// the field's name in snake_case (ContextLength is context_length):
//
//	Embed   int     `card:"d_e, model width"`
//	NormEps float32 `card:"ε, RMSNorm epsilon"`
//
// An empty string is written as "".
func Hypers(cfg any) []Hyper {
	var out []Hyper
	for _, f := range cardFields(cfg) {
		out = append(out, Hyper{Symbol: f.symbol, Value: formatValue(f.v), Key: f.key, Meaning: f.meaning})
	}
	return out
}

// Decoder returns the card of a decoder-only language model — Phuong &
// Hutter's DTransformer — whose hyperparameters are cfg's declared ones
// (see Hypers). The family adds its parameters, steps and count.
func Decoder(arch, summary string, cfg any) *Card {
	k := NewDecoder(arch, summary, 0, 0, 0, 0)
	k.Hyper = Hypers(cfg)
	return k
}

// Drop removes the hyperparameters with the given keys (those that do not
// apply to a variant: experts on a dense model, a window of 0).
func (c *Card) Drop(keys ...string) {
	c.Hyper = slices.DeleteFunc(c.Hyper, func(h Hyper) bool { return slices.Contains(keys, h.Key) })
}

// DropZero removes the hyperparameters with the given keys whose value is
// zero, false or empty (features a configuration does not use).
func (c *Card) DropZero(keys ...string) {
	c.Hyper = slices.DeleteFunc(c.Hyper, func(h Hyper) bool {
		return slices.Contains(keys, h.Key) && (h.Value == "0" || h.Value == "false" || h.Value == `""`)
	})
}

// Decode fills the declared fields of cfg, a pointer to a family's Config,
// from the card's hyperparameters (its field Arch, when it has one, from
// the card's architecture): the inverse of Hypers. A hyperparameter the
// card lacks leaves its field as it was.
func (c *Card) Decode(cfg any) error {
	if a := reflect.ValueOf(cfg).Elem().FieldByName("Arch"); a.IsValid() && a.Kind() == reflect.String {
		a.SetString(c.Arch)
	}
	for _, f := range cardFields(cfg) {
		if _, err := c.Value(f.key); err != nil {
			continue
		}
		var err error
		switch v := f.v; v.Kind() {
		case reflect.Int:
			var n int
			n, err = c.Int(f.key)
			v.SetInt(int64(n))
		case reflect.Float32:
			var x float32
			x, err = c.Float32(f.key)
			v.SetFloat(float64(x))
		case reflect.Bool:
			var b bool
			b, err = c.Bool(f.key)
			v.SetBool(b)
		case reflect.String:
			s, _ := c.Value(f.key)
			v.SetString(strings.Trim(s, `"`))
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// FromCard returns the Config cfg (a pointer to a zero or default one)
// filled from c and, when it has a Validate() error method, checked by it:
// the whole of a family's ConfigFromCard. It returns the struct, not the
// pointer.
func FromCard(c *Card, cfg any) (any, error) {
	if err := c.Decode(cfg); err != nil {
		return nil, err
	}
	v := reflect.ValueOf(cfg).Elem().Interface()
	if val, ok := v.(interface{ Validate() error }); ok {
		if err := val.Validate(); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrSyntax, err)
		}
	}
	return v, nil
}

type cardField struct {
	name, key, symbol, meaning string
	v                          reflect.Value
}

func cardFields(cfg any) []cardField {
	v := reflect.ValueOf(cfg)
	if v.Kind() == reflect.Pointer {
		v = v.Elem()
	}
	var out []cardField
	for i := range v.NumField() {
		sf := v.Type().Field(i)
		tag, ok := sf.Tag.Lookup("card")
		if !ok {
			continue
		}
		sym, meaning, _ := strings.Cut(tag, ",")
		out = append(out, cardField{name: sf.Name, key: snake(sf.Name), symbol: strings.TrimSpace(sym), meaning: strings.TrimSpace(meaning), v: v.Field(i)})
	}
	return out
}

func formatValue(v reflect.Value) string {
	switch v.Kind() {
	case reflect.Int:
		return Int(int(v.Int()))
	case reflect.Float32:
		return Float(float32(v.Float()))
	case reflect.Bool:
		return Bool(v.Bool())
	case reflect.String:
		if v.String() == "" {
			return `""`
		}
		return v.String()
	}
	panic(fmt.Sprintf("card: a card tag on a %v", v.Type()))
}

// snake writes a Go field name in snake_case: KVHeads is kv_heads.
func snake(name string) string {
	r := []rune(name)
	var b strings.Builder
	for i, c := range r {
		if i > 0 && unicode.IsUpper(c) && (unicode.IsLower(r[i-1]) || i+1 < len(r) && unicode.IsLower(r[i+1])) {
			b.WriteByte('_')
		}
		b.WriteRune(unicode.ToLower(c))
	}
	return b.String()
}

// fallbackSymbols name the sizes nn's blocks declare their shapes in, for a
// Config that has no field of that name.
var fallbackSymbols = map[string]string{"Heads": "H", "KVHeads": "H_kv", "HeadDim": "d_h", "Embed": "d_e", "FFN": "d_mlp",
	"VocabSize": "N_V", "ContextLength": "ℓ_max", "Experts": "E", "ExpertFFN": "d_exp", "SharedFFN": "d_sh"}

// ShapeText writes a declared shape expression ("Heads*HeadDim, Embed", see
// nn.CheckShapes) in cfg's card symbols: "H·d_h × d_e".
func ShapeText(expr string, cfg any) string {
	syms := map[string]string{}
	for _, f := range cardFields(cfg) {
		syms[f.name] = f.symbol
	}
	var b strings.Builder
	word := func(w string) {
		if s, ok := syms[w]; ok && s != "" {
			w = s
		} else if s, ok := fallbackSymbols[w]; ok {
			w = s
		}
		b.WriteString(w)
	}
	start := -1
	for i, r := range expr + " " {
		if r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) {
			if start < 0 {
				start = i
			}
			continue
		}
		if start >= 0 {
			word(expr[start:i])
			start = -1
		}
		switch r {
		case '*':
			b.WriteString("·")
		case ',':
			b.WriteString(" × ")
		case ' ':
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// Col is the shape of a matrix of rows rows, written as symbol sym, with a
// column per position: "d_e × ℓ = 64 × ℓ".
func Col(sym string, rows int) string { return fmt.Sprintf("%s × ℓ = %d × ℓ", sym, rows) }

// Stack sets c's steps to those of a decoder: X from the token embedding
// (d_e × ℓ, the card's embed), then for l = 1 … L the layer's steps
// (written at depth 0; placed under the loop), then the steps after it
// (the final norm, the head).
func (c *Card) Stack(layer []Step, after ...Step) {
	d := "d_e × ℓ"
	if n, err := c.Int("embed"); err == nil {
		d = Col("d_e", n)
	}
	c.Steps = []Step{{Text: "ℓ ← length(x)"}, {Text: "for t ∈ [ℓ]: X[:, t] ← W_e[:, x[t]]", Shape: d}, {Text: "for l = 1, 2, …, L do"}}
	for _, s := range layer {
		s.Depth++
		c.Steps = append(c.Steps, s)
	}
	c.Steps = append(append(c.Steps, Step{Text: "end for"}), after...)
}
