package quantize

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/toyml/toy/internal/testmodel"
	"github.com/toyml/toy/tests/training"
	"github.com/toyml/toy/toy"
	"github.com/toyml/toy/toy/gguf"
)

type imatrixGolden struct {
	Name        string               `json:"name"`
	ModelSHA256 string               `json:"model_sha256"`
	Chunk       int                  `json:"chunk"`
	IDs         []int32              `json:"ids"`
	Sums        map[string][]float64 `json:"sums"`
	Counts      map[string][]float64 `json:"counts"`
}

// TestImatrixMatchesTorch: Model.Imatrix measures what PyTorch measures
// (imatrix_torch.py, the training gate's float64 forward pass with every
// weight product recorded) on the training gate's llama and mixtral
// models, chunk by chunk: the same matrices, the same row counts per
// expert, and sums of squares within 1e-5 relative. The file it writes
// reads back the same, and its weights are the sums over the counts.
func TestImatrixMatchesTorch(t *testing.T) {
	for _, name := range []string{"llama", "mixtral"} {
		t.Run(name, func(t *testing.T) {
			var g imatrixGolden
			readGolden(t, "imatrix-"+name+".golden.json", &g)
			path := filepath.Join(t.TempDir(), name+".gguf")
			for _, c := range training.Cases() {
				if c.Name == name {
					if err := training.WriteGGUF(c, path); err != nil {
						t.Fatal(err)
					}
				}
			}
			if sum, _ := testmodel.FileSHA256(path); sum != g.ModelSHA256 {
				t.Fatalf("model SHA-256 %s, the golden was made from %s", sum, g.ModelSHA256)
			}
			m, err := toy.Load(path)
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			im, err := m.Imatrix(g.IDs, toy.ImatrixOptions{Chunk: g.Chunk, Dataset: "ids"})
			if err != nil {
				t.Fatal(err)
			}
			if im.ChunkCount != len(g.IDs)/g.Chunk || im.ChunkSize != g.Chunk {
				t.Errorf("%d chunks of %d, want %d of %d", im.ChunkCount, im.ChunkSize, len(g.IDs)/g.Chunk, g.Chunk)
			}
			var names, want []string
			for n := range im.Sums {
				names = append(names, n)
			}
			for n := range g.Sums {
				want = append(want, n)
			}
			slices.Sort(names)
			slices.Sort(want)
			if !slices.Equal(names, want) {
				t.Fatalf("matrices %v, PyTorch's %v", names, want)
			}
			worst := 0.0
			for _, n := range names {
				for e, c := range g.Counts[n] {
					if float64(im.Counts[n][e]) != c {
						t.Errorf("%s: expert %d counted %v rows, PyTorch %v", n, e, im.Counts[n][e], c)
					}
				}
				if len(im.Sums[n]) != len(g.Sums[n]) {
					t.Fatalf("%s: %d sums, PyTorch %d", n, len(im.Sums[n]), len(g.Sums[n]))
				}
				for i, s := range g.Sums[n] {
					d := math.Abs(float64(im.Sums[n][i])-s) / max(math.Abs(s), 1e-30)
					worst = max(worst, d)
					if d > 1e-5 {
						t.Fatalf("%s[%d] = %v, PyTorch %v", n, i, im.Sums[n][i], s)
					}
				}
			}
			t.Logf("%d matrices, sums within %.1e relative", len(names), worst)

			// The file round trip, and llama-quantize's weights.
			w, err := im.Writer()
			if err != nil {
				t.Fatal(err)
			}
			file := filepath.Join(t.TempDir(), "imatrix.gguf")
			if err := w.WriteFile(file); err != nil {
				t.Fatal(err)
			}
			back, err := gguf.ReadImatrix(file)
			if err != nil {
				t.Fatal(err)
			}
			if back.ChunkCount != im.ChunkCount || back.ChunkSize != im.ChunkSize || !slices.Equal(back.Datasets, []string{"ids"}) {
				t.Errorf("read back %d chunks of %d, datasets %q", back.ChunkCount, back.ChunkSize, back.Datasets)
			}
			weights := back.Weights()
			for _, n := range names {
				if !slices.Equal(back.Sums[n], im.Sums[n]) || !slices.Equal(back.Counts[n], im.Counts[n]) {
					t.Fatalf("%s read back differs", n)
				}
				cols := len(im.Sums[n]) / len(im.Counts[n])
				for i, s := range im.Sums[n] {
					c := im.Counts[n][i/cols]
					want := float32(1)
					if c > 0 {
						want = s / c
					}
					if weights[n][i] != want {
						t.Fatalf("%s: weight %d = %v, want %v", n, i, weights[n][i], want)
					}
				}
			}
		})
	}
}

// TestReadImatrixErrors: files that are no importance matrix are refused
// with ErrImatrix, and the legacy format reads.
func TestReadImatrixErrors(t *testing.T) {
	dir := t.TempDir()
	w := gguf.NewWriter()
	w.SetString("general.type", "imatrix")
	if err := w.AddFloat32("blk.0.attn_q.weight.in_sum2", 0, []float32{1, 2, 3}, 1, 3); err != nil {
		t.Fatal(err)
	}
	noCounts := filepath.Join(dir, "nocounts.gguf")
	if err := w.WriteFile(noCounts); err != nil {
		t.Fatal(err)
	}
	garbage := filepath.Join(dir, "garbage.dat")
	os.WriteFile(garbage, []byte{1, 0, 0, 0, 200, 0, 0, 0}, 0o644)
	for _, file := range []string{noCounts, garbage} {
		if _, err := gguf.ReadImatrix(file); err == nil || !errors.Is(err, gguf.ErrImatrix) {
			t.Errorf("%s: %v, want ErrImatrix", filepath.Base(file), err)
		}
	}
	// Legacy: one entry "w" of 2 values summed over 4 calls, 3 chunks of "wiki".
	legacy := []byte{1, 0, 0, 0, 1, 0, 0, 0, 'w', 4, 0, 0, 0, 2, 0, 0, 0}
	legacy = append(legacy, le32f(8)...)
	legacy = append(legacy, le32f(2)...)
	legacy = append(legacy, 3, 0, 0, 0, 4, 0, 0, 0, 'w', 'i', 'k', 'i')
	file := filepath.Join(dir, "legacy.dat")
	os.WriteFile(file, legacy, 0o644)
	im, err := gguf.ReadImatrix(file)
	if err != nil {
		t.Fatal(err)
	}
	if w := im.Weights()["w"]; !slices.Equal(w, []float32{2, 0.5}) || im.ChunkCount != 3 || !slices.Equal(im.Datasets, []string{"wiki"}) {
		t.Errorf("legacy: weights %v, %d chunks, datasets %q", w, im.ChunkCount, im.Datasets)
	}
}

func le32f(f float32) []byte {
	b := math.Float32bits(f)
	return []byte{byte(b), byte(b >> 8), byte(b >> 16), byte(b >> 24)}
}
