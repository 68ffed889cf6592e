package llama

import (
	"strings"
	"testing"

	"github.com/toyml/toy/internal/testmodel"
	"github.com/toyml/toy/toy/gguf"
	"github.com/toyml/toy/toy/tensor"
)

// edited writes a tiny qwen2 model, applies edit to its metadata, and
// returns the parsed result.
func edited(t *testing.T, edit func(w *gguf.Writer)) *gguf.File {
	return testmodel.Edited(t, testmodel.Spec{Name: "m", Arch: "qwen2", DType: tensor.Q8_0, Vocab: "none", VocabSize: 300,
		Embed: 64, Layers: 2, FFN: 96, Heads: 4, KVHeads: 2, Context: 64, Tied: true, Seed: 5}, edit)
}

func TestLoadQwen2(t *testing.T) {
	m, err := Load(edited(t, func(*gguf.Writer) {}))
	if err != nil {
		t.Fatal(err)
	}
	c := m.Config
	if !c.RopeNeoX || !c.TiedOutput || c.KVHeads != 2 || c.HeadDim != 16 || c.RopeBase != 1e6 || m.Blocks[0].Attn.Q.B == nil {
		t.Fatalf("config %+v, Q bias %v", c, m.Blocks[0].Attn.Q.B)
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
		{"width", func(w *gguf.Writer) {
			w.SetUint32("qwen2.embedding_length", 32)
			w.SetUint32("qwen2.rope.dimension_count", 8)
		}, "token_embd.weight has shape [300 64], want [300 32]"},
		{"layers", func(w *gguf.Writer) { w.SetUint32("qwen2.block_count", 3) }, "blk.2."},
		{"heads", func(w *gguf.Writer) { w.SetUint32("qwen2.attention.head_count_kv", 3) }, "4 heads with 3 KV heads"},
		{"absurd layers", func(w *gguf.Writer) { w.SetUint32("qwen2.block_count", 1<<30) }, "layers"},
		{"ffn", func(w *gguf.Writer) { w.SetUint32("qwen2.feed_forward_length", 128) }, "ffn_gate.weight has shape"},
		{"eps type", func(w *gguf.Writer) { w.SetString("qwen2.attention.layer_norm_rms_epsilon", "tiny") }, "wrong type"},
		{"no eps", func(w *gguf.Writer) {
			w.Set("qwen2.attention.layer_norm_rms_epsilon", gguf.Value{Type: gguf.TypeFloat32, V: float32(0)})
		}, "epsilon"},
		{"rope scaling", func(w *gguf.Writer) { w.SetString("qwen2.rope.scaling.type", "longrope") }, "unsupported"},
		{"rope factor", func(w *gguf.Writer) {
			w.SetString("qwen2.rope.scaling.type", "yarn")
			w.SetFloat32("qwen2.rope.scaling.factor", -4)
		}, "RoPE scaling factor -4"},
	} {
		_, err := Load(edited(t, c.edit))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want it to mention %q", c.name, err, c.want)
		}
	}
}
