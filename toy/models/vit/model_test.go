package vit

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/toyml/toy/toy/card"
	"github.com/toyml/toy/toy/tensor"
)

func tinyConfig() Config {
	return Config{ImageSize: 8, PatchSize: 4, Embed: 16, Layers: 2, FFN: 32, Heads: 2, NormEps: 1e-12,
		ImageMean: [3]float32{0.5, 0.5, 0.5}, ImageStd: [3]float32{0.5, 0.5, 0.5}, Classes: 5}
}

// ramp is pixels [3, R, R] holding 0, 1, 2, … in memory order, scaled by s.
func ramp(R int, s float32) *tensor.Tensor {
	x := tensor.New(Channels, R, R)
	for i := range x.Data() {
		x.Data()[i] = float32(i) * s
	}
	return x
}

// Patches of a 4×4 image in 2×2 patches: patch 1 is row 0 of patches,
// column 1, so it holds pixels (y, x) ∈ {0, 1} × {2, 3} of each channel:
// 2, 3, 6, 7 in channel 0, +16 in channel 1, +32 in channel 2.
func TestPatchesLayout(t *testing.T) {
	p := Patches(ramp(4, 1), 2)
	if !slices.Equal(p.Shape(), []int{4, 12}) {
		t.Fatalf("shape %v, want [4 12]", p.Shape())
	}
	want := []float32{2, 3, 6, 7, 18, 19, 22, 23, 34, 35, 38, 39}
	if !slices.Equal(p.Row(1), want) {
		t.Fatalf("patch 1 = %v, want %v", p.Row(1), want)
	}
	if got := p.Row(2)[:4]; !slices.Equal(got, []float32{8, 9, 12, 13}) { // row 1 of patches, column 0
		t.Fatalf("patch 2 starts %v, want [8 9 12 13]", got)
	}
}

// Attention is bidirectional, so the [CLS] token — first in the sequence —
// sees the last patch: changing one pixel there changes the logits. Under a
// causal mask the [CLS] state would depend on nothing but itself.
func TestLastPatchReachesCLS(t *testing.T) {
	m := NewRandom(tinyConfig(), 1)
	x := ramp(8, 0.01)
	a := m.Forward(x).Float32s()
	x.Data()[x.Len()-1] += 1 // channel 2, bottom-right pixel: the last patch
	b := m.Forward(x).Float32s()
	if slices.Equal(a, b) {
		t.Fatal("the logits do not depend on the last patch")
	}
}

// A model written to GGUF and opened again gives the same logits, bit for
// bit, and its header describes it.
func TestGGUFRoundTrip(t *testing.T) {
	c := tinyConfig()
	c.Labels = []string{"a", "b", "c", "d", "e"}
	m := NewRandom(c, 2)
	path := filepath.Join(t.TempDir(), "vit.gguf")
	if err := m.WriteGGUF(path, tensor.F32); err != nil {
		t.Fatal(err)
	}
	r, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if !reflect.DeepEqual(r.Config, c) {
		t.Fatalf("config %+v, wrote %+v", r.Config, c)
	}
	x := ramp(8, 0.01)
	if a, b := m.Forward(x).Float32s(), r.Forward(x).Float32s(); !slices.Equal(a, b) {
		t.Fatalf("logits %v after the round trip, %v before", b, a)
	}
	k, err := card.Describe(path)
	if err != nil {
		t.Fatal(err)
	}
	var held int64
	for _, w := range m.Weights() {
		held += int64(w.T.Len())
	}
	if k.ParamCount != held || m.Card().ParamCount != held || k.Arch != Arch {
		t.Fatalf("card: %s with %d parameters, the model's card %d, the model holds %d", k.Arch, k.ParamCount, m.Card().ParamCount, held)
	}
	loaded := r.Card()
	loaded.Name = k.Name
	if got, want := loaded.Render(), k.Render(); got != want {
		t.Errorf("card of the loaded model differs:\n%s\nwant\n%s", got, want)
	}
}

// The card's text parses back into the configuration (without labels and
// image statistics, which a card does not carry: ViTImageProcessor's
// defaults come back). A model without weights lists no parameters.
func TestCardRoundTrip(t *testing.T) {
	c := tinyConfig()
	k := New(c).Card()
	if len(k.Params) != 0 || k.ParamCount != 0 {
		t.Errorf("a model without weights lists %d parameters, %d in all", len(k.Params), k.ParamCount)
	}
	got, err := card.Parse(k.Render())
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, c) {
		t.Fatalf("parsed %+v, want %+v", got, c)
	}
}

// TopK: softmax of [0, ln 3, 0] is [⅕, ⅗, ⅕]; ties keep class order.
func TestTopK(t *testing.T) {
	c := Config{Classes: 3, Labels: []string{"x", "y", "z"}}
	p := c.TopK([]float32{0, float32(math.Log(3)), 0}, 2)
	if len(p) != 2 || p[0].Label != "y" || p[1].Class != 0 || math.Abs(p[0].Prob-0.6) > 1e-7 || math.Abs(p[1].Prob-0.2) > 1e-7 {
		t.Fatalf("top 2: %+v", p)
	}
}

