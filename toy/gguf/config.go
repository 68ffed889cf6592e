// Declared hyperparameters: a Config's `gguf` struct tags, read and written.

package gguf

import (
	"fmt"
	"reflect"
	"strings"
)

// ReadConfig fills the fields of cfg, a pointer to a struct, that carry a
// `gguf:"KEY"` tag from the metadata key arch.KEY:
//
//	type Config struct {
//		Embed    int     `gguf:"embedding_length"`
//		KVHeads  int     `gguf:"attention.head_count_kv,optional"`
//		RopeBase float32 `gguf:"rope.freq_base,optional"`
//	}
//	c := Config{RopeBase: 10000}           // defaults first
//	err := f.ReadConfig("llama", &c)
//
// An int reads an unsigned integer, a float32 a finite float, a bool and a
// string theirs. A key tagged ",optional" may be absent, leaving the field
// as it was (its default); any other absent key is an error naming it. A
// `default` tag on an optional field computes its value instead, once every
// key is read, field after field (so a default may name a field that took
// its own default above it):
//
//	default:"FIELD"      the value of FIELD, of the same type
//	default:"NUM/DEN"    int fields: NUM divided by DEN, rounded down (0 when DEN is 0)
//
//	KVHeads int `gguf:"attention.head_count_kv,optional" default:"Heads"`
//	HeadDim int `gguf:"attention.key_length,optional" default:"Embed/Heads"`
//	RopeDim int `gguf:"rope.dimension_count,optional" default:"HeadDim"`
func (f *File) ReadConfig(arch string, cfg any) error {
	m := f.Meta(arch)
	var later []configField
	for _, d := range configFields(cfg) {
		if d.optional && !m.Has(d.key) {
			if d.from.IsValid() {
				later = append(later, d)
			}
			continue
		}
		switch v := d.v; v.Kind() {
		case reflect.Int:
			v.SetInt(int64(m.Uint(d.key)))
		case reflect.Float32:
			v.SetFloat(float64(m.Float(d.key)))
		case reflect.Bool:
			b, err := f.Bool(m.Key(d.key))
			v.SetBool(b)
			m.keep(err)
		case reflect.String:
			str, err := f.String(m.Key(d.key))
			v.SetString(str)
			m.keep(err)
		}
	}
	for _, d := range later {
		if !d.den.IsValid() {
			d.v.Set(d.from)
		} else if den := d.den.Int(); den != 0 {
			d.v.SetInt(d.from.Int() / den)
		} else {
			d.v.SetInt(0)
		}
	}
	return m.Err()
}

// SetConfig writes general.architecture = arch and the tagged fields of cfg
// as arch.KEY, in llama.cpp's types (integers uint32, floats float32); an
// optional field is written only when it is not zero.
func (w *Writer) SetConfig(arch string, cfg any) {
	w.SetString("general.architecture", arch)
	for _, d := range configFields(cfg) {
		if d.optional && d.v.IsZero() {
			continue
		}
		key := arch + "." + d.key
		switch v := d.v; v.Kind() {
		case reflect.Int:
			w.SetUint32(key, uint32(v.Int()))
		case reflect.Float32:
			w.SetFloat32(key, float32(v.Float()))
		case reflect.Bool:
			w.SetBool(key, v.Bool())
		case reflect.String:
			w.SetString(key, v.String())
		}
	}
}

type configField struct {
	key      string
	optional bool
	v        reflect.Value
	from     reflect.Value // the field a `default:"FIELD"` tag names (NUM in "NUM/DEN"), or invalid
	den      reflect.Value // DEN in a `default:"NUM/DEN"` tag, or invalid
}

// configFields lists the tagged fields of cfg (a struct or a pointer to
// one; only a pointer's can be set). It panics on a tag over a field of
// another type: a programming error in the Config's declaration.
func configFields(cfg any) []configField {
	v := reflect.ValueOf(cfg)
	if v.Kind() == reflect.Pointer {
		v = v.Elem()
	}
	if v.Kind() != reflect.Struct {
		panic(fmt.Sprintf("gguf: a config must be a struct, not %T", cfg))
	}
	var out []configField
	for i := range v.NumField() {
		tag, ok := v.Type().Field(i).Tag.Lookup("gguf")
		if !ok || tag == "-" {
			continue
		}
		switch v.Field(i).Kind() {
		case reflect.Int, reflect.Float32, reflect.Bool, reflect.String:
		default:
			panic(fmt.Sprintf("gguf: %s.%s: a gguf tag on a %v", v.Type(), v.Type().Field(i).Name, v.Field(i).Type()))
		}
		key, opt, _ := strings.Cut(tag, ",")
		d := configField{key: key, optional: opt == "optional", v: v.Field(i)}
		if def, ok := v.Type().Field(i).Tag.Lookup("default"); ok {
			num, den, quotient := strings.Cut(def, "/")
			d.from = v.FieldByName(num)
			if quotient {
				d.den = v.FieldByName(den)
			}
			if !d.from.IsValid() || d.from.Type() != d.v.Type() || quotient && (d.v.Kind() != reflect.Int || !d.den.IsValid() || d.den.Kind() != reflect.Int) {
				panic(fmt.Sprintf("gguf: %s.%s: default %q is not a field of its type or a quotient of int fields", v.Type(), v.Type().Field(i).Name, def))
			}
		}
		out = append(out, d)
	}
	return out
}
