package toy_test

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/toyml/toy/internal/testmodel"
	"github.com/toyml/toy/toy"
	"github.com/toyml/toy/toy/engine"
	"github.com/toyml/toy/toy/models/bert"
)

var (
	bertOnce sync.Once
	bertFile string
)

// bertPath writes the gate's F32 BERT model (bert-base-uncased's WordPiece
// vocabulary, mean pooling, 128 positions) beside the examples' model.
func bertPath() string {
	bertOnce.Do(func() {
		spec := testmodel.EmbedSpecs()[0]
		bertFile = filepath.Join(filepath.Dir(modelPath), spec.File())
		if _, err := testmodel.Write(spec, bertFile); err != nil {
			panic(err)
		}
	})
	return bertFile
}

func ExampleLoadEmbedder() {
	e, err := toy.LoadEmbedder(bertPath())
	if err != nil {
		fmt.Println(err)
		return
	}
	defer e.Close()
	ids, _ := e.Encode("Strawberries!")
	fmt.Println(ids) // [CLS] straw ##berries ! [SEP]
	vs, err := e.Embed([]string{"a cat sat on the mat", "Strawberries!"}, toy.EmbedOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(len(vs), len(vs[0]), e.Pooling)
	fmt.Printf("%.3f\n", toy.Cosine(vs[0], vs[0])) // unit vectors: the cosine is the dot product
	// Output:
	// [101 13137 20968 999 102]
	// 2 64 mean
	// 1.000
}

func ExampleNormalize() {
	fmt.Println(toy.Normalize([]float32{3, 4})) // divided by √(3² + 4²) = 5
	// Output: [0.6 0.8]
}

func ExampleCosine() {
	fmt.Printf("%.4f %.0f %.0f\n", toy.Cosine([]float32{1, 0}, []float32{1, 1}), toy.Cosine([]float32{1, 2}, []float32{-2, 1}),
		toy.Cosine([]float32{2, 4}, []float32{1, 2}))
	// Output: 0.7071 0 1
}

// Embedding texts together or one by one gives the same vectors; the raw
// vector is the model's pooled state, and L2 divides it by its length.
func TestEmbedBatch(t *testing.T) {
	e, err := toy.LoadEmbedder(bertPath())
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	texts := []string{"hello world", "a much longer sentence about nothing at all", "x"}
	all, err := e.Embed(texts, toy.EmbedOptions{Normalize: "none"})
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range texts {
		one, err := e.Embed([]string{s}, toy.EmbedOptions{Normalize: "none"})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(one[0], all[i]) {
			t.Errorf("%q: alone and in a batch differ", s)
		}
		ids, _ := e.Encode(s)
		if want := e.Net.(*bert.Model).Vector(ids); !slices.Equal(want, all[i]) {
			t.Errorf("%q: not the model's pooled state", s)
		}
		unit, _ := e.Embed([]string{s}, toy.EmbedOptions{Normalize: "l2"})
		if !slices.Equal(unit[0], toy.Normalize(all[i])) {
			t.Errorf("%q: l2 is not the normalised raw vector", s)
		}
	}
	cls, err := e.Embed(texts[:1], toy.EmbedOptions{Pooling: "cls", Normalize: "none"})
	if err != nil {
		t.Fatal(err)
	}
	ids, _ := e.Encode(texts[0])
	if want := bert.Pool(e.Net.Hidden(ids), bert.PoolCLS); !slices.Equal(cls[0], want) {
		t.Error("pooling cls is not the first state")
	}
	if e.Dim() != 64 || !strings.Contains(e.String(), "bert embedding model") {
		t.Errorf("Dim %d, String %q", e.Dim(), e)
	}
}

// A decoder embeds by its last token's final normalised state (pooling
// none, as llama.cpp's embedding API returns it), or by the mean.
func TestEmbedDecoder(t *testing.T) {
	e, err := toy.LoadEmbedder(modelPath)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	ids := []int32{1, 42, 7}
	m := toy.MustLoad(modelPath)
	defer m.Close()
	h := m.Net.Hidden(ids, m.Net.NewCache(len(ids))) // [3, 32]
	for _, c := range []struct {
		pooling string
		want    []float32
	}{{"", h.Row(2)}, {"last", h.Row(2)}, {"cls", h.Row(0)}, {"mean", bert.Pool(h, bert.PoolMean)}} {
		got, err := e.EmbedIDs([][]int32{ids}, toy.EmbedOptions{Pooling: c.pooling, Normalize: "none"})
		if err != nil {
			t.Fatal(err)
		}
		for j := range c.want {
			if d := got[0][j] - c.want[j]; d > 1e-5 || d < -1e-5 {
				t.Fatalf("pooling %q, value %d: %v, want %v", c.pooling, j, got[0][j], c.want[j])
			}
		}
	}
	if e.Pooling != bert.PoolNone || e.Dim() != 32 {
		t.Errorf("pooling %v, Dim %d", e.Pooling, e.Dim())
	}
}

func TestEmbedErrors(t *testing.T) {
	e, err := toy.LoadEmbedder(bertPath())
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	long := strings.Repeat("word ", 200) // 202 tokens; the model has 128 positions
	for _, c := range []struct {
		inputs [][]int32
		opts   toy.EmbedOptions
		want   error
		text   string
	}{
		{[][]int32{{101, 102}}, toy.EmbedOptions{Pooling: "max"}, nil, "pooling"},
		{[][]int32{{101, 102}}, toy.EmbedOptions{Pooling: "none"}, nil, "pooling"},
		{[][]int32{{101, 102}}, toy.EmbedOptions{Normalize: "l1"}, nil, "normalize"},
		{[][]int32{{}}, toy.EmbedOptions{}, engine.ErrEmptyPrompt, ""},
		{[][]int32{{101, 30522}}, toy.EmbedOptions{}, engine.ErrTokenRange, ""},
		{[][]int32{make([]int32, 129)}, toy.EmbedOptions{}, toy.ErrTooLong, "129 tokens"},
	} {
		_, err := e.EmbedIDs(c.inputs, c.opts)
		if err == nil || (c.want != nil && !errors.Is(err, c.want)) || !strings.Contains(err.Error(), c.text) {
			t.Errorf("%+v: err = %v, want %v %q", c.opts, err, c.want, c.text)
		}
	}
	if _, err := e.Embed([]string{long}, toy.EmbedOptions{}); !errors.Is(err, toy.ErrTooLong) {
		t.Errorf("too long: %v", err)
	}
	// Truncated: the first 127 tokens and [SEP].
	ids, _ := e.Encode(long)
	cut := append(slices.Clone(ids[:127]), 102)
	got, err := e.Embed([]string{long}, toy.EmbedOptions{Truncate: true})
	if err != nil {
		t.Fatal(err)
	}
	want, _ := e.EmbedIDs([][]int32{cut}, toy.EmbedOptions{})
	if !slices.Equal(got[0], want[0]) {
		t.Error("truncation is not the first 127 tokens and [SEP]")
	}
	if _, err := toy.Load(bertPath()); !errors.Is(err, toy.ErrUnknownArch) || !strings.Contains(err.Error(), "LoadEmbedder") {
		t.Errorf("toy.Load of an encoder: %v", err)
	}
}
