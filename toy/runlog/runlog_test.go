package runlog

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestWriteScan(t *testing.T) {
	dir := t.TempDir()
	for i, losses := range [][]float64{{3, 2.5, 2}, {3, 1.5}, {}} {
		w, err := Create(filepath.Join(dir, []string{"a", "b", "c"}[i]))
		if err != nil {
			t.Fatal(err)
		}
		w.Start("from-scratch", "go", map[string]int{"layers": 2}, map[string]float64{"lr": 1e-3})
		for s, l := range losses {
			w.Step(s+1, l, 1e-3, 24, time.Millisecond)
		}
		if i < 2 {
			w.End("done")
		}
	}
	// A kill mid-line leaves a partial last line, which is skipped.
	f, _ := os.OpenFile(filepath.Join(dir, "a", "events.jsonl"), os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"type":"step","step":4,"lo`)
	f.Close()

	runs, err := Scan(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 3 || runs[0].ID != "b" || runs[1].ID != "a" || runs[2].ID != "c" {
		t.Fatalf("order %v", runs)
	}
	if !slices.Equal(runs[1].LossCurve, []float64{3, 2.5, 2}) || runs[1].FinalLoss != 2 || runs[1].Ended != "done" || runs[1].Recipe != "from-scratch" {
		t.Fatalf("run a: %+v", runs[1])
	}
	if !math.IsNaN(runs[2].FinalLoss) || runs[2].Ended != "" {
		t.Fatalf("run c: %+v", runs[2])
	}
	if string(runs[0].Config) != `{"lr":0.001}` {
		t.Fatalf("config %s", runs[0].Config)
	}
}

// TestStepCountsFromOne: step 0 would be lost by Read, so Step refuses it.
func TestStepCountsFromOne(t *testing.T) {
	w, err := Create(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Step(0, 1, 1e-3, 8, time.Millisecond); err == nil {
		t.Error("Step(0, …): no error")
	}
	if err := w.Step(1, 1, 1e-3, 8, time.Millisecond); err != nil {
		t.Error(err)
	}
}

// Two runs never write one directory: the second Create fails with ErrBusy
// until the first ends.
func TestCreateLocksTheRun(t *testing.T) {
	dir := t.TempDir()
	w, err := Create(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Create(dir); !errors.Is(err, ErrBusy) {
		t.Fatalf("second Create: %v, want ErrBusy", err)
	}
	if err := w.End("done"); err != nil {
		t.Fatal(err)
	}
	w2, err := Create(dir)
	if err != nil {
		t.Fatalf("Create after End: %v", err)
	}
	w2.Close()
}

// A run that ends before any step (resumed at its last step) writes a
// valid run_end; a NaN loss is refused with a clear error.
func TestEndWithoutStepsAndNaNLoss(t *testing.T) {
	dir := t.TempDir()
	w, err := Create(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Step(1, math.NaN(), 1e-3, 10, time.Second); err == nil || !strings.Contains(err.Error(), "diverged") {
		t.Errorf("NaN loss: %v", err)
	}
	if err := w.End("done"); err != nil {
		t.Fatalf("End with no steps: %v", err)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "events.jsonl"))
	if !strings.Contains(string(b), `"reason":"done"`) {
		t.Errorf("events: %s", b)
	}
}
