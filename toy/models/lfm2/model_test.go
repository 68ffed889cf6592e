package lfm2

import (
	"errors"
	"strings"
	"testing"

	"github.com/toyml/toy/internal/testmodel"
	"github.com/toyml/toy/toy/card"
	"github.com/toyml/toy/toy/gguf"
	"github.com/toyml/toy/toy/models/internal/builtin"
	"github.com/toyml/toy/toy/nn"
	"github.com/toyml/toy/toy/tensor"
)

// spec is a tiny LFM2: convolutions in layers 0, 1 and 3, attention in 2
// and 4 (one of them with a window when window > 0).
func spec(window int) testmodel.Spec {
	return testmodel.Spec{Name: "m", Arch: "lfm2", DType: tensor.Q8_0, Vocab: "none", VocabSize: 300, Embed: 64, Layers: 5,
		FFN: 96, Heads: 4, Context: 64, Tied: true, Seed: 5, Window: window,
		Lfm2: &testmodel.Lfm2Spec{KVHeads: []int{0, 0, 2, 0, 1}, ConvL: 3}}
}

func edited(t *testing.T, edit func(w *gguf.Writer)) *gguf.File {
	return testmodel.Edited(t, spec(3), edit)
}

// Decoding one token at a time, or a few at a time, gives the logits of
// the whole prompt: the convolutions reach back into the cache across
// calls; and after the cache is truncated, running the rest again gives
// them once more.
func TestDecodeMatchesPrefill(t *testing.T) {
	m, err := Load(edited(t, func(*gguf.Writer) {}))
	if err != nil {
		t.Fatal(err)
	}
	ids := []int32{5, 17, 200, 3, 9, 41, 7, 120}
	whole := m.Forward(ids, m.NewCache(16)).Float32s()
	V := m.Config.VocabSize
	check := func(what string, from int, got []float32) {
		t.Helper()
		for j, v := range got {
			if d := v - whole[from*V+j]; d > 1e-4 || d < -1e-4 {
				t.Fatalf("%s: position %d, logit %d: %g, %g at once", what, from+j/V, j%V, v, whole[from*V+j])
			}
		}
	}
	cache := m.NewCache(16)
	for i, id := range ids {
		check("one at a time", i, m.Forward([]int32{id}, cache).Float32s())
	}
	cache.Truncate(1) // fewer positions than the taps reach back
	check("after truncation", 1, m.Forward(ids[1:4], cache).Float32s())
	check("then the rest", 4, m.Forward(ids[4:], cache).Float32s())
	if cache.Len() != len(ids) {
		t.Errorf("cache holds %d positions, want %d", cache.Len(), len(ids))
	}
}

// The file's card counts and lists the weights the loaded model holds (and
// is its card); the card round-trips the configuration.
func TestCard(t *testing.T) {
	f := edited(t, func(*gguf.Writer) {})
	m, err := Load(f)
	if err != nil {
		t.Fatal(err)
	}
	k := sameCards(t, f, m)
	cfg, err := ConfigFromCard(k)
	if err != nil {
		t.Fatal(err)
	}
	got := cfg.(Config)
	if got.Window != 3 || len(got.KVHeads) != 5 || got.KVHeads[4] != 1 || got.ConvTaps != 3 {
		t.Errorf("card config %+v", got)
	}
}

// sameCards checks that the card of file f is that of the model loaded
// from it, and counts the weights the model holds; it returns the card.
func sameCards(t *testing.T, f *gguf.File, m *Model) *card.Card {
	t.Helper()
	k, err := builtin.Card(readConfig, Config.card, New)(f)
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, w := range m.Weights() {
		n += int64(w.T.Len())
	}
	if k.ParamCount != n {
		t.Errorf("the card counts %d parameters, the model holds %d", k.ParamCount, n)
	}
	if got, want := m.Card().Render(), k.Render(); got != want {
		t.Errorf("the model's card:\n%s\nthe file's:\n%s", got, want)
	}
	return k
}

