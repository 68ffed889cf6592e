// Package runlog records training runs as JSON-lines event files and reads
// them back: runs/<id>/events.jsonl holds one run_start event (host,
// backend, model and training configuration), one step event per step
// (loss, learning rate, tokens, wall time) and a run_end event (reason and
// final loss). Scan lists the runs of a directory, best final loss first.
package runlog

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"time"
)

// Event is one line of events.jsonl.
type Event struct {
	Type string    `json:"type"` // run_start, step, run_end
	Time time.Time `json:"time"`

	// run_start
	Host     string          `json:"host,omitempty"`
	Backend  string          `json:"backend,omitempty"`
	Recipe   string          `json:"recipe,omitempty"`
	Model    json.RawMessage `json:"model,omitempty"`
	Training json.RawMessage `json:"training,omitempty"`

	// step
	Step     int     `json:"step,omitempty"`
	Loss     float64 `json:"loss,omitempty"`
	LR       float64 `json:"lr,omitempty"`
	Tokens   int     `json:"tokens,omitempty"`
	WallSecs float64 `json:"wall_s,omitempty"`

	// run_end
	Reason    string  `json:"reason,omitempty"`
	FinalLoss float64 `json:"final_loss,omitempty"`
}

// Writer appends events to a run's events.jsonl, syncing each line so that a
// killed run leaves a readable log.
type Writer struct {
	f    *os.File
	last float64
}

// ErrBusy is returned by Create for a run directory another process is
// writing.
var ErrBusy = errors.New("runlog: the run directory is in use by another run")

// Create opens dir/events.jsonl for appending (a resumed run continues the
// same file) and creates dir if needed. The file stays locked until Close
// or End (or the process's death, even by kill -9), so that two runs never
// share a directory: the second gets ErrBusy.
func Create(dir string) (*Writer, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(filepath.Join(dir, "events.jsonl"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, err
	}
	if err := lock(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("%w: %s (%v)", ErrBusy, dir, err)
	}
	return &Writer{f: f, last: math.NaN()}, nil
}

// Close releases the log without a run_end event.
func (w *Writer) Close() error { return w.f.Close() }

func (w *Writer) write(e Event) error {
	e.Time = time.Now().UTC()
	b, err := json.Marshal(e)
	if err != nil {
		return err
	}
	if _, err := w.f.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("runlog: %w", err)
	}
	return w.f.Sync()
}

// Start records run_start; model and training are JSON-encoded as given.
func (w *Writer) Start(recipe, backend string, model, training any) error {
	host, _ := os.Hostname()
	mb, _ := json.Marshal(model)
	tb, _ := json.Marshal(training)
	return w.write(Event{Type: "run_start", Host: host + " " + runtime.GOOS + "/" + runtime.GOARCH,
		Backend: backend, Recipe: recipe, Model: mb, Training: tb})
}

// Step records one training step. Steps count from 1: step is the number of
// steps done, as Recipe.Steps after the step.
func (w *Writer) Step(step int, loss, lr float64, tokens int, wall time.Duration) error {
	if step < 1 {
		return fmt.Errorf("runlog: step %d: steps count from 1", step)
	}
	if math.IsNaN(loss) || math.IsInf(loss, 0) {
		return fmt.Errorf("runlog: step %d: the loss is %v: training diverged", step, loss)
	}
	w.last = loss
	return w.write(Event{Type: "step", Step: step, Loss: loss, LR: lr, Tokens: tokens, WallSecs: wall.Seconds()})
}

// End records run_end with the reason ("done", "interrupted", "error: …")
// and the last step's loss, and closes the file.
func (w *Writer) End(reason string) error {
	final := w.last
	if math.IsNaN(final) {
		final = 0 // no step in this process (a resume at the last step): no final_loss
	}
	err := w.write(Event{Type: "run_end", Reason: reason, FinalLoss: final})
	return errors.Join(err, w.f.Close())
}

// Run is one run read back by Scan.
type Run struct {
	ID        string          // directory name
	Dir       string          // its path
	Recipe    string          // from run_start
	Config    json.RawMessage // the training configuration
	Model     json.RawMessage // the model configuration
	LossCurve []float64       // the loss of every step, in order
	FinalLoss float64         // the last step's loss (NaN if none)
	Ended     string          // run_end's reason, "" while running or after a kill
}

// Read parses one run directory's events.jsonl. Lines that do not parse
// (a half-written last line after a kill) are skipped.
func Read(dir string) (Run, error) {
	r := Run{ID: filepath.Base(dir), Dir: dir, FinalLoss: math.NaN()}
	f, err := os.Open(filepath.Join(dir, "events.jsonl"))
	if err != nil {
		return r, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	steps := map[int]float64{}
	maxStep := 0
	for sc.Scan() {
		var e Event
		if json.Unmarshal(sc.Bytes(), &e) != nil {
			continue
		}
		switch e.Type {
		case "run_start":
			r.Recipe, r.Config, r.Model = e.Recipe, e.Training, e.Model
		case "step":
			steps[e.Step] = e.Loss // a resumed run rewrites steps after its checkpoint
			maxStep = max(maxStep, e.Step)
		case "run_end":
			r.Ended = e.Reason
		}
	}
	for s := 1; s <= maxStep; s++ {
		if l, ok := steps[s]; ok {
			r.LossCurve = append(r.LossCurve, l)
		}
	}
	if n := len(r.LossCurve); n > 0 {
		r.FinalLoss = r.LossCurve[n-1]
	}
	return r, sc.Err()
}

// Scan reads every run under dir (each subdirectory with an events.jsonl)
// and returns them sorted by final loss, lowest first; runs without steps
// come last.
func Scan(dir string) ([]Run, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var runs []Run
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		r, err := Read(filepath.Join(dir, e.Name()))
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		runs = append(runs, r)
	}
	sort.SliceStable(runs, func(i, j int) bool {
		a, b := runs[i].FinalLoss, runs[j].FinalLoss
		if math.IsNaN(a) != math.IsNaN(b) {
			return !math.IsNaN(a)
		}
		return a < b
	})
	return runs, nil
}
