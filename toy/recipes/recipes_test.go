package recipes

import (
	"errors"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/toyml/toy/internal/testmodel"
	"github.com/toyml/toy/toy/engine"
	"github.com/toyml/toy/toy/gguf"
	"github.com/toyml/toy/toy/models/gemma"
	"github.com/toyml/toy/toy/models/gpt2"
	"github.com/toyml/toy/toy/models/llama"
	"github.com/toyml/toy/toy/nn"
	"github.com/toyml/toy/toy/tensor"
)

var tinyLlama = llama.Config{Arch: "llama", VocabSize: 40, ContextLength: 32, Embed: 32, Layers: 2, FFN: 64,
	Heads: 4, KVHeads: 2, HeadDim: 8, RopeDim: 8, RopeBase: 10000, NormEps: 1e-5}

// batchAt returns a deterministic batch for a step: a repeating pattern the
// model can learn.
func batchAt(t testing.TB, step int) *engine.Batch {
	var seqs [][]int32
	for b := 0; b < 2; b++ {
		s := make([]int32, 13)
		for i := range s {
			s[i] = int32((i*3 + b + step) % 10)
		}
		seqs = append(seqs, s)
	}
	batch, err := engine.NewBatch(seqs, 40, -1)
	if err != nil {
		t.Fatal(err)
	}
	return batch
}

func TestFromScratchLearns(t *testing.T) {
	tinyQwen3 := tinyLlama
	tinyQwen3.Arch, tinyQwen3.RopeNeoX, tinyQwen3.HeadDim, tinyQwen3.RopeDim = "qwen3", true, 16, 16 // per-head q/k norms, heads wider than D/H
	tinyGemma2 := gemma.Config{Arch: "gemma2", VocabSize: 40, ContextLength: 32, Embed: 32, Layers: 2, FFN: 64, Heads: 4, KVHeads: 2, HeadDim: 16,
		RopeBase: 10000, NormEps: 1e-6, Window: 4, AttnSoftcap: 50, FinalSoftcap: 30, QueryScale: 0.25}
	// Gemma 2 untied: tied to the √D-scaled embedding it learns the pattern more slowly.
	tinyMixtral := tinyLlama
	tinyMixtral.Experts, tinyMixtral.ExpertsUsed, tinyMixtral.ExpertFFN = 4, 2, 32
	for _, cfg := range []any{tinyLlama, tinyQwen3, tinyGemma2, tinyMixtral,
		gpt2.Config{VocabSize: 40, ContextLength: 32, Embed: 32, Layers: 2, FFN: 64, Heads: 4, NormEps: 1e-5, TiedOutput: true}} {
		r, err := NewFromScratch(cfg, NewOptions(12).WithSteps(30).WithLR(3e-3).WithWarmup(2))
		if err != nil {
			t.Fatal(err)
		}
		var first, last float32
		for step := 0; step < 30; step++ {
			loss, err := r.Step(batchAt(t, step))
			if err != nil {
				t.Fatal(err)
			}
			if step == 0 {
				first = loss
			}
			last = loss
		}
		// ln 40 = 3.69 at the start; the pattern is learnable.
		if math.Abs(float64(first)-math.Log(40)) > 0.2 || last > first/2 {
			t.Errorf("%T: loss %.3f → %.3f after 30 steps", cfg, first, last)
		}
	}
}

// Three steps, a checkpoint, Resume and three more equal six uninterrupted
// steps bit for bit.
func TestResumeIsExact(t *testing.T) {
	o := NewOptions(12).WithSteps(6).WithLR(1e-2).WithWarmup(1)
	straight, _ := NewFromScratch(tinyLlama, o)
	var want []float32
	for step := 0; step < 6; step++ {
		l, err := straight.Step(batchAt(t, step))
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, l)
	}
	r, _ := NewFromScratch(tinyLlama, o)
	var got []float32
	for step := 0; step < 3; step++ {
		l, _ := r.Step(batchAt(t, step))
		got = append(got, l)
	}
	ckpt := filepath.Join(t.TempDir(), "ckpt.gguf")
	if err := r.SaveCheckpoint(ckpt); err != nil {
		t.Fatal(err)
	}
	r, err := Resume(ckpt)
	if err != nil {
		t.Fatal(err)
	}
	if r.Steps != 3 {
		t.Fatalf("resumed at step %d", r.Steps)
	}
	for step := 3; step < 6; step++ {
		l, err := r.Step(batchAt(t, step))
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, l)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("losses with a resume %v, uninterrupted %v", got, want)
	}
	a, b := straight.Model.Weights(), r.Model.Weights()
	for i := range a {
		if !slices.Equal(a[i].T.Data(), b[i].T.Data()) {
			t.Fatalf("weight %s differs after resume", a[i].Name)
		}
	}
}

