package runlog_test

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/toyml/toy/toy/runlog"
)

// A training loop writes runs/<id>/events.jsonl; Read and Scan read runs back.
func Example() {
	runs, _ := os.MkdirTemp("", "runs")
	defer os.RemoveAll(runs)

	for id, losses := range map[string][]float64{"a": {3.5, 2.0, 1.25}, "b": {3.5, 3.0}} {
		w, err := runlog.Create(filepath.Join(runs, id))
		if err != nil {
			panic(err)
		}
		w.Start("from-scratch", "go", map[string]int{"layers": 1}, map[string]float64{"lr": 1e-3})
		for i, loss := range losses {
			w.Step(i+1, loss, 1e-3, 64, 10*time.Millisecond) // steps count from 1
		}
		w.End("done")
	}

	r, err := runlog.Read(filepath.Join(runs, "a"))
	if err != nil {
		panic(err)
	}
	fmt.Println(r.ID, r.Recipe, r.LossCurve, r.FinalLoss, r.Ended, string(r.Config))

	all, _ := runlog.Scan(runs) // best final loss first
	for _, r := range all {
		fmt.Println(r.ID, r.FinalLoss)
	}
	// Output:
	// a from-scratch [3.5 2 1.25] 1.25 done {"lr":0.001}
	// a 1.25
	// b 3
}
