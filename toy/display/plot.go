// Line plots and heatmaps rendered to PNG with gonum/plot.
package display

import (
	"bytes"
	"fmt"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/palette/moreland"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"

	"github.com/toyml/toy/toy/tensor"
)

// PlotPNG renders series (each against its index) as a w×h-point PNG line plot.
func PlotPNG(title string, w, h int, series ...[]float64) ([]byte, error) {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "step"
	p.Add(plotter.NewGrid())
	for i, ys := range series {
		if len(ys) == 0 {
			continue
		}
		xy := make(plotter.XYs, len(ys))
		for j, y := range ys {
			xy[j].X, xy[j].Y = float64(j), y
		}
		l, err := plotter.NewLine(xy)
		if err != nil {
			return nil, fmt.Errorf("display: plot %q series %d: %w", title, i, err)
		}
		l.Color = plotutil.Color(i)
		p.Add(l)
		if len(series) > 1 {
			p.Legend.Add(fmt.Sprintf("%d", i), l)
		}
	}
	return render(p, w, h)
}

// HeatmapPNG renders a 2-D tensor [R, C] as a w×h-point PNG heatmap.
func HeatmapPNG(title string, w, h int, t *tensor.Tensor) ([]byte, error) {
	shape := t.Shape()
	if len(shape) != 2 || shape[0] == 0 || shape[1] == 0 {
		return nil, fmt.Errorf("display: heatmap of shape %v: want a non-empty [R, C] tensor", shape)
	}
	g := grid{r: shape[0], c: shape[1], v: t.Float32s()}
	pal := moreland.SmoothBlueRed()
	lo, hi := g.Min(), g.Max()
	if lo == hi {
		hi = lo + 1
	}
	pal.SetMin(lo)
	pal.SetMax(hi)
	hm := plotter.NewHeatMap(g, pal.Palette(64))
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "column"
	p.Y.Label.Text = "row"
	p.Add(hm)
	p.Y.Scale = flip{}
	return render(p, w, h)
}

func render(p *plot.Plot, w, h int) ([]byte, error) {
	wt, err := p.WriterTo(vg.Length(w), vg.Length(h), "png")
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if _, err := wt.WriteTo(&b); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// grid adapts a row-major [R, C] tensor to plotter.GridXYZ; row 0 is drawn
// at the top (see flip).
type grid struct {
	r, c int
	v    []float32
}

func (g grid) Dims() (c, r int)   { return g.c, g.r }
func (g grid) Z(c, r int) float64 { return float64(g.v[r*g.c+c]) }
func (g grid) X(c int) float64    { return float64(c) }
func (g grid) Y(r int) float64    { return float64(r) }
func (g grid) Min() (m float64)   { return g.fold(func(a, b float64) bool { return a < b }) }
func (g grid) Max() (m float64)   { return g.fold(func(a, b float64) bool { return a > b }) }
func (g grid) fold(better func(a, b float64) bool) float64 {
	m := float64(g.v[0])
	for _, x := range g.v {
		if better(float64(x), m) {
			m = float64(x)
		}
	}
	return m
}

// flip is a reversed linear axis, so matrices read top to bottom.
type flip struct{}

func (flip) Normalize(min, max, x float64) float64 { return (max - x) / (max - min) }