// hfNames maps toy's weights to Hugging Face's ViTForImageClassification
// tensor names, as a checkpoint's model.safetensors holds them.
func hfNames(m *Model) map[string]*tensor.Tensor {
	out := map[string]*tensor.Tensor{
		"vit.embeddings.patch_embeddings.projection.weight": m.PatchEmbed.W.Reshape(m.Config.Embed, Channels, m.Config.PatchSize, m.Config.PatchSize),
		"vit.embeddings.patch_embeddings.projection.bias":   m.PatchEmbed.B,
		"vit.embeddings.cls_token":                          m.Class.Reshape(1, 1, m.Config.Embed),
		"vit.embeddings.position_embeddings":                m.Pos.W.Reshape(1, m.Config.Tokens(), m.Config.Embed),
		"vit.layernorm.weight":                              m.PostNorm.W,
		"vit.layernorm.bias":                                m.PostNorm.B,
		"classifier.weight":                                 m.Head.W,
		"classifier.bias":                                   m.Head.B,
	}
	for i := range m.Blocks {
		b := &m.Blocks[i]
		p := fmt.Sprintf("vit.encoder.layer.%d.", i)
		for name, t := range map[string]*tensor.Tensor{
			"layernorm_before.weight": b.Norm1.W, "layernorm_before.bias": b.Norm1.B,
			"attention.attention.query.weight": b.Attn.Q.W, "attention.attention.query.bias": b.Attn.Q.B,
			"attention.attention.key.weight": b.Attn.K.W, "attention.attention.key.bias": b.Attn.K.B,
			"attention.attention.value.weight": b.Attn.V.W, "attention.attention.value.bias": b.Attn.V.B,
			"attention.output.dense.weight": b.Attn.Out.W, "attention.output.dense.bias": b.Attn.Out.B,
			"layernorm_after.weight": b.Norm2.W, "layernorm_after.bias": b.Norm2.B,
			"intermediate.dense.weight": b.MLP.Up.W, "intermediate.dense.bias": b.MLP.Up.B,
			"output.dense.weight": b.MLP.Down.W, "output.dense.bias": b.MLP.Down.B,
		} {
			out[p+name] = t
		}
	}
	return out
}

// writeSafetensors writes tensors as a safetensors file: F32, except the
// names in bf16 (stored as BF16, their values already bf16-exact).
func writeSafetensors(t testing.TB, path string, ts map[string]*tensor.Tensor, bf16 map[string]bool) {
	header := map[string]any{"__metadata__": map[string]string{"format": "pt"}}
	var data []byte
	names := make([]string, 0, len(ts))
	for n := range ts {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		x, start := ts[n], len(data)
		dt := "F32"
		for _, v := range x.Float32s() {
			if bf16[n] {
				dt = "BF16"
				data = binary.LittleEndian.AppendUint16(data, uint16(math.Float32bits(v)>>16))
			} else {
				data = binary.LittleEndian.AppendUint32(data, math.Float32bits(v))
			}
		}
		header[n] = map[string]any{"dtype": dt, "shape": x.Shape(), "data_offsets": []int{start, len(data)}}
	}
	h, _ := json.Marshal(header)
	out := binary.LittleEndian.AppendUint64(nil, uint64(len(h)))
	if err := os.WriteFile(path, append(append(out, h...), data...), 0o644); err != nil {
		t.Fatal(err)
	}
}

// FromHF reads a checkpoint laid out as Hugging Face writes one (F32 with a
// BF16 classifier; labels, image statistics) into the same model.
func TestFromHF(t *testing.T) {
	c := tinyConfig()
	c.ImageMean, c.ImageStd = [3]float32{0.485, 0.456, 0.406}, [3]float32{0.229, 0.224, 0.225}
	c.Labels = []string{"tench", "goldfish", "shark", "ray", "hen"}
	m := NewRandom(c, 3)
	for i, v := range m.Head.W.Data() { // bf16-exact, so the BF16 copy is lossless
		m.Head.W.Data()[i] = math.Float32frombits(math.Float32bits(v) &^ 0xffff)
	}
	dir := t.TempDir()
	writeSafetensors(t, filepath.Join(dir, "model.safetensors"), hfNames(m), map[string]bool{"classifier.weight": true})
	cfg := map[string]any{"model_type": "vit", "architectures": []string{"ViTForImageClassification"},
		"hidden_size": c.Embed, "num_hidden_layers": c.Layers, "num_attention_heads": c.Heads, "intermediate_size": c.FFN,
		"hidden_act": "gelu", "layer_norm_eps": 1e-12, "image_size": c.ImageSize, "patch_size": c.PatchSize,
		"num_channels": 3, "qkv_bias": true, "id2label": map[string]string{"0": "tench", "1": "goldfish", "2": "shark", "3": "ray", "4": "hen"}}
	pre := map[string]any{"image_mean": c.ImageMean, "image_std": c.ImageStd, "resample": 2, "do_normalize": true,
		"size": map[string]int{"height": 8, "width": 8}}
	for name, v := range map[string]any{"config.json": cfg, "preprocessor_config.json": pre} {
		b, _ := json.Marshal(v)
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := FromHF(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Config, c) {
		t.Fatalf("config %+v, want %+v", got.Config, c)
	}
	x := ramp(8, 0.01)
	if a, b := m.Forward(x).Float32s(), got.Forward(x).Float32s(); !slices.Equal(a, b) {
		t.Fatalf("converted logits %v, original %v", b, a)
	}

	cfg["hidden_act"] = "gelu_new"
	b, _ := json.Marshal(cfg)
	os.WriteFile(filepath.Join(dir, "config.json"), b, 0o644)
	if _, err := FromHF(dir); err == nil {
		t.Fatal("converted a checkpoint with the tanh GELU")
	}
}
