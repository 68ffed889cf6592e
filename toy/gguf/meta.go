// Reading one architecture's hyperparameters in a row.

package gguf

import (
	"fmt"
	"math"
	"strings"
)

// Meta reads the metadata keys of one architecture ("llama.context_length"
// as Uint("context_length")) and keeps the first error, so that a model's
// configuration reads its keys one after another and checks Err once:
//
//	m := f.Meta("llama")
//	c.Embed = m.Uint("embedding_length")
//	c.KVHeads = m.UintOr("attention.head_count_kv", c.Heads)
//	if err := m.Err(); err != nil { … }
//
// After an error every read returns the zero value (the default, for the
// Or forms).
type Meta struct {
	f    *File
	arch string
	err  error
}

// Meta returns a reader of the keys under arch.
func (f *File) Meta(arch string) *Meta { return &Meta{f: f, arch: arch} }

// Key returns the full name of key: "arch.key".
func (m *Meta) Key(key string) string { return m.arch + "." + key }

// Has reports whether the file has arch.key.
func (m *Meta) Has(key string) bool { return m.f.Has(m.Key(key)) }

// keep records err unless an earlier read failed.
func (m *Meta) keep(err error) {
	if m.err == nil {
		m.err = err
	}
}

// Err returns the first error of the reads so far.
func (m *Meta) Err() error { return m.err }

// Uint returns the unsigned integer arch.key, which must be present.
func (m *Meta) Uint(key string) int {
	if m.err != nil {
		return 0
	}
	v, err := m.f.Uint32(m.Key(key))
	m.err = err
	return int(v)
}

// UintOr returns the unsigned integer arch.key, or def when it is absent.
func (m *Meta) UintOr(key string, def int) int {
	if m.err != nil || !m.Has(key) {
		return def
	}
	return m.Uint(key)
}

// Float returns the float arch.key, which must be present and finite (a
// NaN or infinite hyperparameter would make every output NaN); a RoPE base
// (rope.freq_base…) must also be positive.
func (m *Meta) Float(key string) float32 {
	if m.err != nil {
		return 0
	}
	v, err := m.f.Float32(m.Key(key))
	switch f := float64(v); {
	case err != nil:
	case math.IsNaN(f) || math.IsInf(f, 0):
		err = fmt.Errorf("%w: %s is %v; a hyperparameter must be finite", ErrFormat, m.Key(key), v)
	case strings.HasPrefix(key, "rope.freq_base") && v <= 0:
		err = fmt.Errorf("%w: %s is %v; the RoPE base must be positive", ErrFormat, m.Key(key), v)
	}
	m.err = err
	return v
}

// FloatOr returns the float arch.key, or def when it is absent.
func (m *Meta) FloatOr(key string, def float32) float32 {
	if m.err != nil || !m.Has(key) {
		return def
	}
	return m.Float(key)
}

// StringOr returns the string arch.key, or def when it is absent.
func (m *Meta) StringOr(key, def string) string {
	if m.err != nil || !m.Has(key) {
		return def
	}
	v, err := m.f.String(m.Key(key))
	m.err = err
	return v
}

// BoolOr returns the boolean arch.key, or def when it is absent.
func (m *Meta) BoolOr(key string, def bool) bool {
	if m.err != nil || !m.Has(key) {
		return def
	}
	v, err := m.f.Bool(m.Key(key))
	m.err = err
	return v
}

// Decoder is the shape every decoder's metadata gives.
type Decoder struct {
	Context, Embed, Layers, FFN, Heads, KVHeads int
}

// Decoder reads the shape every decoder's metadata gives: arch.
// context_length, embedding_length, block_count, feed_forward_length and
// attention.head_count, all required, and attention.head_count_kv (the
// head count when absent). A width or head count below 1 is an error, so
// that callers may divide by them.
func (m *Meta) Decoder() (Decoder, error) {
	d := Decoder{Context: m.Uint("context_length"), Embed: m.Uint("embedding_length"), Layers: m.Uint("block_count"),
		FFN: m.Uint("feed_forward_length"), Heads: m.Uint("attention.head_count")}
	if err := m.Err(); err != nil {
		return d, err
	}
	if d.Heads <= 0 || d.Embed <= 0 {
		return d, fmt.Errorf("gguf: %s: %d heads, width %d", m.arch, d.Heads, d.Embed)
	}
	d.KVHeads = m.UintOr("attention.head_count_kv", d.Heads)
	return d, m.Err()
}
