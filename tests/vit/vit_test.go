package vitgate

import (
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/toyml/toy/internal/testmodel"
	"github.com/toyml/toy/kernels/cpu"
	"github.com/toyml/toy/kernels/cuda"
	"github.com/toyml/toy/kernels/cuda/emu"
	"github.com/toyml/toy/toy/models/vit"
	"github.com/toyml/toy/toy/pixels"
	"github.com/toyml/toy/toy/tensor"
)

type golden struct {
	ModelSHA256 string               `json:"model_sha256"`
	Label       int                  `json:"label"`
	Logits      []float64            `json:"logits"`
	Loss        float64              `json:"loss"`
	Grads       map[string][]float64 `json:"grads"`
	Images      []struct {
		Name   string    `json:"name"`
		RGB8   []int     `json:"rgb8"`
		Pixels []float64 `json:"pixels"`
		Logits []float64 `json:"logits"`
	} `json:"images"`
}

// load reads the golden and writes the gate model (F32 unless dt says
// otherwise), checking that the F32 file is the one PyTorch read.
func load(t *testing.T, dt tensor.DType) (*vit.Model, golden) {
	t.Helper()
	var g golden
	b, err := os.ReadFile(filepath.Join("testdata", "gate.golden.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "gate.gguf")
	if err := Model().WriteGGUF(path, tensor.F32); err != nil {
		t.Fatal(err)
	}
	if sum, _ := testmodel.FileSHA256(path); sum != g.ModelSHA256 {
		t.Fatalf("gate model has SHA-256 %s; the golden was made from %s (rerun torch_ref.py, see its doc)", sum, g.ModelSHA256)
	}
	if dt != tensor.F32 {
		f32, err := vit.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		path = filepath.Join(t.TempDir(), "gate-"+dt.String()+".gguf")
		err = f32.WriteGGUF(path, dt)
		f32.Close()
		if err != nil {
			t.Fatal(err)
		}
	}
	m, err := vit.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m, g
}

// maxDiff returns the largest |got − want| and where it is.
func maxDiff(got []float32, want []float64) (float64, int) {
	worst, at := 0.0, -1
	for i := range want {
		if d := math.Abs(float64(got[i]) - want[i]); d > worst || math.IsNaN(d) {
			worst, at = d, i
		}
	}
	return worst, at
}

// TestLogitsAgainstPyTorch: the forward pass of the F32 gate model on the
// synthetic input, against the float64 PyTorch twin, within 1e-4.
func TestLogitsAgainstPyTorch(t *testing.T) {
	m, g := load(t, tensor.F32)
	got := m.Forward(Input()).Data()
	if len(got) != len(g.Logits) {
		t.Fatalf("%d logits, PyTorch %d", len(got), len(g.Logits))
	}
	d, at := maxDiff(got, g.Logits)
	t.Logf("logits: max |toy − PyTorch| = %.2e (class %d); toy %.6f, PyTorch %.6f", d, at, got[0], g.Logits[0])
	if d > 1e-4 {
		t.Fatalf("logit %d: toy %.6f, PyTorch %.6f (|Δ| %.2e > 1e-4)", at, got[at], g.Logits[at], d)
	}
}

// TestQuantizedAgainstPyTorch: the same file as F16, BF16 and Q8_0 (every
// matrix; the 8-pixel patch rows stay F32 under Q8_0's blocks of 32),
// within the tolerance each type's rounding of weights and activations
// leaves: measured 9.0e-4 (F16), 1.2e-2 (BF16), 3.6e-2 (Q8_0) on logits of
// magnitude ~2, each bound about three times that.
func TestQuantizedAgainstPyTorch(t *testing.T) {
	for _, c := range []struct {
		dt  tensor.DType
		tol float64
	}{{tensor.F16, 3e-3}, {tensor.BF16, 4e-2}, {tensor.Q8_0, 1e-1}} {
		t.Run(c.dt.String(), func(t *testing.T) {
			m, g := load(t, c.dt)
			d, at := maxDiff(m.Forward(Input()).Data(), g.Logits)
			t.Logf("%v logits: max |toy − PyTorch F32| = %.2e (class %d)", c.dt, d, at)
			if d > c.tol {
				t.Fatalf("%v: logit %d off by %.2e > %.0e", c.dt, at, d, c.tol)
			}
		})
	}
}

// TestGradientsAgainstPyTorch: the cross-entropy loss of the synthetic
// input's logits for class Label, and the gradient of every parameter,
// against PyTorch's float64 autograd.
func TestGradientsAgainstPyTorch(t *testing.T) {
	_, g := load(t, tensor.F32)
	m := Model() // trainable F32 leaves, the same weights
	tape := tensor.NewTape()
	tensor.Record(tape)
	loss := tensor.CrossEntropy(m.Forward(Input()), []int32{int32(g.Label)})
	tensor.Record(nil)
	tape.Backward(loss)
	if d := math.Abs(float64(loss.Data()[0]) - g.Loss); d > 1e-5 {
		t.Errorf("loss %.7f, PyTorch %.7f", loss.Data()[0], g.Loss)
	}
	worst, n := 0.0, 0
	for _, w := range m.Weights() {
		want, ok := g.Grads[w.Name]
		if !ok {
			t.Fatalf("PyTorch has no parameter %s", w.Name)
		}
		if w.T.Grad() == nil {
			t.Fatalf("%s: no gradient", w.Name)
		}
		got := w.T.Grad().Data()
		if len(got) != len(want) {
			t.Fatalf("%s: %d gradients, PyTorch %d", w.Name, len(got), len(want))
		}
		for i := range want {
			d := math.Abs(float64(got[i]) - want[i])
			worst = max(worst, d)
			if d > 1e-5+1e-3*math.Abs(want[i]) {
				t.Fatalf("%s[%d]: gradient %.7g, PyTorch %.7g", w.Name, i, got[i], want[i])
			}
		}
		n += len(want)
	}
	if n != len(flatten(g.Grads)) {
		t.Fatalf("compared %d gradients, PyTorch has %d", n, len(flatten(g.Grads)))
	}
	t.Logf("loss %.7f (PyTorch %.7f); %d gradients, max |Δ| %.2e", loss.Data()[0], g.Loss, n, worst)
}

func flatten(m map[string][]float64) []float64 {
	var out []float64
	for _, v := range m {
		out = append(out, v...)
	}
	return out
}

// TestPreprocessAgainstPIL: each PNG resized by toy is PIL's resize level for
// level, the normalised pixels equal numpy's float32 ones, and the logits on
// them match PyTorch's within 1e-4.
func TestPreprocessAgainstPIL(t *testing.T) {
	m, g := load(t, tensor.F32)
	if len(g.Images) != len(Images) {
		t.Fatalf("golden has %d images, want %d", len(g.Images), len(Images))
	}
	for _, want := range g.Images {
		t.Run(want.Name, func(t *testing.T) {
			img, err := pixels.Load(filepath.Join("testdata", want.Name+".png"))
			if err != nil {
				t.Fatal(err)
			}
			c := m.Config
			pix, w, h := pixels.RGB8(img)
			rgb := pixels.ResizeBilinear(pix, w, h, c.ImageSize, c.ImageSize) // [R, R, 3]
			R := c.ImageSize
			for ch := range 3 {
				for i := range R * R {
					if got, exp := int(rgb[3*i+ch]), want.RGB8[ch*R*R+i]; got != exp {
						t.Fatalf("resized pixel (%d, %d) channel %d: toy %d, PIL %d", i%R, i/R, ch, got, exp)
					}
				}
			}
			x := c.Preprocess(img)
			if d, at := maxDiff(x.Data(), want.Pixels); d != 0 {
				t.Fatalf("normalised pixel %d: toy %v, numpy %v", at, x.Data()[at], want.Pixels[at])
			}
			d, at := maxDiff(m.Forward(x).Data(), want.Logits)
			t.Logf("%s: resize and pixels identical to PIL/numpy; logits max |Δ| %.2e", want.Name, d)
			if d > 1e-4 {
				t.Fatalf("logit %d off by %.2e", at, d)
			}
		})
	}
}

// TestBackends: the native CPU backend and the CUDA backend (a GPU, or the
// emulated device when there is none and g++ is here) against pure Go on the
// synthetic input.
func TestBackends(t *testing.T) {
	m, _ := load(t, tensor.F32)
	want := m.Forward(Input()).Data()
	run := func(t *testing.T, b tensor.Backend, tol float64) {
		old := tensor.ActiveBackend()
		tensor.SetBackend(b)
		got := m.Forward(Input()).Float32s()
		tensor.SetBackend(old)
		worst := 0.0
		for i := range want {
			worst = max(worst, math.Abs(float64(got[i]-want[i])))
		}
		t.Logf("%s: max |Δ| from pure Go %.2e", b.Name(), worst)
		if worst > tol || math.IsNaN(worst) {
			t.Fatalf("%s: logits off pure Go's by %.2e > %.0e", b.Name(), worst, tol)
		}
	}
	t.Run("native", func(t *testing.T) {
		b, err := cpu.Load()
		if err != nil {
			t.Skipf("no native CPU kernels: %v", err)
		}
		run(t, b, 1e-5)
	})
	t.Run("cuda", func(t *testing.T) {
		b, err := cuda.Load()
		if err != nil {
			if testing.Short() {
				t.Skip("no GPU; the emulator is skipped in -short mode")
			}
			lib, berr := emu.Build(t.TempDir())
			if errors.Is(berr, emu.ErrNoCompiler) || errors.Is(berr, emu.ErrUnsupported) {
				t.Skipf("no GPU (%v) and no emulator (%v)", err, berr)
			}
			if berr != nil {
				t.Fatal(berr)
			}
			if b, err = cuda.LoadLibrary(lib, lib); err != nil {
				t.Fatal(err)
			}
		}
		run(t, b, 1e-4)
		// Weights are resident now; a second image costs its pixels up and
		// its logits down: the exact GELU runs on the device too.
		old := tensor.ActiveBackend()
		tensor.SetBackend(b)
		defer tensor.SetBackend(old)
		up0, down0 := b.Transfers()
		m.Forward(Input()).Float32s()
		up, down := b.Transfers()
		t.Logf("cuda: a forward pass copies %d tensors up, %d down", up-up0, down-down0)
		if down-down0 != 1 {
			t.Errorf("a forward pass downloads %d tensors, want 1 (the logits)", down-down0)
		}
	})
}