// Metadata that disagrees with the tensors, or asks for what toy lacks, is
// an error at load that names the problem.
func TestLyingMetadata(t *testing.T) {
	for _, c := range []struct {
		name string
		edit func(w *gguf.Writer)
		want string
	}{
		{"layers", func(w *gguf.Writer) { w.SetUint32("lfm2.block_count", 6) }, "5 entries for 6 layers"},
		{"kv count", func(w *gguf.Writer) { w.SetInt32s("lfm2.attention.head_count_kv", []int32{0, 0, 2, 0}) }, "4 entries for 5 layers"},
		{"kind", func(w *gguf.Writer) { w.SetInt32s("lfm2.attention.head_count_kv", []int32{2, 0, 2, 0, 1}) }, "blk.0.attn_output"},
		{"taps", func(w *gguf.Writer) { w.SetUint32("lfm2.shortconv.l_cache", 4) }, "shortconv.conv.weight has shape"},
		{"one tap", func(w *gguf.Writer) { w.SetUint32("lfm2.shortconv.l_cache", 1) }, "(ConvTaps) 1 is outside [2, 64]"},
		{"ffn", func(w *gguf.Writer) { w.SetUint32("lfm2.feed_forward_length", 128) }, "ffn_gate.weight has shape"},
		{"encoder", func(w *gguf.Writer) { w.SetBool("lfm2.attention.causal", false) }, "bidirectional"},
		{"scaling", func(w *gguf.Writer) {
			w.SetString("lfm2.rope.scaling.type", "yarn")
			w.SetFloat32("lfm2.rope.scaling.factor", 4)
		}, "unsupported"},
	} {
		_, err := Load(edited(t, c.edit))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want it to mention %q", c.name, err, c.want)
		}
		if (c.name == "scaling" || c.name == "encoder") && !errors.Is(err, ErrUnsupported) {
			t.Errorf("%s: %v is not ErrUnsupported", c.name, err)
		}
	}
}

// LFM2-MoE: the mixture layers start at leading_dense_block_count, the card
// is the file's, decoding through the cache gives the prompt's logits, and
// a gating function other
// than softmax or sigmoid, or experts in an lfm2 file, are refused.
func TestMoE(t *testing.T) {
	s := testmodel.Spec{Name: "moe", Arch: "lfm2moe", DType: tensor.F32, Vocab: "none", VocabSize: 300, Embed: 32, Layers: 4,
		FFN: 48, Heads: 4, Context: 64, Tied: true, Seed: 9, Experts: 4, ExpertsUsed: 2,
		Lfm2: &testmodel.Lfm2Spec{KVHeads: []int{0, 2, 0, 2}, ConvL: 3, ExpertFFN: 16, DenseLead: 1}}
	f := testmodel.Edited(t, s, func(*gguf.Writer) {})
	m, err := Load(f)
	if err != nil {
		t.Fatal(err)
	}
	sameCards(t, f, m)
	for i, b := range m.Blocks {
		ffn := b.(*Block).FFN
		e, ok := ffn.(*nn.MoE)
		if ok != (i >= 1) || ok && (!e.Sigmoid || !e.Normalize || e.Used != 2 || e.Bias == nil) {
			t.Fatalf("layer %d: feed-forward %T %+v", i, ffn, ffn)
		}
	}
	ids := []int32{5, 17, 200, 3, 9}
	whole := m.Forward(ids, m.NewCache(8)).Float32s()
	cache := m.NewCache(8)
	for i, id := range ids {
		for j, v := range m.Forward([]int32{id}, cache).Float32s() {
			if d := v - whole[i*300+j]; d > 1e-4 || d < -1e-4 {
				t.Fatalf("position %d, logit %d: %g one at a time, %g at once", i, j, v, whole[i*300+j])
			}
		}
	}
	if _, err := Load(testmodel.Edited(t, s, func(w *gguf.Writer) { w.SetUint32("lfm2moe.expert_gating_func", 3) })); err == nil ||
		!strings.Contains(err.Error(), "gating function 3") {
		t.Errorf("gating function 3: %v", err)
	}
	if _, err := Load(testmodel.Edited(t, s, func(w *gguf.Writer) { w.SetString("general.architecture", "lfm2") })); err == nil {
		t.Error("an lfm2 file with expert tensors loaded")
	}
}
