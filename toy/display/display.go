// Package display shows rich values from a notebook cell or the toysh REPL:
// PNG images, HTML, line plots of a loss curve, heatmaps of an attention map,
// and tensors as HTML tables.
//
//	display.Plot("loss", losses)           // a line plot, shown under the cell
//	display.Heatmap("attention", probs)    // probs is a [T, T] tensor
//	display.Table(logits)                  // an HTML table of a [R, C] tensor
//	p := display.NewLivePlot("loss")       // redrawn in place: p.Add(loss) per step
//
// In Jupyter each call publishes a display_data message; in the REPL, text
// is printed and images are written to a temporary file whose path is printed.
package display

import (
	"fmt"
	"html"
	"os"
	"strings"

	"github.com/toyml/toy/toy/tensor"
)

// Bundle is one displayable value in up to three representations; front ends
// pick the richest they can show. Text is always set.
type Bundle struct {
	Text string // text/plain
	HTML string // text/html, optional
	PNG  []byte // image/png, optional

	// ID names the display so that it can be redrawn in place (Jupyter's
	// display_id); empty for a one-off display.
	ID string
	// Update replaces the display shown earlier under ID instead of adding a
	// new one (Jupyter's update_display_data).
	Update bool
}

// Display publishes bundles. The interactive front ends give each interpreter
// its own; the package-level functions use Default.
type Display struct {
	// Publish receives each bundle. Nil prints the bundle's text to stdout.
	Publish func(Bundle)
}

// Default is the Display behind the package-level functions.
var Default = &Display{}

// Show publishes b.
func (d *Display) Show(b Bundle) {
	if d.Publish == nil {
		fmt.Fprintln(os.Stdout, b.Text)
		return
	}
	d.Publish(b)
}

// PNG shows an encoded PNG image.
func (d *Display) PNG(png []byte) {
	d.Show(Bundle{Text: fmt.Sprintf("<image/png, %d bytes>", len(png)), PNG: png})
}

// HTML shows an HTML fragment.
func (d *Display) HTML(fragment string) {
	d.Show(Bundle{Text: stripTags(fragment), HTML: fragment})
}

// Plot shows a line plot of one or more series against their index, e.g. a
// loss curve per step.
func (d *Display) Plot(title string, series ...[]float64) error {
	png, err := PlotPNG(title, 640, 360, series...)
	if err != nil {
		return err
	}
	d.Show(Bundle{Text: fmt.Sprintf("<plot %q: %d series>", title, len(series)), PNG: png})
	return nil
}

// Heatmap shows a 2-D tensor [R, C] (an attention map, a weight matrix) as an
// image, row 0 at the top.
func (d *Display) Heatmap(title string, t *tensor.Tensor) error {
	png, err := HeatmapPNG(title, 480, 480, t)
	if err != nil {
		return err
	}
	d.Show(Bundle{Text: fmt.Sprintf("<heatmap %q: %v>", title, t.Shape()), PNG: png})
	return nil
}

// Table shows a tensor as an HTML table (up to 16 rows and 16 columns).
func (d *Display) Table(t *tensor.Tensor) {
	d.Show(Bundle{Text: t.String(), HTML: TableHTML(t)})
}

// Show publishes b with Default.
func Show(b Bundle) { Default.Show(b) }

// PNG shows an encoded PNG image with Default.
func PNG(png []byte) { Default.PNG(png) }

// HTML shows an HTML fragment with Default.
func HTML(fragment string) { Default.HTML(fragment) }

// Plot shows a line plot of the series with Default.
func Plot(title string, series ...[]float64) error { return Default.Plot(title, series...) }

// Heatmap shows a 2-D tensor as an image with Default.
func Heatmap(title string, t *tensor.Tensor) error { return Default.Heatmap(title, t) }

// Table shows a tensor as an HTML table with Default.
func Table(t *tensor.Tensor) { Default.Table(t) }

// NewLivePlot starts a plot redrawn in place, with Default.
func NewLivePlot(title string) *LivePlot { return Default.NewLivePlot(title) }

// maxTable bounds the rows and columns TableHTML writes out.
const maxTable = 16

// TableHTML renders a tensor as an HTML table: a 1-D tensor as one row, a
// 2-D one as rows × columns, higher ranks flattened to [first dims, last dim].
// Rows and columns past 16 are elided with "…".
func TableHTML(t *tensor.Tensor) string {
	shape := t.Shape()
	cols := 1
	if len(shape) > 0 {
		cols = shape[len(shape)-1]
	}
	v := t.Float32s()
	rows := 1
	if cols > 0 {
		rows = len(v) / cols
	}
	var b strings.Builder
	fmt.Fprintf(&b, "<table class=\"toy-tensor\"><caption>%s</caption>\n", html.EscapeString(fmt.Sprintf("Tensor%v %v", shape, t.DType())))
	for r := 0; r < rows && r <= maxTable; r++ {
		b.WriteString("<tr>")
		if r == maxTable {
			b.WriteString("<td>⋮</td></tr>\n")
			break
		}
		for c := 0; c < cols && c <= maxTable; c++ {
			if c == maxTable {
				b.WriteString("<td>…</td>")
				break
			}
			fmt.Fprintf(&b, "<td>%.4g</td>", v[r*cols+c])
		}
		b.WriteString("</tr>\n")
	}
	b.WriteString("</table>")
	return b.String()
}

func stripTags(s string) string {
	var b strings.Builder
	in := false
	for _, r := range s {
		switch {
		case r == '<':
			in = true
		case r == '>':
			in = false
		case !in:
			b.WriteRune(r)
		}
	}
	return html.UnescapeString(b.String())
}
