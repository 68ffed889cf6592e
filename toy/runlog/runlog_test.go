package runlog

import (
	"math"
	"os"
	"path/filepath"
	"slices"
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
