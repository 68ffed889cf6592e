// LivePlot: a line plot redrawn in place as values arrive.

package display

import (
	"fmt"
	"sync/atomic"
	"time"
)

// liveIDs numbers live displays; the prefix keeps IDs unique across kernels.
var (
	liveIDs    atomic.Int64
	livePrefix = fmt.Sprintf("toy-%x", time.Now().UnixNano())
)

// LivePlot is a line plot that is redrawn in place as values arrive — a loss
// curve while a model trains:
//
//	p := display.NewLivePlot("loss")
//	for step := 0; step < 100; step++ {
//		loss, _ := r.Step(batch)
//		p.Add(float64(loss))
//	}
//	p.Flush()
//
// In Jupyter the first draw is a display_data with a display_id and every
// later one an update_display_data of it; in the REPL each draw is one line
// of text. Redraws are at most one per Every (250 ms by default) so that a
// fast loop is not slowed by drawing; Flush draws the final state.
type LivePlot struct {
	Title string
	Every time.Duration // the shortest time between two redraws

	d      *Display
	id     string
	series [][]float64
	shown  bool
	last   time.Time
}

// NewLivePlot returns an empty live plot that publishes through d. Nothing is
// shown until the first Add.
func (d *Display) NewLivePlot(title string) *LivePlot {
	return &LivePlot{Title: title, Every: 250 * time.Millisecond, d: d,
		id: fmt.Sprintf("%s-%d", livePrefix, liveIDs.Add(1))}
}

// Add appends one value to each series (the first call fixes how many there
// are) and redraws when Every has passed since the last draw.
func (p *LivePlot) Add(v ...float64) error {
	if len(v) == 0 {
		return fmt.Errorf("display: LivePlot.Add with no values")
	}
	if p.series == nil {
		p.series = make([][]float64, len(v))
	}
	if len(v) != len(p.series) {
		return fmt.Errorf("display: LivePlot.Add: %d values for %d series", len(v), len(p.series))
	}
	for i, x := range v {
		p.series[i] = append(p.series[i], x)
	}
	if p.shown && time.Since(p.last) < p.Every {
		return nil
	}
	return p.Flush()
}

// Flush draws the plot now: the first time as a new display, then in place.
func (p *LivePlot) Flush() error {
	if len(p.series) == 0 || len(p.series[0]) == 0 {
		return nil
	}
	png, err := PlotPNG(p.Title, 640, 360, p.series...)
	if err != nil {
		return err
	}
	n := len(p.series[0])
	text := fmt.Sprintf("<plot %q: %d values, last %.4g>", p.Title, n, p.series[0][n-1])
	p.d.Show(Bundle{Text: text, PNG: png, ID: p.id, Update: p.shown})
	p.shown, p.last = true, time.Now()
	return nil
}

// Values returns the series plotted so far (not copies).
func (p *LivePlot) Values() [][]float64 { return p.series }
