package cohere

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/toyml/toy/internal/testmodel"
	"github.com/toyml/toy/toy/gguf"
	"github.com/toyml/toy/toy/nn"
	"github.com/toyml/toy/toy/tensor"
)

// edited writes a tiny Command R7B, applies edit to its metadata, and
// returns the parsed result.
func edited(t *testing.T, edit func(w *gguf.Writer)) *gguf.File {
	return testmodel.Edited(t, testmodel.Spec{Name: "m", Arch: "cohere2", DType: tensor.Q8_0, Vocab: "none", VocabSize: 300,
		Embed: 64, Layers: 4, FFN: 96, Heads: 4, KVHeads: 2, Context: 64, Tied: true, Seed: 5, Window: 3}, edit)
}

// Decoding one token at a time gives the logits of the whole prompt, past
// the window.
func TestDecodeMatchesPrefill(t *testing.T) {
	m, err := Load(edited(t, func(*gguf.Writer) {}))
	if err != nil {
		t.Fatal(err)
	}
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
		{"layers", func(w *gguf.Writer) { w.SetUint32("cohere2.block_count", 5) }, "blk.4."},
		{"heads", func(w *gguf.Writer) { w.SetUint32("cohere2.attention.head_count_kv", 3) }, "(Heads) 4 is not a multiple of KVHeads = 3"},
		{"ffn", func(w *gguf.Writer) { w.SetUint32("cohere2.feed_forward_length", 128) }, "ffn_gate.weight has shape"},
		{"no window", func(w *gguf.Writer) { w.SetUint32("cohere2.attention.sliding_window", 0) }, "window 0"},
		{"rope width", func(w *gguf.Writer) { w.SetUint32("cohere2.rope.dimension_count", 8) }, "RoPE over 8 features"},
		{"scaling", func(w *gguf.Writer) {
			w.SetString("cohere2.rope.scaling.type", "yarn")
			w.SetFloat32("cohere2.rope.scaling.factor", 4)
		}, "unsupported"},
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

// Command R+: a command-r file with attn_q_norm and attn_k_norm (64 layers,
// as llama.cpp wants them) loads with a LayerNorm per query and key head,
// its parameter count includes them, decoding through the KV cache gives
// the logits of the whole prompt, and a Command R7B may not have them.
func TestCommandRPlus(t *testing.T) {
	f := testmodel.Edited(t, testmodel.Spec{Name: "plus", Arch: "command-r", DType: tensor.F32, Vocab: "none", VocabSize: 300,
		Embed: 32, Layers: 64, FFN: 32, Heads: 4, KVHeads: 2, Context: 64, Tied: true, Seed: 7}, func(*gguf.Writer) {})
	m, err := Load(f)
	if err != nil {
		t.Fatal(err)
	}
	if !m.Config.QKNorm {
		t.Fatal("QKNorm not read from the tensors")
	}
	for i, b := range m.Blocks {
		a := b.(*Block).Attn
		q, okq := a.Norms.Q.(*nn.LayerNorm)
		k, okk := a.Norms.K.(*nn.LayerNorm)
		if !okq || !okk || q.Eps != m.Config.NormEps ||
			!slices.Equal(q.W.Shape(), []int{4, 8}) || !slices.Equal(k.W.Shape(), []int{2, 8}) {
			t.Fatalf("layer %d: query/key norms %+v, %+v", i, q, k)
		}
	}
	var n int64
	for _, w := range m.Weights() {
		n += int64(w.T.Len())
	}
	if k := m.Card(); k.ParamCount != n {
		t.Errorf("the card counts %d parameters, the model holds %d", k.ParamCount, n)
	}
	ids := []int32{5, 17, 200, 3, 9}
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
	if err := (Config{Arch: "cohere2", VocabSize: 300, ContextLength: 64, Embed: 32, Layers: 4, FFN: 32, Heads: 4, KVHeads: 2,
		RopeBase: 50000, NormEps: 1e-5, Window: 4, SlidingPattern: 4, QKNorm: true}).Validate(); err == nil {
		t.Error("a cohere2 config with query/key norms validated")
	}
}
