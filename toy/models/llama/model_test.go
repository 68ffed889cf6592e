package llama

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/toyml/toy/internal/testmodel"
	"github.com/toyml/toy/toy/gguf"
	"github.com/toyml/toy/toy/nn"
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
	if !c.RopeNeoX || !c.TiedOutput || c.KVHeads != 2 || c.HeadDim != 16 || c.RopeBase != 1e6 || m.Blocks[0].(*nn.Block).Attn.Q.B == nil {
		t.Fatalf("config %+v, Q bias %v", c, m.Blocks[0].(*nn.Block).Attn.Q.B)
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
		{"heads", func(w *gguf.Writer) { w.SetUint32("qwen2.attention.head_count_kv", 3) }, "query heads (Heads) 4 is not a multiple of KVHeads = 3"},
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
		}, "(RopeScale) -4 is outside"},
	} {
		_, err := Load(edited(t, c.edit))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want it to mention %q", c.name, err, c.want)
		}
	}
}

// A random model written with SetMetadata and its weights loads back as the
// same model, for each architecture's own hyperparameters.
func TestNewRandomRoundTrip(t *testing.T) {
	base := Config{Arch: "llama", VocabSize: 40, ContextLength: 32, Embed: 32, Layers: 4, FFN: 48, Heads: 4, KVHeads: 2,
		HeadDim: 8, RopeDim: 8, RopeBase: 10000, NormEps: 1e-5}
	qwen2moe := base
	qwen2moe.Arch, qwen2moe.RopeNeoX, qwen2moe.Experts, qwen2moe.ExpertsUsed, qwen2moe.ExpertFFN, qwen2moe.SharedFFN = "qwen2moe", true, 4, 2, 16, 24
	qwen3 := base
	qwen3.Arch, qwen3.RopeNeoX, qwen3.HeadDim, qwen3.RopeDim, qwen3.TiedOutput = "qwen3", true, 16, 16, true
	qwen3.RopeScaling, qwen3.RopeScale, qwen3.RopeOrigContext = "yarn", 4, 16
	granite := base
	granite.Arch, granite.EmbeddingScale, granite.ResidualScale, granite.AttentionScale, granite.LogitScale = "granite", 12, 0.22, 0.125, 8
	mistral3 := base
	mistral3.Arch, mistral3.AttentionScale, mistral3.AttnTemperature, mistral3.RopeOrigContext = "mistral3", 0.25, 0.5, 8
	mistral3.YarnBetaFast, mistral3.YarnBetaSlow, mistral3.YarnLogMul, mistral3.RopeScaling, mistral3.RopeScale = 16, 2, 1, "linear", 2
	for _, c := range []Config{base, qwen2moe, qwen3, granite, mistral3} {
		m := NewRandom(c, 3)
		w := gguf.NewWriter()
		c.SetMetadata(w)
		for _, p := range m.Weights() {
			if err := w.AddFloat32(p.Name, tensor.F32, p.T.Data(), p.T.Shape()...); err != nil {
				t.Fatal(err)
			}
		}
		path := filepath.Join(t.TempDir(), "m.gguf")
		if err := w.WriteFile(path); err != nil {
			t.Fatal(err)
		}
		f, err := gguf.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		back, err := Load(f)
		if err != nil {
			t.Fatalf("%s: %v", c.Arch, err)
		}
		if !reflect.DeepEqual(back.Config, c) {
			t.Errorf("%s: loaded %+v, wrote %+v", c.Arch, back.Config, c)
		}
		ids := []int32{1, 7, 30, 2}
		if want, got := m.Forward(ids, nil).Float32s(), back.Forward(ids, nil).Float32s(); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: the loaded model's logits differ", c.Arch)
		}
	}
}
