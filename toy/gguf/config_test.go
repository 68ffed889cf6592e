package gguf

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

type testConfig struct {
	Embed    int     `gguf:"embedding_length"`
	KVHeads  int     `gguf:"attention.head_count_kv,optional"`
	RopeBase float32 `gguf:"rope.freq_base,optional"`
	Causal   bool    `gguf:"attention.causal,optional"`
	Pooling  string  `gguf:"pooling,optional"`
	Note     string  // untagged: neither read nor written
}

func TestConfigRoundTrip(t *testing.T) {
	w := NewWriter()
	w.SetConfig("toy", testConfig{Embed: 64, RopeBase: 5e5, Causal: true, Pooling: "mean", Note: "x"})
	var b bytes.Buffer
	if _, err := w.WriteTo(&b); err != nil {
		t.Fatal(err)
	}
	f, err := Parse(b.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if f.Has("toy.attention.head_count_kv") {
		t.Error("an optional zero field was written")
	}
	c := testConfig{KVHeads: 7, RopeBase: 10000}
	if err := f.ReadConfig("toy", &c); err != nil {
		t.Fatal(err)
	}
	want := testConfig{Embed: 64, KVHeads: 7, RopeBase: 5e5, Causal: true, Pooling: "mean"}
	if c != want {
		t.Errorf("read %+v, want %+v (an absent optional key keeps its default)", c, want)
	}
	if err := f.ReadConfig("other", &c); !errors.Is(err, ErrMissingKey) || !strings.Contains(err.Error(), "other.embedding_length") {
		t.Errorf("a missing required key: %v", err)
	}
}

func TestConfigRefusesNonFinite(t *testing.T) {
	w := NewWriter()
	w.SetString("general.architecture", "toy")
	w.SetUint32("toy.embedding_length", 8)
	w.SetFloat32("toy.rope.freq_base", -1)
	var b bytes.Buffer
	if _, err := w.WriteTo(&b); err != nil {
		t.Fatal(err)
	}
	f, err := Parse(b.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	var c testConfig
	if err := f.ReadConfig("toy", &c); !errors.Is(err, ErrFormat) {
		t.Errorf("a negative RoPE base: %v", err)
	}
}

// An absent key tagged default:"FIELD" takes that field's value; a present
// one is read.
func TestConfigDefaultFromField(t *testing.T) {
	type cfg struct {
		Heads   int `gguf:"attention.head_count"`
		KVHeads int `gguf:"attention.head_count_kv,optional" default:"Heads"`
	}
	read := func(kv uint32) cfg {
		w := NewWriter()
		w.SetConfig("toy", cfg{Heads: 8})
		if kv > 0 {
			w.SetUint32("toy.attention.head_count_kv", kv)
		}
		var b bytes.Buffer
		if _, err := w.WriteTo(&b); err != nil {
			t.Fatal(err)
		}
		f, err := Parse(b.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		var c cfg
		if err := f.ReadConfig("toy", &c); err != nil {
			t.Fatal(err)
		}
		return c
	}
	if c := read(0); c.KVHeads != 8 {
		t.Errorf("absent: KVHeads %d, want Heads (8)", c.KVHeads)
	}
	if c := read(2); c.KVHeads != 2 {
		t.Errorf("present: KVHeads %d, want 2", c.KVHeads)
	}
}

// A default:"NUM/DEN" is the quotient of two int fields, 0 when DEN is 0;
// defaults resolve in field order, so RopeDim's sees HeadDim's.
func TestConfigDefaultQuotient(t *testing.T) {
	type cfg struct {
		Embed   int `gguf:"embedding_length"`
		Heads   int `gguf:"attention.head_count"`
		HeadDim int `gguf:"attention.key_length,optional" default:"Embed/Heads"`
		RopeDim int `gguf:"rope.dimension_count,optional" default:"HeadDim"`
	}
	read := func(embed, heads, headDim uint32) cfg {
		w := NewWriter()
		w.SetString("general.architecture", "toy")
		w.SetUint32("toy.embedding_length", embed)
		w.SetUint32("toy.attention.head_count", heads)
		if headDim > 0 {
			w.SetUint32("toy.attention.key_length", headDim)
		}
		var b bytes.Buffer
		if _, err := w.WriteTo(&b); err != nil {
			t.Fatal(err)
		}
		f, err := Parse(b.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		var c cfg
		if err := f.ReadConfig("toy", &c); err != nil {
			t.Fatal(err)
		}
		return c
	}
	for _, tc := range []struct {
		embed, heads, headDim uint32
		want                  cfg
	}{
		{96, 8, 0, cfg{96, 8, 12, 12}},   // 96/8
		{100, 8, 0, cfg{100, 8, 12, 12}}, // rounded down
		{96, 0, 0, cfg{96, 0, 0, 0}},     // no heads: 0, not a panic
		{96, 8, 16, cfg{96, 8, 16, 16}},  // present: read, and RopeDim follows it
	} {
		if c := read(tc.embed, tc.heads, tc.headDim); c != tc.want {
			t.Errorf("embedding %d, %d heads, key_length %d: read %+v, want %+v", tc.embed, tc.heads, tc.headDim, c, tc.want)
		}
	}
}

// A default that names no field, or divides fields that are not ints, is
// a mistake in the Config's declaration.
func TestConfigDefaultBadDeclaration(t *testing.T) {
	for _, cfg := range []any{
		&struct {
			A int `gguf:"a,optional" default:"B"`
		}{},
		&struct {
			A int     `gguf:"a,optional" default:"B/C"`
			B int     `gguf:"b"`
			C float32 `gguf:"c"`
		}{},
		&struct {
			A float32 `gguf:"a,optional" default:"B/C"`
			B float32 `gguf:"b"`
			C float32 `gguf:"c"`
		}{},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%T: no panic", cfg)
				}
			}()
			configFields(cfg)
		}()
	}
}
