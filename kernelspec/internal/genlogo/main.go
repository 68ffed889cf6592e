// Command genlogo draws the toy kernel's logos, logo-32x32.png and
// logo-64x64.png: a rounded square in Go blue holding three stacked bars —
// a small transformer, block over block — drawn at any size from the same
// proportions.
//
//	go run ./internal/genlogo -out .   (run by go generate in kernelspec/)
package main

import (
	"bytes"
	"flag"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"log"
	"math"
	"os"
	"path/filepath"
)

var (
	blue  = color.NRGBA{0x00, 0x7d, 0x9c, 0xff} // Go's blue
	white = color.NRGBA{0xff, 0xff, 0xff, 0xff}
)

// draw returns the logo at n×n pixels. Each pixel is sampled 4×4 times for
// smooth edges.
func draw(n int) *image.NRGBA {
	img := image.NewNRGBA(image.Rect(0, 0, n, n))
	const ss = 4
	for py := 0; py < n; py++ {
		for px := 0; px < n; px++ {
			var bg, fg float64
			for sy := 0; sy < ss; sy++ {
				for sx := 0; sx < ss; sx++ {
					// (x, y) in [0, 1) across the image.
					x := (float64(px) + (float64(sx)+0.5)/ss) / float64(n)
					y := (float64(py) + (float64(sy)+0.5)/ss) / float64(n)
					if inRoundedSquare(x, y, 0.02, 0.2) {
						bg++
						if inBars(x, y) {
							fg++
						}
					}
				}
			}
			a := bg / (ss * ss)
			if a == 0 {
				continue
			}
			t := fg / bg // share of white within the covered samples
			mix := func(b, w uint8) uint8 { return uint8(math.Round(float64(b)*(1-t) + float64(w)*t)) }
			img.SetNRGBA(px, py, color.NRGBA{mix(blue.R, white.R), mix(blue.G, white.G), mix(blue.B, white.B), uint8(math.Round(255 * a))})
		}
	}
	return img
}

// inRoundedSquare: inside the square [m, 1-m]² with corners of radius r.
func inRoundedSquare(x, y, m, r float64) bool {
	if x < m || x > 1-m || y < m || y > 1-m {
		return false
	}
	cx := math.Max(m+r, math.Min(1-m-r, x))
	cy := math.Max(m+r, math.Min(1-m-r, y))
	return (x-cx)*(x-cx)+(y-cy)*(y-cy) <= r*r
}

// inBars: three horizontal bars, the middle one narrower (attention between
// two MLP blocks).
func inBars(x, y float64) bool {
	bars := []struct{ x0, x1, y0, y1 float64 }{
		{0.22, 0.78, 0.22, 0.36},
		{0.32, 0.68, 0.43, 0.57},
		{0.22, 0.78, 0.64, 0.78},
	}
	for _, b := range bars {
		if x >= b.x0 && x <= b.x1 && y >= b.y0 && y <= b.y1 {
			return true
		}
	}
	return false
}

// Encode returns the logo at n×n pixels as PNG.
func Encode(n int) ([]byte, error) {
	var b bytes.Buffer
	if err := png.Encode(&b, draw(n)); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func main() {
	out := flag.String("out", ".", "directory to write the logos into")
	flag.Parse()
	for _, n := range []int{32, 64} {
		b, err := Encode(n)
		if err != nil {
			log.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(*out, fmt.Sprintf("logo-%dx%d.png", n, n)), b, 0o644); err != nil {
			log.Fatal(err)
		}
	}
}
