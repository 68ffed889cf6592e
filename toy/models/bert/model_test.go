package bert_test

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/toyml/toy/internal/testmodel"
	"github.com/toyml/toy/toy/card"
	"github.com/toyml/toy/toy/gguf"
	"github.com/toyml/toy/toy/models/bert"
	"github.com/toyml/toy/toy/tensor"
)

// specs returns the gate's bert and nomic-bert test models.
func specs(t *testing.T) (bertSpec, nomic testmodel.Spec) {
	t.Helper()
	for _, s := range testmodel.EmbedSpecs() {
		switch s.Name {
		case "bert-q8_0":
			bertSpec = s
		case "nomic-bert-f32":
			nomic = s
		}
	}
	return bertSpec, nomic
}

func write(t *testing.T, s testmodel.Spec) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), s.File())
	if _, err := testmodel.Write(s, path); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestLoad(t *testing.T) {
	b, n := specs(t)
	for _, c := range []struct {
		spec testmodel.Spec
		want bert.Config
	}{
		{b, bert.Config{Arch: "bert", VocabSize: 30522, ContextLength: 128, Embed: 64, Layers: 2, FFN: 128, Heads: 4, TokenTypes: 2, NormEps: 1e-12, Pooling: bert.PoolCLS}},
		{n, bert.Config{Arch: "nomic-bert", VocabSize: 30522, ContextLength: 128, Embed: 64, Layers: 2, FFN: 128, Heads: 4, TokenTypes: 2, NormEps: 1e-12, Pooling: bert.PoolMean, RopeBase: 1000}},
	} {
		f, err := gguf.Open(write(t, c.spec))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		m, err := bert.Load(f)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(m.Config, c.want) {
			t.Errorf("%s: config %+v, want %+v", c.spec.Name, m.Config, c.want)
		}
		if got := m.Hidden([]int32{101, 7592, 102}).Shape(); !reflect.DeepEqual(got, []int{3, 64}) {
			t.Errorf("%s: Hidden shape %v", c.spec.Name, got)
		}
	}
}

// Every token sees every token: changing the last token changes the first
// token's state; with a causal mask (what llama.cpp assumes for a file
// without attention.causal) it would not.
func TestBidirectional(t *testing.T) {
	cfg := bert.Config{Arch: "bert", VocabSize: 16, ContextLength: 8, Embed: 16, Layers: 1, FFN: 32, Heads: 2, NormEps: 1e-12, Pooling: bert.PoolCLS}
	first := func(c bert.Config, last int32) []float32 {
		return bert.NewRandom(c, 3).Vector([]int32{1, 5, last})
	}
	if a, b := first(cfg, 6), first(cfg, 7); reflect.DeepEqual(a, b) {
		t.Error("bidirectional: the [CLS] state does not depend on the last token")
	}
	cfg.Causal = true
	if a, b := first(cfg, 6), first(cfg, 7); !reflect.DeepEqual(a, b) {
		t.Error("causal: the [CLS] state depends on a later token")
	}
}

// Pool by hand on h = [[1, 2], [3, 4], [5, 9]]: mean (3, 5), CLS (1, 2),
// last (5, 9).
func TestPoolByHand(t *testing.T) {
	h := tensor.FromFloat32([]float32{1, 2, 3, 4, 5, 9}, 3, 2)
	for _, c := range []struct {
		p    bert.Pooling
		want []float32
	}{{bert.PoolMean, []float32{3, 5}}, {bert.PoolCLS, []float32{1, 2}}, {bert.PoolLast, []float32{5, 9}}} {
		if got := bert.Pool(h, c.p); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: %v, want %v", c.p, got, c.want)
		}
	}
	for _, name := range []string{"none", "mean", "cls", "last", "rank"} {
		if p, err := bert.ParsePooling(name); err != nil || p.String() != name {
			t.Errorf("ParsePooling(%q) = %v, %v", name, p, err)
		}
	}
	if _, err := bert.ParsePooling("max"); err == nil {
		t.Error("ParsePooling(max): no error")
	}
}

// Metadata that disagrees with the tensors, or that toy cannot run, is an
// error at load that names the problem.
func TestLyingMetadata(t *testing.T) {
	b, n := specs(t)
	for _, c := range []struct {
		spec testmodel.Spec
		edit func(w *gguf.Writer)
		want string
	}{
		{b, func(w *gguf.Writer) { w.SetUint32("bert.embedding_length", 32) }, "token_embd.weight has shape [30522 64], want [30522 32]"},
		{b, func(w *gguf.Writer) { w.SetUint32("bert.context_length", 512) }, "position_embd.weight has shape [128 64], want [512 64]"},
		{b, func(w *gguf.Writer) { w.SetUint32("bert.attention.head_count", 5) }, "5 heads for width 64"},
		{b, func(w *gguf.Writer) { w.SetUint32("bert.pooling_type", 9) }, "pooling type 9"},
		{b, func(w *gguf.Writer) { w.SetUint32("bert.feed_forward_length", 256) }, "ffn_up.weight has shape [128 64], want [256 64]"},
		{n, func(w *gguf.Writer) { w.SetUint32("nomic-bert.moe_every_n_layers", 2) }, "mixture of experts"},
		{n, func(w *gguf.Writer) { w.SetUint32("nomic-bert.rope.dimension_count", 8) }, "RoPE on part of each head"},
	} {
		_, err := bert.Load(testmodel.Edited(t, c.spec, c.edit))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want it to mention %q", c.spec.Name, err, c.want)
		}
	}
}

// The card round trip for both architectures: describe → parse → the same
// Config as the loader reads → a model built from it renders the same card
// → Go code that parses.
func TestCardRoundTrip(t *testing.T) {
	b, n := specs(t)
	for _, s := range []testmodel.Spec{b, n} {
		path := write(t, s)
		c, err := card.Describe(path)
		if err != nil {
			t.Fatal(err)
		}
		text := c.Render()
		cfg, err := card.Parse(text)
		if err != nil {
			t.Fatalf("%v\n%s", err, text)
		}
		f, err := gguf.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		m, err := bert.Load(f)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(cfg, m.Config) {
			t.Fatalf("%s: parsed config %+v, loader's %+v", s.Name, cfg, m.Config)
		}
		// A model made by New has no weights: its card lists no parameters;
		// with the file's copied in it is the file's.
		built, loaded := bert.New(cfg.(bert.Config)).Card(), m.Card()
		if len(built.Params) != 0 || built.ParamCount != 0 {
			t.Errorf("%s: a model without weights lists %d parameters, %d in all", s.Name, len(built.Params), built.ParamCount)
		}
		built.Name, built.Quant, built.Params, built.ParamCount, loaded.Name = c.Name, c.Quant, c.Params, c.ParamCount, c.Name
		if got := built.Render(); got != text {
			t.Errorf("%s: card of the built model differs:\n%s\nwant\n%s", s.Name, got, text)
		}
		if got := loaded.Render(); got != text {
			t.Errorf("%s: card of the loaded model differs:\n%s\nwant\n%s", s.Name, got, text)
		}
		var held int64
		for _, w := range m.Weights() {
			held += int64(w.T.Len())
		}
		if c.ParamCount != held || c.Quant != s.DType.String() {
			t.Errorf("%s: card counts %d parameters, the model holds %d; quantization %q", s.Name, c.ParamCount, held, c.Quant)
		}
		code, err := card.Code(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := parser.ParseFile(token.NewFileSet(), "config.go", code, 0); err != nil || !strings.Contains(code, "bert.Config{") {
			t.Fatalf("%v\n%s", err, code)
		}
	}
}
