package recipes

import (
	"math"
	"path/filepath"
	"slices"
	"testing"

	"github.com/toyml/toy/toy/gguf"
)

// checkFromScratch trains a model of configuration c from scratch for 30
// steps at learning rate lr (0: 3e-3) on the pattern of batchAt and checks that it learns (the loss falls
// from about ln 40 to under half of it), that a checkpoint taken after step
// 26 resumes bit for bit, and that the saved model, loaded back with load,
// gives the trained model's logits. It returns the trained recipe and its
// options.
func checkFromScratch(t *testing.T, c any, lr float64, load func(*gguf.File) (Model, error)) (*Recipe, Options) {
	t.Helper()
	if lr == 0 {
		lr = 3e-3
	}
	o := NewOptions(12).WithSteps(30).WithLR(lr).WithWarmup(2)
	r, err := NewFromScratch(c, o)
	if err != nil {
		t.Fatal(err)
	}
	var losses []float32
	dir := t.TempDir()
	ckpt := filepath.Join(dir, "ckpt.gguf")
	for step := 0; step < 30; step++ {
		loss, err := r.Step(batchAt(t, step))
		if err != nil {
			t.Fatal(err)
		}
		losses = append(losses, loss)
		if step == 26 {
			if err := r.SaveCheckpoint(ckpt); err != nil {
				t.Fatal(err)
			}
		}
	}
	first, last := losses[0], losses[len(losses)-1]
	if math.Abs(float64(first)-math.Log(40)) > 0.2 || last > first/2 {
		t.Errorf("loss %.3f → %.3f after 30 steps", first, last)
	}
	t.Logf("loss %.3f → %.3f after 30 steps", first, last)

	resumed, err := Resume(ckpt)
	if err != nil {
		t.Fatal(err)
	}
	for step := 27; step < 30; step++ {
		loss, err := resumed.Step(batchAt(t, step))
		if err != nil {
			t.Fatal(err)
		}
		if loss != losses[step] {
			t.Fatalf("step %d: loss %v after resuming, %v straight", step, loss, losses[step])
		}
	}

	path := filepath.Join(dir, "model.gguf")
	if err := r.SaveModel(path); err != nil {
		t.Fatal(err)
	}
	f, err := gguf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m, err := load(f)
	if err != nil {
		t.Fatal(err)
	}
	ids := []int32{1, 4, 7, 0, 3, 6}
	want := r.Model.Logits(r.Model.Hidden(ids, nil)).Data()
	if got := m.Logits(m.Hidden(ids, nil)).Data(); !slices.Equal(got, want) {
		t.Fatal("the saved model's logits differ from the trained model's")
	}
	return r, o
}
