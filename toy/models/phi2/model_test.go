package phi2_test

import (
	"math"
	"strings"
	"testing"

	"github.com/toyml/toy/internal/testmodel"
	"github.com/toyml/toy/toy/gguf"
	"github.com/toyml/toy/toy/models/phi2"
	"github.com/toyml/toy/toy/nn"
	"github.com/toyml/toy/toy/tensor"
)

// spec is a tiny Phi-2: 8 of 16 features rotated, biases everywhere.
func spec(dt tensor.DType, separate bool) testmodel.Spec {
	return testmodel.Spec{Name: "m", Arch: "phi2", DType: dt, Vocab: "none", VocabSize: 300, Embed: 64, Layers: 2, FFN: 128,
		Heads: 4, KVHeads: 4, Context: 64, Seed: 5, RopeDim: 8, SeparateQKV: separate}
}

func load(t *testing.T, s testmodel.Spec) *phi2.Model {
	t.Helper()
	m, err := phi2.Load(testmodel.Edited(t, s, func(*gguf.Writer) {}))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestLoad(t *testing.T) {
	for _, separate := range []bool{false, true} {
		m := load(t, spec(tensor.Q8_0, separate))
		c, b := m.Config, m.Blocks[1].(*phi2.Block)
		if c.RopeDim != 8 || c.HeadDim != 16 || b.Attn.RoPE.Dim != 8 || !b.Attn.RoPE.NeoX || m.Output.B == nil || m.OutputNorm.(*nn.LayerNorm).B == nil ||
			b.Norm.B == nil || b.Attn.O.B == nil || b.MLP.Up.B == nil || b.MLP.Down.B == nil {
			t.Fatalf("config %+v; a bias or the partial RoPE is missing", c)
		}
		if separate && (b.Attn.QKV != nil || b.Attn.Q.B == nil || b.Attn.V.B == nil) || !separate && (b.Attn.QKV == nil || b.Attn.QKV.B == nil) {
			t.Errorf("separate %v: attention %+v", separate, b.Attn)
		}
	}
}

// The block is parallel: its output is x + Attn(h) + MLP(h) with one
// h = LayerNorm(x), where a sequential block's MLP would read
// LayerNorm(x + Attn(h)).
func TestParallelBlock(t *testing.T) {
	m := load(t, spec(tensor.F32, false))
	b := m.Blocks[0].(*phi2.Block)
	x := m.Embed.Forward([]int32{3, 1, 4, 1, 5}) // [5, D]
	h := b.Norm.Forward(x)
	a := b.Attn.Forward(h, nil)
	parallel := tensor.Add(x, tensor.Add(a, b.MLP.Forward(h)))
	sequential := tensor.Add(tensor.Add(x, a), b.MLP.Forward(b.Norm.Forward(tensor.Add(x, a))))
	got := b.Forward(x, nil)
	worst, apart := 0.0, 0.0
	for i, v := range parallel.Data() {
		worst = max(worst, math.Abs(float64(got.Data()[i]-v)))
		apart = max(apart, math.Abs(float64(sequential.Data()[i]-v)))
	}
	if worst > 1e-5 || apart < 1e-2 {
		t.Fatalf("block output within %.1e of x + Attn(h) + MLP(h) (want ≤ 1e-5), which is %.1e from the sequential block's (want ≥ 1e-2)", worst, apart)
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
		{"ffn", func(w *gguf.Writer) { w.SetUint32("phi2.feed_forward_length", 64) }, "ffn_up.weight has shape [128 64], want [64 64]"},
		{"rope width", func(w *gguf.Writer) { w.SetUint32("phi2.rope.dimension_count", 32) }, "(RopeDim) 32 is outside [1, HeadDim], HeadDim = 16"},
		{"no eps", func(w *gguf.Writer) {
			w.Set("phi2.attention.layer_norm_epsilon", gguf.Value{Type: gguf.TypeFloat32, V: float32(0)})
		}, "epsilon"},
		{"rope scaling", func(w *gguf.Writer) {
			w.SetString("phi2.rope.scaling.type", "linear")
			w.SetFloat32("phi2.rope.scaling.factor", 2)
		}, "unsupported"},
	} {
		_, err := phi2.Load(testmodel.Edited(t, spec(tensor.F32, false), c.edit))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want it to mention %q", c.name, err, c.want)
		}
	}
}

// Decoding one token at a time through the KV cache gives the logits of one
// prefill over the same tokens.
func TestDecodeMatchesPrefill(t *testing.T) {
	m := load(t, spec(tensor.F32, true))
	ids := []int32{5, 17, 250, 3, 99, 42, 7, 120}
	all := m.Forward(ids, m.NewCache(len(ids))) // [T, V]
	cache := m.NewCache(len(ids))
	worst := 0.0
	for i, id := range ids {
		step := m.Forward([]int32{id}, cache) // [1, V]
		for v, x := range step.Row(0) {
			worst = max(worst, math.Abs(float64(x-all.Row(i)[v])))
		}
	}
	if worst > 1e-4 {
		t.Fatalf("decode and prefill logits differ by up to %.2e", worst)
	}
}