func baseModel(t *testing.T, dt tensor.DType) string {
	path := filepath.Join(t.TempDir(), "base.gguf")
	spec := testmodel.Spec{Name: "base", Arch: "llama", DType: dt, Vocab: "none", VocabSize: 300,
		Embed: 64, Layers: 2, FFN: 128, Heads: 4, KVHeads: 2, Context: 64, Seed: 9}
	if _, err := testmodel.Write(spec, path); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestLoRATrainsAdaptersOnlyAndMerges(t *testing.T) {
	base := baseModel(t, tensor.F32)
	r, err := NewLoRA(base, NewOptions(12).WithTargets("q", "k", "v", "o", "gate", "up", "down").WithLR(1e-2).WithSteps(20))
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Params) != 2*7*2 {
		t.Fatalf("%d adapter tensors, want 28", len(r.Params))
	}
	before := r.Model.Weights()[0].T.Float32s()
	var first, last float32
	for step := 0; step < 20; step++ {
		l, err := r.Step(batchAt(t, step))
		if err != nil {
			t.Fatal(err)
		}
		if step == 0 {
			first = l
		}
		last = l
	}
	if last >= first {
		t.Errorf("LoRA loss %.3f → %.3f", first, last)
	}
	if !slices.Equal(before, r.Model.Weights()[0].T.Float32s()) {
		t.Error("a frozen base weight changed")
	}
	// The merged model gives the adapted model's logits.
	dir := t.TempDir()
	adapter, merged := filepath.Join(dir, "adapter.gguf"), filepath.Join(dir, "merged.gguf")
	if err := r.SaveAdapter(adapter); err != nil {
		t.Fatal(err)
	}
	if err := MergeAdapter(base, adapter, merged); err != nil {
		t.Fatal(err)
	}
	f, err := gguf.Open(merged)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m, err := llama.Load(f)
	if err != nil {
		t.Fatal(err)
	}
	ids := []int32{1, 5, 9, 2}
	want := r.Model.Logits(r.Model.Hidden(ids, nil)).Data()
	got := m.Logits(m.Hidden(ids, nil)).Data()
	for i := range want {
		if math.Abs(float64(got[i]-want[i])) > 1e-4 {
			t.Fatalf("merged logit %d = %v, adapted %v", i, got[i], want[i])
		}
	}
	ad, _ := gguf.Open(adapter)
	defer ad.Close()
	if typ, _ := ad.String("adapter.type"); typ != "lora" {
		t.Errorf("adapter.type %q", typ)
	}
	if _, err := ad.Info("blk.0.attn_q.weight.lora_a"); err != nil {
		t.Error(err)
	}
}

func TestQLoRAKeepsQ8Base(t *testing.T) {
	r, err := NewQLoRA(baseModel(t, tensor.F32), NewOptions(12))
	if err != nil {
		t.Fatal(err)
	}
	m := r.Model.(*llama.Model)
	b := m.Blocks[0].(*nn.Block)
	if b.Attn.Q.W.DType() != tensor.Q8_0 {
		t.Fatalf("QLoRA base is %v", b.Attn.Q.W.DType())
	}
	if _, err := r.Step(batchAt(t, 0)); err != nil {
		t.Fatal(err)
	}
	if b.Attn.Q.LoRA.B.Float32s()[0] == 0 && b.Attn.V.LoRA.B.Float32s()[0] == 0 {
		t.Error("adapters did not move")
	}
}

func TestNaNLeavesWeightsIntact(t *testing.T) {
	r, _ := NewFromScratch(tinyLlama, NewOptions(12))
	w := r.Model.Weights()
	w[1].T.Data()[0] = float32(math.NaN())
	before := slices.Clone(w[0].T.Data())
	if _, err := r.Step(batchAt(t, 0)); !errors.Is(err, engine.ErrNonFinite) {
		t.Fatalf("err = %v, want ErrNonFinite", err)
	}
	if !slices.Equal(before, w[0].T.Data()) || r.Steps != 0 {
		t.Error("a non-finite step changed the weights or the step count")
	}
}

