package cli

import (
	"os"
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

// TestImatrixThenQuantize: toy imatrix measures a model on a text and
// writes llama-imatrix's file; toy quantize --imatrix reads it and weights
// the rounding (the Q4_K bytes change, the types do not), and the
// overrides set the head's, the embeddings' and named matrices' types.
func TestImatrixThenQuantize(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "f32.gguf")
	spec := testmodel.Spec{Name: "w256", Arch: "llama", DType: tensor.F32, Vocab: "llama2", Embed: 256, Layers: 2, FFN: 256,
		Heads: 4, KVHeads: 2, Context: 64, Seed: 3}
	if _, err := testmodel.Write(spec, in); err != nil {
		t.Fatal(err)
	}
	text := filepath.Join(dir, "text.txt")
	os.WriteFile(text, []byte(strings.Repeat("The quick brown fox jumps over the lazy dog, and then it rests by the river. ", 12)), 0o644)
	im := filepath.Join(dir, "imatrix.gguf")
	status, stdout, stderr := runToy("imatrix", in, "--text", text, "--chunk", "32", "--output", im)
	if status != 0 || !strings.Contains(stdout, "wrote "+im+": 14 matrices") {
		t.Fatalf("imatrix: status %d\n%s%s", status, stdout, stderr)
	}
	if status, _, stderr := runToy("imatrix", in, "--text", text, "--chunk", "8"); status != 2 || !strings.Contains(stderr, "at least 16") {
		t.Errorf("--chunk 8: status %d, %q", status, stderr)
	}

	plain, weighted := filepath.Join(dir, "plain.gguf"), filepath.Join(dir, "weighted.gguf")
	if status, _, stderr := runToy("quantize", in, plain, "--type", "q4_k_m"); status != 0 {
		t.Fatalf("status %d: %s", status, stderr)
	}
	status, stdout, stderr = runToy("quantize", in, weighted, "--type", "q4_k_m", "--imatrix", im,
		"--output-tensor-type", "q8_0", "--token-embedding-type", "q5_k", "--tensor-type", `blk\.1\.attn_v=q8_0`, "--tensor-type", "attn_v=q4_0")
	if status != 0 || !strings.Contains(stdout, "importance matrix of 14 matrices from") || !strings.Contains(stdout, "text.txt") {
		t.Fatalf("status %d\n%s%s", status, stdout, stderr)
	}
	a, err := gguf.Open(plain)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := gguf.Open(weighted)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	for name, want := range map[string]tensor.DType{"output.weight": tensor.Q8_0, "token_embd.weight": tensor.Q5_K,
		"blk.1.attn_v.weight": tensor.Q8_0, "blk.0.attn_v.weight": tensor.Q4_0, "blk.0.attn_q.weight": tensor.Q4_K} {
		if ti, _ := b.Info(name); ti.Type != want {
			t.Errorf("%s: %v, want %v", name, ti.Type, want)
		}
	}
	if file, _ := b.String("quantize.imatrix.file"); file != im {
		t.Errorf("quantize.imatrix.file %q, want %q", file, im)
	}
	if n, _ := b.Int("quantize.imatrix.entries_count"); n != 14 {
		t.Errorf("quantize.imatrix.entries_count %d, want 14", n)
	}
	pa, _, _ := a.Data("blk.0.attn_q.weight")
	pb, _, _ := b.Data("blk.0.attn_q.weight")
	if string(pa) == string(pb) {
		t.Error("the importance matrix changed nothing in blk.0.attn_q")
	}
	m, err := toy.Load(weighted)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if _, err := m.Forward([]int32{1, 2, 3}); err != nil {
		t.Error(err)
	}
	for _, bad := range [][]string{{"--tensor-type", "attn_v"}, {"--tensor-type", "attn_v=q9"}, {"--output-tensor-type", "x"}} {
		if status, _, stderr := runToy(append([]string{"quantize", in, weighted}, bad...)...); status != 2 {
			t.Errorf("%v: status %d, %q", bad, status, stderr)
		}
	}
}
