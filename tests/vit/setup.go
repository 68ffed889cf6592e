// Package vitgate holds the PyTorch gate for toy's ViT (tests/vit): a tiny
// seeded random classifier, a fixed synthetic input and two small PNGs, and
// the logits, loss, every parameter gradient and preprocessed pixels that a
// from-scratch PyTorch twin (torch_ref.py, with PIL for the pixels) computes
// for them.
package vitgate

import (
	"image"
	"image/color"
	"math"
	"math/rand/v2"

	"github.com/toyml/toy/toy/models/vit"
	"github.com/toyml/toy/toy/tensor"
)

// Config is the gate model's shape: 32×32 images in patches of 8 (N = 16
// patches, S = 17 tokens), width 32, 2 layers of 4 heads, MLP width 64, 10
// classes, and ImageNet's pixel statistics.
func Config() vit.Config {
	labels := []string{"tench", "goldfish", "great white shark", "tiger shark", "hammerhead",
		"electric ray", "stingray", "cock", "hen", "ostrich"}
	return vit.Config{ImageSize: 32, PatchSize: 8, Embed: 32, Layers: 2, FFN: 64, Heads: 4, NormEps: 1e-12,
		ImageMean: [3]float32{0.485, 0.456, 0.406}, ImageStd: [3]float32{0.229, 0.224, 0.225},
		Classes: len(labels), Labels: labels}
}

// Label is the class the gate's training step takes as the target.
const Label = 3

// Model returns the gate model: NewRandom's shapes with every tensor redrawn
// (seeded) at a scale where each part of the network moves the logits —
// matrices N(0, 1/in), biases and LayerNorm shifts N(0, 0.1²), LayerNorm
// gains 1 + N(0, 0.1²), [CLS] and positions N(0, 0.5²) — so attention is far
// from uniform and a wrong mask, GELU or bias shows.
func Model() *vit.Model {
	m := vit.NewRandom(Config(), 1)
	r := rand.New(rand.NewPCG(2024, 11))
	for _, w := range m.Weights() {
		d, shape := w.T.Data(), w.T.Shape()
		std, mean := 0.1, 0.0
		switch {
		case w.Name == "v.class_embd" || w.Name == "v.position_embd.weight":
			std = 0.5
		case len(shape) == 2:
			std = 1 / math.Sqrt(float64(shape[1]))
		case len(w.Name) > 7 && w.Name[len(w.Name)-7:] == ".weight": // a LayerNorm gain
			mean = 1
		}
		for i := range d {
			d[i] = float32(mean + std*r.NormFloat64())
		}
	}
	return m
}

// Input is the fixed synthetic image [3, 32, 32], already normalised:
//
//	x[c][y][x] = ((131c + 71y + 37x) mod 97) / 48.5 − 1
//
// (each value is computed in float64 and rounded once, in Go and in Python).
func Input() *tensor.Tensor {
	x := tensor.New(3, 32, 32)
	d := x.Data()
	for c := range 3 {
		for y := range 32 {
			for i := range 32 {
				d[(c*32+y)*32+i] = float32(float64((131*c+71*y+37*i)%97)/48.5 - 1)
			}
		}
	}
	return x
}

// Images are the gate's PNGs (testdata/NAME.png): one larger than 32×32
// with transparent pixels, shrunk with PIL's widened triangle, and one
// smaller, enlarged by plain bilinear interpolation.
var Images = []struct {
	Name string
	W, H int
}{{"shrink", 61, 47}, {"enlarge", 13, 21}}

// Picture draws the gate's PNG of size w×h: smooth gradients with seeded
// noise and a few hard edges, and alpha below 255 in one corner (dropped by
// the preprocessing, as PIL's convert("RGB") drops it).
func Picture(w, h int, seed uint64) *image.NRGBA {
	r := rand.New(rand.NewPCG(seed, 5))
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			c := color.NRGBA{uint8(x * 255 / w), uint8(y * 255 / h), uint8((x*y)%256) ^ uint8(r.IntN(64)), 255}
			if (x/5+y/7)%3 == 0 {
				c.R = 255 - c.R
			}
			if x < w/4 && y < h/4 {
				c.A = uint8(r.IntN(256))
			}
			img.SetNRGBA(x, y, c)
		}
	}
	return img
}
