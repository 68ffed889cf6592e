package llama4_test

import (
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/toyml/toy/internal/testmodel"
	"github.com/toyml/toy/toy/card"
	"github.com/toyml/toy/toy/gguf"
	"github.com/toyml/toy/toy/models/llama4"
	"github.com/toyml/toy/toy/nn"
	"github.com/toyml/toy/toy/tensor"
)

// spec is a small Llama 4: four layers (3 the NoPE one), dense and mixture
// layers alternating, 2 of 4 experts a token, RoPE frequency factors.
func spec(dt tensor.DType) testmodel.Spec {
	return testmodel.Spec{Name: "m", Arch: "llama4", DType: dt, Vocab: "none", VocabSize: 300, Embed: 64, Layers: 4,
		FFN: 96, Heads: 4, KVHeads: 2, Context: 64, Seed: 5, RopeFreqs: true, Experts: 4, ExpertsUsed: 2,
		Llama4: &testmodel.Llama4Spec{ExpertFFN: 32, MoEPeriod: 2}}
}

func open(t *testing.T, s testmodel.Spec) *gguf.File {
	t.Helper()
	path := filepath.Join(t.TempDir(), "m.gguf")
	if _, err := testmodel.Write(s, path); err != nil {
		t.Fatal(err)
	}
	f, err := gguf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func load(t *testing.T, s testmodel.Spec) *llama4.Model {
	t.Helper()
	m, err := llama4.Load(open(t, s))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// loadWith loads s's weights into a model of the file's configuration as
// edit changes it: spans small enough for a short test.
func loadWith(t *testing.T, s testmodel.Spec, edit func(c *llama4.Config)) *llama4.Model {
	t.Helper()
	f := open(t, s)
	c, err := llama4.ConfigFromGGUF(f)
	if err != nil {
		t.Fatal(err)
	}
	edit(&c)
	m := llama4.New(c)
	if err := nn.Load(f, "", m); err != nil {
		t.Fatal(err)
	}
	m.SetRopeFreqs(m.RopeFreqs)
	return m
}

func TestLoad(t *testing.T) {
	m := load(t, spec(tensor.Q8_0))
	c := m.Config
	if c.Experts != 4 || c.ExpertsUsed != 2 || c.ExpertFFN != 32 || c.FFN != 96 || c.MoePeriod != 2 || c.HeadDim != 16 ||
		c.Chunk != 8192 || c.ChunkPeriod != 4 || c.NoRopePeriod != 4 || c.TempScale != 0.1 || c.TempFloor != 8192 ||
		c.TempOffset != 1 || !c.L2Norm || !c.RopeFreqs || c.RopeBase != 500000 || m.RopeFreqs == nil {
		t.Fatalf("config %+v", c)
	}
	for l, b := range m.Blocks {
		b := b.(*nn.Block)
		a := b.Attn
		_, moe := b.FFN.(*nn.MoE)
		rope, chunk, temp, mix := l != 3, l != 3, l == 3, l%2 == 1
		// The RoPE layers' L2 norm, the others' temperature: a step after RoPE.
		if (a.RoPE != nil) != rope || (a.Options.Chunk == 8192) != chunk || (a.Then != nil) != (temp || rope) ||
			moe != mix || (rope && a.RoPE.Factors != m.RopeFreqs) {
			t.Errorf("layer %d: RoPE %v, chunk %d, after RoPE %v, mixture %v", l, a.RoPE != nil, a.Options.Chunk, a.Then != nil, moe)
		}
		if moe {
			x := b.FFN.(*nn.MoE)
			if !x.Sigmoid || !x.WeightInputs || !x.SharedUngated || x.Normalize || x.SharedGate == nil || x.Gate.DType() != tensor.Q8_0 {
				t.Errorf("layer %d: mixture %+v", l, x)
			}
		}
	}
}

// Maverick (128 experts) has no L2 norm of queries and keys: llama.cpp
// switches it on for every other llama4.
func TestMaverickHasNoL2Norm(t *testing.T) {
	s := spec(tensor.F32)
	s.Experts = 128
	m := load(t, s)
	for l, b := range m.Blocks {
		b := b.(*nn.Block)
		if m.Config.L2Norm || (b.Attn.RoPE != nil && b.Attn.Then != nil) {
			t.Fatalf("layer %d: an L2 norm after RoPE with 128 experts", l)
		}
	}
}

// Metadata that disagrees with the tensors, describes nothing buildable, or
// asks for what llama.cpp's llama4 does not run, is an error at load that
// names the problem.
func TestLyingMetadata(t *testing.T) {
	for _, c := range []struct {
		name string
		edit func(w *gguf.Writer)
		want string
	}{
		{"experts", func(w *gguf.Writer) { w.SetUint32("llama4.expert_count", 6) }, "ffn_gate_inp.weight has shape [4 64], want [6 64]"},
		{"used", func(w *gguf.Writer) { w.SetUint32("llama4.expert_used_count", 5) }, "(ExpertsUsed) 5 is outside [1, Experts], Experts = 4"},
		{"period", func(w *gguf.Writer) { w.SetUint32("llama4.interleave_moe_layer_step", 1) }, "tensor not found: blk.0.ffn_gate_inp.weight"},
		{"expert width", func(w *gguf.Writer) { w.SetUint32("llama4.expert_feed_forward_length", 48) }, "ffn_gate_exps.weight has shape [4 32 64], want [4 48 64]"},
		{"heads", func(w *gguf.Writer) {
			w.SetUint32("llama4.attention.head_count", 8)
			w.SetUint32("llama4.attention.key_length", 16)
		}, "attn_q.weight has shape [64 64], want [128 64]"},
		{"RoPE width", func(w *gguf.Writer) { w.SetUint32("llama4.rope.dimension_count", 8) }, "unsupported"},
		{"no chunks", func(w *gguf.Writer) { w.SetUint32("llama4.attention.sliding_window", 0) }, "unsupported"},
		{"rope scaling", func(w *gguf.Writer) {
			w.SetString("llama4.rope.scaling.type", "yarn")
			w.SetFloat32("llama4.rope.scaling.factor", 4)
		}, "unsupported"},
	} {
		_, err := llama4.Load(testmodel.Edited(t, spec(tensor.F32), c.edit))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want it to mention %q", c.name, err, c.want)
		}
	}
}

// Decoding one token at a time through the KV cache gives the logits of one
// prefill over the same tokens, with chunks of 3 and the temperature's step
// at 4 so that both act within the 11 positions.
func TestDecodeMatchesPrefill(t *testing.T) {
	m := loadWith(t, spec(tensor.F32), func(c *llama4.Config) { c.Chunk, c.TempFloor = 3, 4 })
	ids := []int32{5, 17, 250, 3, 99, 42, 7, 120, 260, 11, 298}
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

// With every layer chunked (chunks of 4), a position sees nothing of the
// chunks before its own: changing token 1 leaves the logits of positions 4
// on exactly as they were, and moves those of positions 1–3.
func TestChunksAreIndependent(t *testing.T) {
	m := loadWith(t, spec(tensor.F32), func(c *llama4.Config) { c.Chunk, c.ChunkPeriod = 4, 0 })
	a := []int32{5, 17, 250, 3, 99, 42, 7, 120, 260, 11}
	b := slices.Clone(a)
	b[1] = 18
	la, lb := m.Forward(a, nil), m.Forward(b, nil)
	for p := range a {
		same := slices.Equal(la.Row(p), lb.Row(p))
		if same != (p == 0 || p >= 4) {
			t.Errorf("position %d: logits the same %v", p, same)
		}
	}
}

// The card round trip: describe → parse → the same Config.
func TestCardRoundTrip(t *testing.T) {
	m := load(t, spec(tensor.F32))
	k := m.Card()
	got, err := card.Parse(k.Render())
	if err != nil {
		t.Fatal(err)
	}
	if got.(llama4.Config) != m.Config {
		t.Fatalf("parsed %+v, loaded %+v", got, m.Config)
	}
	var n int64
	for _, w := range m.Weights() {
		n += int64(w.T.Len())
	}
	if k.ParamCount != n {
		t.Errorf("the card counts %d parameters, the weights hold %d", k.ParamCount, n)
	}
}
