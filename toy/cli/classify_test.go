package cli

import (
	"encoding/json"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toyml/toy/toy/models/vit"
	"github.com/toyml/toy/toy/tensor"
)

// toy classify on a random ViT and a PNG: the top-k in text and JSON, with
// the JSON's probabilities those of the library's Classify; bad input is
// status 2.
func TestClassify(t *testing.T) {
	dir := t.TempDir()
	cfg := vit.Config{ImageSize: 16, PatchSize: 8, Embed: 16, Layers: 1, FFN: 32, Heads: 2, NormEps: 1e-12,
		ImageMean: [3]float32{0.5, 0.5, 0.5}, ImageStd: [3]float32{0.5, 0.5, 0.5}, Classes: 4, Labels: []string{"a", "b", "c", "d"}}
	model := filepath.Join(dir, "vit.gguf")
	m := vit.NewRandom(cfg, 1)
	if err := m.WriteGGUF(model, tensor.F32); err != nil {
		t.Fatal(err)
	}
	img := image.NewNRGBA(image.Rect(0, 0, 20, 12))
	for i := range img.Pix {
		img.Pix[i] = uint8(i * 37)
	}
	img.Set(0, 0, color.NRGBA{255, 0, 0, 255})
	pic := filepath.Join(dir, "pic.png")
	f, _ := os.Create(pic)
	png.Encode(f, img)
	f.Close()

	status, out, errOut := runToy("classify", model, pic, "--top-k", "3", "--json")
	if status != 0 {
		t.Fatalf("classify: status %d: %s", status, errOut)
	}
	var got classifyOutput
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	want := m.Classify(img, 3)
	if got.Format != "toy/classify-v1" || len(got.Top) != 3 || got.Top[0].Label != want[0].Label || got.Top[0].Prob != want[0].Prob {
		t.Fatalf("classify --json: %+v, library %+v", got, want)
	}
	if status, out, _ = runToy("classify", model, pic); status != 0 || strings.Count(out, "\n") != 4 || !strings.Contains(out, "%  "+want[0].Label) {
		t.Fatalf("classify: status %d\n%s", status, out)
	}
	for _, args := range [][]string{{"classify", model}, {"classify", model, filepath.Join(dir, "none.png")}, {"classify", pic, pic},
		{"convert", dir, filepath.Join(dir, "out.gguf")}, {"convert", dir, "x.gguf", "--type", "q4_k"}} {
		if status, _, e := runToy(args...); status != 2 || e == "" {
			t.Errorf("%v: status %d %q, want 2 and a message", args, status, e)
		}
	}
}
