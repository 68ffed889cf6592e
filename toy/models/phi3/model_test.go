package phi3_test

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/toyml/toy/internal/testmodel"
	"github.com/toyml/toy/toy/gguf"
	"github.com/toyml/toy/toy/models/phi3"
	"github.com/toyml/toy/toy/nn"
	"github.com/toyml/toy/toy/tensor"
)

// spec is a tiny Phi-3.5-mini: LongRoPE over an original context of 8, 12 of
// 16 features rotated, grouped-query attention, and a sliding window in the
// metadata that the model ignores.
func spec(dt tensor.DType) testmodel.Spec {
	return testmodel.Spec{Name: "m", Arch: "phi3", DType: dt, Vocab: "none", VocabSize: 300, Embed: 64, Layers: 2, FFN: 64,
		Heads: 4, KVHeads: 2, Context: 64, Seed: 5, RopeDim: 12, LongRoPE: true, RopeOrigContext: 8, Window: 3}
}

func load(t *testing.T, s testmodel.Spec) *phi3.Model {
	t.Helper()
	m, err := phi3.Load(testmodel.Edited(t, s, func(*gguf.Writer) {}))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestLoad(t *testing.T) {
	m := load(t, spec(tensor.Q8_0))
	c, a := m.Config, m.Blocks[0].(*nn.Block).Attn
	if !c.RopeFactors || c.RopeOrigContext != 8 || c.RopeDim != 12 || c.HeadDim != 16 || c.KVHeads != 2 || c.TiedOutput ||
		a.QKV == nil || a.Options.Window != 0 || m.RopeLong.Len() != 6 || m.RopeShort.Len() != 6 {
		t.Fatalf("config %+v, fused QKV %v, window %d", c, a.QKV != nil, a.Options.Window)
	}
	// √(1 + ln(64/8) / ln 8) = √2, as llama.cpp's converter writes it.
	if math.Abs(float64(c.RopeAttnFactor)-math.Sqrt2) > 1e-6 {
		t.Errorf("attention factor %g, want √2", c.RopeAttnFactor)
	}
	if c.LongFactors(8) || !c.LongFactors(9) {
		t.Errorf("LongFactors(8) = %v, LongFactors(9) = %v; want the long factors past the original context of 8 only",
			c.LongFactors(8), c.LongFactors(9))
	}
}

// The context, not the positions run, picks LongRoPE's factors: the same
// three tokens give other logits in a cache of 9 positions than in one of 8,
// and the same ones again once the long factors are set to the short ones.
func TestFactorsFollowTheContext(t *testing.T) {
	m := load(t, spec(tensor.F32))
	ids := []int32{5, 17, 250}
	short, long := m.Forward(ids, m.NewCache(8)), m.Forward(ids, m.NewCache(9))
	if slices.Equal(short.Data(), long.Data()) {
		t.Fatal("contexts of 8 and 9 positions gave the same logits; the long factors were not used")
	}
	if again := m.Forward(ids, m.NewCache(8)); !slices.Equal(short.Data(), again.Data()) {
		t.Fatal("running a longer context changed the model")
	}
	// Without a cache (training) the context is the sequence: 3 ≤ 8, short.
	if train := m.Forward(ids, nil); !slices.Equal(short.Data(), train.Data()) {
		t.Error("a 3-token sequence without a cache did not run with the short factors")
	}
	m.RopeLong = m.RopeShort
	if same := m.Forward(ids, m.NewCache(9)); !slices.Equal(short.Data(), same.Data()) {
		t.Error("with equal factor sets, contexts of 8 and 9 positions differ")
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
		{"ffn", func(w *gguf.Writer) { w.SetUint32("phi3.feed_forward_length", 32) }, "ffn_up.weight has shape [128 64], want [64 64]"},
		{"kv heads", func(w *gguf.Writer) { w.SetUint32("phi3.attention.head_count_kv", 4) }, "attn_qkv.weight has shape [128 64], want [192 64]"},
		{"rope width", func(w *gguf.Writer) { w.SetUint32("phi3.rope.dimension_count", 16) }, "rope_factors_short.weight has shape [6], want [8]"},
		{"yarn", func(w *gguf.Writer) {
			w.SetString("phi3.rope.scaling.type", "yarn")
			w.SetFloat32("phi3.rope.scaling.factor", 4)
		}, "unsupported"},
		{"eps", func(w *gguf.Writer) {
			w.Set("phi3.attention.layer_norm_rms_epsilon", gguf.Value{Type: gguf.TypeFloat32, V: float32(0)})
		}, "epsilon"},
	} {
		_, err := phi3.Load(testmodel.Edited(t, spec(tensor.F32), c.edit))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want it to mention %q", c.name, err, c.want)
		}
	}
}

// Decoding one token at a time through the KV cache gives the logits of one
// prefill over the same tokens, in a context past the original one (long
// factors) and within it (short).
func TestDecodeMatchesPrefill(t *testing.T) {
	m := load(t, spec(tensor.F32))
	ids := []int32{5, 17, 250, 3, 99, 42, 7, 120}
	for _, capacity := range []int{8, 16} {
		all := m.Forward(ids, m.NewCache(capacity)) // [T, V]
		cache := m.NewCache(capacity)
		worst := 0.0
		for i, id := range ids {
			step := m.Forward([]int32{id}, cache) // [1, V]
			for v, x := range step.Row(0) {
				worst = max(worst, math.Abs(float64(x-all.Row(i)[v])))
			}
		}
		if worst > 1e-4 {
			t.Errorf("context %d: decode and prefill logits differ by up to %.2e", capacity, worst)
		}
	}
}
