package display

import (
	"strings"
	"testing"
	"time"
)

// TestLivePlotDrawsInPlace: the first draw is a new display with an ID, every
// later one an update of that ID, and redraws are throttled to one per Every
// until Flush.
func TestLivePlotDrawsInPlace(t *testing.T) {
	var got []Bundle
	d := &Display{Publish: func(b Bundle) { got = append(got, b) }}
	p := d.NewLivePlot("loss")
	p.Every = time.Hour // only the first Add draws; then Flush
	for _, v := range []float64{3, 2.5, 2, 1.75} {
		if err := p.Add(v); err != nil {
			t.Fatal(err)
		}
	}
	if len(got) != 1 {
		t.Fatalf("%d draws for 4 values with Every = 1h; want 1 (the first)", len(got))
	}
	if err := p.Flush(); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 {
		t.Fatalf("%d draws after Flush, want 2", len(got))
	}
	first, last := got[0], got[1]
	if first.ID == "" || first.Update || len(first.PNG) == 0 {
		t.Errorf("first draw: ID %q, Update %v, %d PNG bytes; want an ID, a new display, an image", first.ID, first.Update, len(first.PNG))
	}
	if last.ID != first.ID || !last.Update {
		t.Errorf("flush: ID %q (first %q), Update %v; want an update of the first display", last.ID, first.ID, last.Update)
	}
	if !strings.Contains(last.Text, "4 values, last 1.75") {
		t.Errorf("text %q: want the count and the last value", last.Text)
	}
	if q := d.NewLivePlot("other"); q.id == p.id {
		t.Errorf("two live plots share the display ID %q", q.id)
	}

	got = nil
	p.Every = 0 // every Add draws
	p.Add(1.5)
	p.Add(1.25)
	if len(got) != 2 || !got[0].Update || !got[1].Update {
		t.Errorf("with Every = 0: %d draws; want 2 updates", len(got))
	}
	if err := p.Add(1, 2); err == nil {
		t.Error("Add with 2 values to a 1-series plot: no error")
	}
	if n := len(p.Values()[0]); n != 6 {
		t.Errorf("%d values kept, want 6", n)
	}
}
