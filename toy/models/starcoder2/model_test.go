package starcoder2

import (
	"strings"
	"testing"

	"github.com/toyml/toy/internal/testmodel"
	"github.com/toyml/toy/toy/gguf"
	"github.com/toyml/toy/toy/nn"
	"github.com/toyml/toy/toy/tensor"
)

// edited writes a tiny StarCoder2, applies edit to its metadata, and returns
// the parsed result.
func edited(t *testing.T, edit func(w *gguf.Writer)) *gguf.File {
	return testmodel.Edited(t, testmodel.Spec{Name: "m", Arch: Arch, DType: tensor.Q8_0, Vocab: "none", VocabSize: 300,
		Embed: 64, Layers: 2, FFN: 96, Heads: 4, KVHeads: 2, Context: 64, Seed: 5}, edit)
}

func TestLoad(t *testing.T) {
	m, err := Load(edited(t, func(*gguf.Writer) {}))
	if err != nil {
		t.Fatal(err)
	}
	c, b := m.Config, m.Blocks[1].(*nn.Block)
	if c.KVHeads != 2 || c.HeadDim() != 16 || c.RopeBase != 1e5 || c.NormEps != 1e-5 || c.TiedOutput || b.Attn.V.B == nil {
		t.Fatalf("config %+v, V bias %v", c, b.Attn.V.B)
	}
	// Decoding one token at a time gives the logits of the whole prompt.
	ids := []int32{5, 17, 200, 3}
	whole := m.Forward(ids, m.NewCache(8)).Float32s()
	cache := m.NewCache(8)
	for i, id := range ids {
		row := m.Forward([]int32{id}, cache).Float32s()
		for j, v := range row {
			if d := v - whole[i*len(row)+j]; d > 1e-5 || d < -1e-5 {
				t.Fatalf("position %d, logit %d: %g one at a time, %g at once", i, j, v, whole[i*len(row)+j])
			}
		}
	}
}

// Metadata that disagrees with the tensors, or describes nothing buildable,
// is an error at load that names the problem.
func TestLyingMetadata(t *testing.T) {
	for _, c := range []struct {
		name string
		edit func(w *gguf.Writer)
		want string
	}{
		{"width", func(w *gguf.Writer) { w.SetUint32("starcoder2.embedding_length", 32) }, "RoPE over 16 features of heads 8 wide"},
		{"layers", func(w *gguf.Writer) { w.SetUint32("starcoder2.block_count", 3) }, "blk.2."},
		{"heads", func(w *gguf.Writer) { w.SetUint32("starcoder2.attention.head_count_kv", 3) }, "(Heads) 4 is not a multiple of KVHeads = 3"},
		{"ffn", func(w *gguf.Writer) { w.SetUint32("starcoder2.feed_forward_length", 128) }, "ffn_up.weight has shape"},
		{"eps", func(w *gguf.Writer) {
			w.Set("starcoder2.attention.layer_norm_epsilon", gguf.Value{Type: gguf.TypeFloat32, V: float32(0)})
		}, "epsilon"},
		{"rope scaling", func(w *gguf.Writer) {
			w.SetString("starcoder2.rope.scaling.type", "linear")
			w.SetFloat32("starcoder2.rope.scaling.factor", 4)
		}, "unsupported"},
	} {
		_, err := Load(edited(t, c.edit))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want it to mention %q", c.name, err, c.want)
		}
	}
}
