// Classifying images: preprocessing, the forward pass, the top-k classes.

package vit

import (
	"image"
	"math"
	"sort"

	"github.com/toyml/toy/toy/pixels"
	"github.com/toyml/toy/toy/tensor"
)

// Prediction is one class with its probability.
type Prediction struct {
	Class int     `json:"class"` // index k in 0 … K−1
	Label string  `json:"label"`
	Prob  float64 `json:"prob"`  // softmax of the logits
	Logit float32 `json:"logit"` // the model's raw score
}

// Preprocess turns img into the model's input [C, R, R] as ViTImageProcessor
// does: RGB at 8 bits (alpha dropped, as PIL's convert("RGB")), resized to
// R×R with PIL's bilinear filter (pixels.ResizeBilinear), then per channel c
//
//	x = (u·(1/255) − mean_c) / std_c,   u ∈ 0 … 255
//
// with u/255 rounded to float32 and the rest in float32, as numpy computes it.
func (c Config) Preprocess(img image.Image) *tensor.Tensor {
	pix, w, h := pixels.RGB8(img)
	R := c.ImageSize
	pix = pixels.ResizeBilinear(pix, w, h, R, R)
	out := tensor.New(Channels, R, R)
	x := out.Data()
	for ch := 0; ch < Channels; ch++ {
		mean, std := c.ImageMean[ch], c.ImageStd[ch]
		for i := 0; i < R*R; i++ {
			v := float32(float64(pix[3*i+ch]) * (1.0 / 255))
			x[ch*R*R+i] = (v - mean) / std
		}
	}
	return out
}

// Classify preprocesses img and returns its k most probable classes, most
// probable first (all K when k ≤ 0 or k > K).
func (m *Model) Classify(img image.Image, k int) []Prediction {
	logits := m.Forward(m.Config.Preprocess(img)).Float32s() // [K]
	return m.Config.TopK(logits, k)
}

// ClassifyFile decodes the image at path (PNG, JPEG, GIF) and classifies it.
func (m *Model) ClassifyFile(path string, k int) ([]Prediction, error) {
	img, err := pixels.Load(path)
	if err != nil {
		return nil, err
	}
	return m.Classify(img, k), nil
}

// TopK turns logits [K] into the k most probable classes: p = softmax(z),
// computed in float64, ties broken by class index.
func (c Config) TopK(logits []float32, k int) []Prediction {
	mx := math.Inf(-1)
	for _, z := range logits {
		mx = max(mx, float64(z))
	}
	var sum float64
	for _, z := range logits {
		sum += math.Exp(float64(z) - mx)
	}
	ps := make([]Prediction, len(logits))
	for i, z := range logits {
		ps[i] = Prediction{Class: i, Label: c.Label(i), Prob: math.Exp(float64(z)-mx) / sum, Logit: z}
	}
	sort.SliceStable(ps, func(i, j int) bool { return ps[i].Logit > ps[j].Logit })
	if k > 0 && k < len(ps) {
		ps = ps[:k]
	}
	return ps
}
