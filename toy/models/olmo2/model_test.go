package olmo2

import (
	"errors"
	"strings"
	"testing"

	"github.com/toyml/toy/internal/testmodel"
	"github.com/toyml/toy/toy/gguf"
	"github.com/toyml/toy/toy/nn"
	"github.com/toyml/toy/toy/tensor"
)

// edited writes a tiny Olmo 3 (window 3 in layers 0–2 of 4, YaRN in layer
// 3), applies edit to its metadata, and returns the parsed result.
func edited(t *testing.T, edit func(w *gguf.Writer)) *gguf.File {
	return testmodel.Edited(t, testmodel.Spec{Name: "m", Arch: Arch, DType: tensor.Q8_0, Vocab: "none", VocabSize: 300,
		Embed: 64, Layers: 4, FFN: 96, Heads: 4, KVHeads: 2, Context: 64, Seed: 5, Window: 3,
		RopeScaling: "yarn", RopeScaleFactor: 4, RopeOrigContext: 16}, edit)
}

func TestLoadOlmo3(t *testing.T) {
	m, err := Load(edited(t, func(*gguf.Writer) {}))
	if err != nil {
		t.Fatal(err)
	}
	c := m.Config
	if c.Window != 3 || c.SlidingPattern != 4 || c.RopeScaling != "yarn" || m.Blocks[0].(*nn.Block).AttnNorm != nil {
		t.Fatalf("config %+v", c)
	}
	for i, b := range m.Blocks {
		b := b.(*nn.Block)
		local := i < 3
		if (b.Attn.Options.Window == 3) != local || (b.Attn.RoPE.Scaling.FreqScale == 0) != local {
			t.Errorf("layer %d: window %d, RoPE scaling %+v", i, b.Attn.Options.Window, b.Attn.RoPE.Scaling)
		}
	}
	// Decoding one token at a time gives the logits of the whole prompt,
	// past the window.
	ids := []int32{5, 17, 200, 3, 9, 41}
	whole := m.Forward(ids, m.NewCache(8)).Float32s()
	cache := m.NewCache(8)
	for i, id := range ids {
		row := m.Forward([]int32{id}, cache).Float32s()
		for j, v := range row {
			if d := v - whole[i*len(row)+j]; d > 1e-4 || d < -1e-4 {
				t.Fatalf("position %d, logit %d: %g one at a time, %g at once", i, j, v, whole[i*len(row)+j])
			}
		}
	}
}

// Metadata that disagrees with the tensors, or asks for what toy lacks, is
// an error at load that names the problem.
func TestLyingMetadata(t *testing.T) {
	for _, c := range []struct {
		name string
		edit func(w *gguf.Writer)
		want string
	}{
		{"layers", func(w *gguf.Writer) { w.SetUint32("olmo2.block_count", 5) }, "blk.4."},
		{"heads", func(w *gguf.Writer) { w.SetUint32("olmo2.attention.head_count_kv", 3) }, "(Heads) 4 is not a multiple of KVHeads = 3"},
		{"ffn", func(w *gguf.Writer) { w.SetUint32("olmo2.feed_forward_length", 128) }, "ffn_gate.weight has shape"},
		{"rope width", func(w *gguf.Writer) { w.SetUint32("olmo2.rope.dimension_count", 8) }, "RoPE over 8 features"},
		{"pattern array", func(w *gguf.Writer) {
			w.Set("olmo2.attention.sliding_window_pattern", gguf.Value{Type: gguf.TypeArray, V: []bool{true, false}})
		}, "per-layer sliding-window pattern"},
		{"scaling", func(w *gguf.Writer) { w.SetString("olmo2.rope.scaling.type", "longrope") }, "unsupported"},
	} {
		_, err := Load(edited(t, c.edit))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want it to mention %q", c.name, err, c.want)
		}
		if c.name == "scaling" && !errors.Is(err, ErrUnsupported) {
			t.Errorf("%s: %v is not ErrUnsupported", c.name, err)
		}
	}
}
