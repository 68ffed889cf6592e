package cudatest

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/toyml/toy/internal/testmodel"
	"github.com/toyml/toy/toy"
	"github.com/toyml/toy/toy/engine"
	"github.com/toyml/toy/toy/tensor"
)

// TestRecurrentRewind: a Qwen3.5 delta-rule layer keeps its state, its
// snapshots and the inputs it replays on the device. The qwen35-f32 gate
// model runs one session on the CPU and one on the device: a 70-token
// prompt (its kept inputs wrap around the 64-row ring), 20 decode steps,
// then truncations that a snapshot and a replay restore (back into a
// speculative check of 4 tokens, into the decoded tokens, to the prompt's
// end) and one that is not kept (the session runs the tokens again). Every
// call's logits agree with the CPU's within 1e-3, and a call after a
// restoring truncation moves what a decode step moves: its ids up, its
// logits down.
func TestRecurrentRewind(t *testing.T) {
	b := gpu(t)
	spec := specNamed(t, "qwen35-f32")
	path := filepath.Join(t.TempDir(), spec.File())
	if _, err := testmodel.Write(spec, path); err != nil {
		t.Fatal(err)
	}
	m, err := toy.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	V := m.Net.VocabSize()
	x := make([]int32, 120)
	for i := range x {
		x[i] = int32((i*37 + 11) % V)
	}
	type step struct {
		truncate int     // truncate to this first (−1: no)
		ids      []int32 // then run these
		moves    bool    // count the transfers of the run
	}
	script := []step{{-1, x[:70], false}}
	for i := 70; i < 90; i++ {
		script = append(script, step{-1, x[i : i+1], true})
	}
	script = append(script,
		step{-1, x[90:94], true},  // a speculative check
		step{92, x[92:93], true},  // two of its guesses not taken
		step{80, x[80:82], true},  // back into the decoded tokens
		step{70, x[70:71], true},  // to the prompt's end
		step{71, x[71:75], true},  // and on
		step{20, x[20:21], false}, // not kept: the session runs 20 tokens again
		step{21, x[21:22], true})  // nothing to undo
	run := func(count bool) (logits [][]float32, moved []string) {
		s := engine.NewSession(m.Net, len(x))
		for i, st := range script {
			if st.truncate >= 0 {
				s.Truncate(st.truncate)
			}
			var up0, down0 int64
			if count {
				up0, down0 = b.Transfers()
			}
			l, err := s.Next(st.ids)
			if err != nil {
				t.Fatal(err)
			}
			logits = append(logits, l)
			if count && st.moves {
				up, down := b.Transfers()
				if up-up0 != 1 || down-down0 != 1 {
					moved = append(moved, fmt.Sprintf("step %d (truncate to %d, %d ids): %d uploads, %d downloads", i, st.truncate, len(st.ids), up-up0, down-down0))
				}
			}
		}
		return logits, moved
	}
	var cpu, dev [][]float32
	var moved []string
	on(tensor.Go{}, func() { cpu, _ = run(false) })
	on(b, func() { dev, moved = run(true) })
	worst := 0.0
	for i := range cpu {
		worst = max(worst, maxDiff(dev[i], cpu[i]))
	}
	if worst > 1e-3 {
		t.Errorf("logits differ from the CPU's by up to %.2e (> 1e-3)", worst)
	}
	for _, s := range moved {
		t.Errorf("want 1 upload and 1 download: %s", s)
	}
	t.Logf("qwen35-f32 on %s, %d calls with rewinds: max |Δ logit| vs CPU %.2e", b.Device(), len(script), worst)
}
