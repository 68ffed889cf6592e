package vit_test

import (
	"fmt"
	"image"
	"image/color"

	"github.com/toyml/toy/toy/models/vit"
)

func ExampleNewRandom() {
	cfg := vit.Config{ImageSize: 32, PatchSize: 8, Embed: 32, Layers: 2, FFN: 64, Heads: 4, NormEps: 1e-12,
		ImageMean: [3]float32{0.5, 0.5, 0.5}, ImageStd: [3]float32{0.5, 0.5, 0.5},
		Classes: 3, Labels: []string{"cat", "dog", "bird"}}
	if err := cfg.Validate(); err != nil {
		panic(err)
	}
	m := vit.NewRandom(cfg, 1) // the same seed gives the same weights
	// 32·(3·8·8) + 32 patch embedding, 32 [CLS], 17·32 positions,
	// 2·(4·(32·32 + 32) attention + 2·32·64 + 64 + 32 MLP + 4·32 norms), 2·32 final norm, 3·32 + 3 head
	fmt.Println("patches:", cfg.Patches(), "tokens:", cfg.Tokens(), "parameters:", m.Card().ParamCount)

	img := image.NewRGBA(image.Rect(0, 0, 48, 40)) // any size: Preprocess resizes to 32×32
	for y := range 40 {
		for x := range 48 {
			img.Set(x, y, color.RGBA{uint8(5 * x), uint8(6 * y), 128, 255})
		}
	}
	pixels := cfg.Preprocess(img)                          // [3, 32, 32]
	fmt.Println(pixels.Shape(), m.Forward(pixels).Shape()) // logits [1, K]
	top := m.Classify(img, 2)
	fmt.Println(len(top), top[0].Prob >= top[1].Prob)
	// Output:
	// patches: 16 tokens: 17 parameters: 24003
	// [3 32 32] [1 3]
	// 2 true
}
