package display_test

import (
	"fmt"
	"time"

	"github.com/toyml/toy/toy/display"
	"github.com/toyml/toy/toy/tensor"
)

// A front end gives its Display a Publish func; this one prints each bundle's
// text and which richer forms came with it.
func ExampleDisplay() {
	d := &display.Display{Publish: func(b display.Bundle) {
		fmt.Printf("%s (html %v, png %v)\n", b.Text, b.HTML != "", len(b.PNG) > 0)
	}}
	d.HTML("<b>hello</b>")
	d.Table(tensor.FromFloat32([]float32{1, 2, 3, 4}, 2, 2))
	if err := d.Plot("loss", []float64{3.5, 2, 1.25}); err != nil {
		panic(err)
	}
	// Output:
	// hello (html true, png false)
	// Tensor[2 2] F32 [1 2 3 4] (html true, png false)
	// <plot "loss": 1 series> (html false, png true)
}

// A live plot is drawn once and then updated in place, at most once per Every.
func ExampleLivePlot() {
	d := &display.Display{Publish: func(b display.Bundle) {
		fmt.Println(b.Text, "update:", b.Update)
	}}
	p := d.NewLivePlot("loss")
	p.Every = time.Hour // redraw only on Flush here
	for _, loss := range []float64{3.5, 2, 1.25} {
		p.Add(loss) // the first Add draws
	}
	p.Flush()
	// Output:
	// <plot "loss": 1 values, last 3.5> update: false
	// <plot "loss": 3 values, last 1.25> update: true
}