func TestBadOptionsAndBatches(t *testing.T) {
	if _, err := NewFromScratch(tinyLlama, NewOptions(1)); err == nil {
		t.Error("context 1 accepted")
	}
	if _, err := NewFromScratch(tinyLlama, NewOptions(64)); err == nil {
		t.Error("context beyond the model accepted")
	}
	if _, err := NewLoRA(baseModel(t, tensor.F32), NewOptions(12).WithTargets("qkv")); err == nil {
		t.Error("a llama model accepted a qkv target")
	}
	if _, err := engine.NewBatch([][]int32{{1, 2, 3}, {1, 2}}, 40, -1); !errors.Is(err, engine.ErrBatch) {
		t.Errorf("ragged batch: %v", err)
	}
	if _, err := engine.NewBatch([][]int32{{1, 99}}, 40, -1); !errors.Is(err, engine.ErrBatch) {
		t.Errorf("id beyond the vocabulary: %v", err)
	}
	if _, err := engine.NewBatch([][]int32{{1}}, 40, -1); !errors.Is(err, engine.ErrBatch) {
		t.Errorf("too short: %v", err)
	}
	r, _ := NewFromScratch(tinyLlama, NewOptions(4))
	if _, err := r.Step(batchAt(t, 0)); !errors.Is(err, engine.ErrBatch) {
		t.Errorf("batch longer than the context: %v", err)
	}
	if _, err := Resume(baseModel(t, tensor.F32)); !errors.Is(err, ErrCheckpoint) {
		t.Errorf("resume from a plain model: %v", err)
	}
}

// TestWarmStartKeepsRopeFreqs: a Llama 3.1-style model's RoPE frequency
// factors are not trained (no parameter, unchanged after steps) and are
// written back with the model, which then loads with the same factors.
func TestWarmStartKeepsRopeFreqs(t *testing.T) {
	path := filepath.Join(t.TempDir(), "base.gguf")
	spec := testmodel.Spec{Name: "base", Arch: "llama", DType: tensor.F32, Vocab: "none", VocabSize: 300,
		Embed: 64, Layers: 2, FFN: 128, Heads: 4, KVHeads: 2, Context: 64, Seed: 9, RopeFreqs: true}
	if _, err := testmodel.Write(spec, path); err != nil {
		t.Fatal(err)
	}
	r, err := NewWarmStart(path, NewOptions(12).WithSteps(2).WithLR(1e-2))
	if err != nil {
		t.Fatal(err)
	}
	m := r.Model.(*llama.Model)
	if m.RopeFreqs == nil || m.Blocks[1].(*nn.Block).Attn.RoPE.Factors != m.RopeFreqs {
		t.Fatal("the warm-started model has no RoPE frequency factors in its blocks")
	}
	before := slices.Clone(m.RopeFreqs.Data())
	for _, p := range r.Params {
		if p.Name == "rope_freqs.weight" {
			t.Error("rope_freqs.weight is a trained parameter")
		}
	}
	for step := 0; step < 2; step++ {
		if _, err := r.Step(batchAt(t, step)); err != nil {
			t.Fatal(err)
		}
	}
	if !slices.Equal(m.RopeFreqs.Data(), before) {
		t.Errorf("RoPE frequency factors changed in training: %v → %v", before, m.RopeFreqs.Data())
	}
	out := filepath.Join(t.TempDir(), "out.gguf")
	if err := r.SaveModel(out); err != nil {
		t.Fatal(err)
	}
	f, err := gguf.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	saved, err := llama.Load(f)
	if err != nil {
		t.Fatal(err)
	}
	if saved.RopeFreqs == nil || !slices.Equal(saved.RopeFreqs.Data(), before) || !saved.Config.RopeFreqs {
		t.Errorf("saved model: factors %v, config %v; want %v", saved.RopeFreqs, saved.Config.RopeFreqs, before)
	}
}

// NewFromModel refuses models whose weights a checkpoint could not hold.
func TestNewFromModelRefusesBadWeights(t *testing.T) {
	w := nn.NewInit(1).Normal(0.02, 4, 4)
	for _, c := range []struct {
		ws   []nn.Named
		want string
	}{
		{nil, "lists no weights"},
		{[]nn.Named{{Name: "a.weight", T: w}, {Name: "a.weight", T: w}}, "lists the weight a.weight twice"},
		{[]nn.Named{{Name: "", T: w}}, "a weight with no name"},
		{[]nn.Named{{Name: "b.weight"}}, "weight b.weight is nil"},
	} {
		_, err := NewFromModel(weightsOnly{c.ws}, NewOptions(4))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("weights %v: got %v, want %q", c.ws, err, c.want)
		}
	}
	if _, err := NewFromModel(nil, NewOptions(4)); err == nil {
		t.Error("NewFromModel(nil) accepted")
	}
}

// weightsOnly is a model that only lists weights.
type weightsOnly struct{ ws []nn.Named }

func (weightsOnly) Hidden([]int32, *nn.Cache) *tensor.Tensor { panic("no forward pass") }
func (weightsOnly) Logits(*tensor.Tensor) *tensor.Tensor     { panic("no forward pass") }
func (weightsOnly) NewCache(int) *nn.Cache                   { return nil }
func (weightsOnly) VocabSize() int                           { return 4 }
func (weightsOnly) ContextLength() int                       { return 8 }
func (m weightsOnly) Weights() []nn.Named                    { return m.ws }
func (weightsOnly) SetMetadata(*gguf.Writer)                 {}
