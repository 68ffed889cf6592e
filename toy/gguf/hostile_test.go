//go:build unix

package gguf

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/toyml/toy/toy/tensor"
)

// A FIFO (or a device) as the model path is refused at once: opening it
// would wait forever for a writer.
func TestOpenRefusesFIFO(t *testing.T) {
	path := filepath.Join(t.TempDir(), "model.gguf")
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Skip("mkfifo:", err)
	}
	done := make(chan error, 1)
	go func() { _, err := Open(path); done <- err }()
	select {
	case err := <-done:
		if !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), "not a regular file") {
			t.Errorf("got %v, want ErrFormat saying it is not a regular file", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Open on a FIFO still blocks after 5 s")
	}
}

// Two tensors at the same offset alias each other's weights: refused.
func TestParseRefusesOverlappingTensors(t *testing.T) {
	w := NewWriter()
	w.SetString("general.architecture", "llama")
	if err := w.AddFloat32("a.weight", tensor.F32, make([]float32, 64), 64); err != nil {
		t.Fatal(err)
	}
	if err := w.AddFloat32("b.weight", tensor.F32, make([]float32, 64), 64); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if _, err := w.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	b := buf.Bytes()
	if _, err := Parse(b); err != nil {
		t.Fatalf("the file as written: %v", err)
	}
	// b.weight's info: name, 1 dimension, the dimension, the type, then the
	// offset, which we point at a.weight's bytes.
	i := bytes.Index(b, []byte("b.weight")) + len("b.weight") + 4 + 8 + 4
	binary.LittleEndian.PutUint64(b[i:], 0)
	_, err := Parse(b)
	if !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), "overlap") {
		t.Errorf("got %v, want ErrFormat naming the overlap", err)
	}
}

// A NaN, infinite, zero or negative RoPE base, or any non-finite float
// hyperparameter, is refused when the configuration is read.
func TestMetaRefusesNonFiniteHyperparameters(t *testing.T) {
	for _, c := range []struct {
		key  string
		v    float32
		want string
	}{
		{"rope.freq_base", float32(math.NaN()), "must be finite"},
		{"rope.freq_base", float32(math.Inf(1)), "must be finite"},
		{"rope.freq_base", 0, "must be positive"},
		{"rope.freq_base", -10000, "must be positive"},
		{"attention.layer_norm_rms_epsilon", float32(math.Inf(-1)), "must be finite"},
	} {
		w := NewWriter()
		w.SetString("general.architecture", "llama")
		w.SetFloat32("llama."+c.key, c.v)
		var buf bytes.Buffer
		if _, err := w.WriteTo(&buf); err != nil {
			t.Fatal(err)
		}
		f, err := Parse(buf.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		m := f.Meta("llama")
		m.FloatOr(c.key, 1)
		if err := m.Err(); !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s = %v: got %v, want %q", c.key, c.v, err, c.want)
		}
	}
}

// What a killed WriteFile leaves is removed on the next run; the file itself
// and other files stay.
func TestRemoveTemps(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "checkpoint.gguf")
	for _, name := range []string{"checkpoint.gguf", ".checkpoint.gguf.tmp123", ".checkpoint.gguf.tmp9", "events.jsonl", ".other.gguf.tmp1"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	n, err := RemoveTemps(path)
	if err != nil || n != 2 {
		t.Fatalf("RemoveTemps: %d, %v; want 2 removed", n, err)
	}
	left, _ := filepath.Glob(filepath.Join(dir, "*"))
	hidden, _ := filepath.Glob(filepath.Join(dir, ".*"))
	if len(left) != 3 || len(hidden) != 1 { // Go's * matches dot files too
		t.Errorf("left %v %v", left, hidden)
	}
}
