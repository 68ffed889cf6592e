package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/toyml/toy/internal/testmodel"
	"github.com/toyml/toy/toy"
	"github.com/toyml/toy/toy/gguf"
	"github.com/toyml/toy/toy/tensor"
)

// TestQuantizeQ4KM: --type takes llama.cpp's names in any case; a model of
// width 256 gets Q4_K with the head in Q6_K, norms kept, and the summary
// says so; the file loads and runs.
func TestQuantizeQ4KM(t *testing.T) {
	dir := t.TempDir()
	in, out := filepath.Join(dir, "f32.gguf"), filepath.Join(dir, "q4_k_m.gguf")
	spec := testmodel.Spec{Name: "w256", Arch: "llama", DType: tensor.F32, Vocab: "none", VocabSize: 300,
		Embed: 256, Layers: 2, FFN: 256, Heads: 4, KVHeads: 2, Context: 64, Seed: 1}
	if _, err := testmodel.Write(spec, in); err != nil {
		t.Fatal(err)
	}
	status, stdout, stderr := runToy("quantize", in, out, "--type", "Q4_K_M")
	if status != 0 {
		t.Fatalf("status %d: %s", status, stderr)
	}
	for _, want := range []string{"wrote " + out + " (Q4_K_M)", "Q4_K ", "Q6_K ", "F32 ", "kept as they were", "size "} {
		if !strings.Contains(stdout, want) {
			t.Errorf("summary lacks %q:\n%s", want, stdout)
		}
	}
	f, err := gguf.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if ft, _ := f.Uint32("general.file_type"); ft != 15 {
		t.Errorf("file_type %d, want 15", ft)
	}
	for name, want := range map[string]tensor.DType{"output.weight": tensor.Q6_K, "blk.0.attn_q.weight": tensor.Q4_K,
		"blk.1.ffn_down.weight": tensor.Q6_K, "blk.0.attn_norm.weight": tensor.F32} {
		if ti, _ := f.Info(name); ti.Type != want {
			t.Errorf("%s: %v, want %v", name, ti.Type, want)
		}
	}
	m, err := toy.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if _, err := m.Forward([]int32{1, 2, 3}); err != nil {
		t.Error(err)
	}
}

// TestQuantizePureAndErrors: --pure gives every matrix the base type (rows
// of 32 are not Q4_K blocks: Q5_0, the fallback); unknown types and
// missing arguments are usage errors (status 2).
func TestQuantizePureAndErrors(t *testing.T) {
	in := tinyModel(t) // width 32
	out := filepath.Join(t.TempDir(), "pure.gguf")
	if status, stdout, stderr := runToy("quantize", in, out, "--type", "q4_k_m", "--pure"); status != 0 ||
		!strings.Contains(stdout, "Q5_0") || !strings.Contains(stdout, "fallback") {
		t.Errorf("--pure: status %d\n%s%s", status, stdout, stderr)
	}
	if status, _, stderr := runToy("quantize", in, out, "--type", "q4_k"); status != 2 || !strings.Contains(stderr, "q4_k_m") {
		t.Errorf("--type q4_k: status %d, %q (want 2, listing the types)", status, stderr)
	}
	if status, _, _ := runToy("quantize", in); status != 2 {
		t.Errorf("one argument: status %d, want 2", status)
	}
}
