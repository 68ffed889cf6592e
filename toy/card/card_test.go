package card_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/toyml/toy/internal/testmodel"
	"github.com/toyml/toy/toy"
	"github.com/toyml/toy/toy/card"
	"github.com/toyml/toy/toy/gguf"
	"github.com/toyml/toy/toy/models/cohere"
	"github.com/toyml/toy/toy/models/deepseek2"
	"github.com/toyml/toy/toy/models/ernie"
	"github.com/toyml/toy/toy/models/gemma"
	"github.com/toyml/toy/toy/models/glm4"
	"github.com/toyml/toy/toy/models/gpt2"
	"github.com/toyml/toy/toy/models/lfm2"
	"github.com/toyml/toy/toy/models/llama"
	"github.com/toyml/toy/toy/models/llama4"
	"github.com/toyml/toy/toy/models/olmo2"
	"github.com/toyml/toy/toy/models/olmoe"
	"github.com/toyml/toy/toy/models/phi2"
	"github.com/toyml/toy/toy/models/phi3"
	"github.com/toyml/toy/toy/models/qwen35"
	"github.com/toyml/toy/toy/models/starcoder2"
	"github.com/toyml/toy/toy/nn"
	"github.com/toyml/toy/toy/tensor"
)

func writeModel(t *testing.T, s testmodel.Spec) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), s.File())
	if _, err := testmodel.Write(s, path); err != nil {
		t.Fatal(err)
	}
	return path
}

func spec(name, arch string, dt tensor.DType, tied bool) testmodel.Spec {
	return testmodel.Spec{Name: name, Arch: arch, DType: dt, Vocab: "none", VocabSize: 320, Embed: 64,
		Layers: 2, FFN: 96, Heads: 4, KVHeads: 2, Context: 128, Tied: tied, Seed: 1}
}

// The round trip, for every architecture: describe → parse → the same Config
// as the loader reads → a model built from it renders the same card.
func TestRoundTrip(t *testing.T) {
	g2 := spec("gemma2-q8", "gemma2", tensor.Q8_0, true)
	g2.HeadDim, g2.Window, g2.AttnSoftCap, g2.FinalSoftCap = 32, 7, 50, 30
	g3 := spec("gemma3", "gemma3", tensor.F32, true)
	g3.HeadDim, g3.Layers, g3.Window, g3.RopeScaling, g3.RopeScaleFactor = 32, 7, 9, "linear", 8
	g1 := spec("gemma", "gemma", tensor.F32, true)
	mix := spec("mixtral", "llama", tensor.Q8_0, false)
	mix.Experts, mix.ExpertsUsed = 4, 2
	q3moe := spec("qwen3moe", "qwen3moe", tensor.F32, false)
	q3moe.Experts, q3moe.ExpertsUsed, q3moe.HeadDim = 8, 3, 32
	q2moe := spec("qwen2moe", "qwen2moe", tensor.Q8_0, false)
	q2moe.Experts, q2moe.ExpertsUsed, q2moe.SharedFFN = 8, 2, 64
	yarn := spec("qwen2-yarn", "qwen2", tensor.F32, true)
	yarn.RopeScaling, yarn.RopeScaleFactor, yarn.RopeOrigContext = "yarn", 4, 64
	linear := spec("llama-linear", "llama", tensor.F32, false)
	linear.RopeScaling, linear.RopeScaleFactor = "linear", 2
	olmo3 := spec("olmo3", "olmo2", tensor.F32, false)
	olmo3.Layers, olmo3.Window, olmo3.RopeScaling, olmo3.RopeScaleFactor, olmo3.RopeOrigContext = 4, 5, "yarn", 4, 16
	smollm3 := spec("smollm3", "smollm3", tensor.F32, true)
	smollm3.Layers = 4
	gmoe := spec("granitemoe", "granitemoe", tensor.F32, true)
	gmoe.Experts, gmoe.ExpertsUsed = 4, 2
	// The gate models of the families with more to their shapes.
	gates := map[string]testmodel.Spec{}
	for _, s := range testmodel.Specs() {
		gates[s.Name] = s
	}
	// The header's parameter count includes a prediction layer's tensors,
	// which the model neither holds nor describes: the gate's trunk alone.
	glm4moe := gates["glm4moe-f32"]
	g4 := *glm4moe.Glm4
	glm4moe.Layers, g4.MTPLayers, glm4moe.Glm4 = glm4moe.Layers-g4.MTPLayers, 0, &g4
	for _, s := range []testmodel.Spec{
		gates["olmoe-q8_0"], gates["phi2-f32"], gates["phi2-q8_0"], gates["phi3-long-f32"], gates["phi4-q8_0"],
		gates["deepseek2-f32"], gates["deepseek2-lite-q8_0"], gates["deepseek2-v3-f32"],
		gates["command-r-q8_0"], gates["command-r-plus-f32"], gates["cohere2-f32"], gates["mistral3-f32"], gates["mistral3-temp-f32"],
		gates["llama4-f32"], gates["llama4-q8_0"], gates["lfm2-f32"], gates["lfm2-swa-f32"], gates["lfm2moe-f32"], gates["qwen35-f32"], gates["qwen35-q8_0"], gates["qwen35moe-f32"], gates["qwen3next-f32"], gates["qwen3next-q8_0"],
		gates["glm4-f32"], glm4moe, gates["glm4moe-q8_0"],
		gates["ernie4_5-f32"], gates["ernie4_5-moe-f32"], gates["ernie4_5-moe-q8_0"],
		g2, g3, g1, yarn, linear, mix, q3moe, q2moe, gmoe,
		spec("granite", "granite", tensor.F32, true),
		smollm3,
		spec("starcoder2", "starcoder2", tensor.Q8_0, false),
		spec("olmo2", "olmo2", tensor.F32, false), olmo3,
		spec("llama-f32", "llama", tensor.F32, false),
		spec("llama-q8", "llama", tensor.Q8_0, true),
		spec("qwen2-f16", "qwen2", tensor.F16, true),
		spec("gpt2-f32", "gpt2", tensor.F32, true),
		spec("gpt2-q8-untied", "gpt2", tensor.Q8_0, false),
	} {
		t.Run(s.Name, func(t *testing.T) {
			path := writeModel(t, s)
			c, err := card.Describe(path)
			if err != nil {
				t.Fatal(err)
			}
			text := c.Render()
			cfg, err := card.Parse(text)
			if err != nil {
				t.Fatalf("%v\n%s", err, text)
			}
			m, err := toy.Load(path)
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			var loaded any
			var built, fromFile *card.Card
			switch net := m.Net.(type) {
			case *llama.Model:
				loaded, built, fromFile = net.Config, llama.New(cfg.(llama.Config)).Card(), net.Card()
			case *gpt2.Model:
				loaded, built, fromFile = net.Config, gpt2.New(cfg.(gpt2.Config)).Card(), net.Card()
			case *gemma.Model:
				loaded, built, fromFile = net.Config, gemma.New(cfg.(gemma.Config)).Card(), net.Card()
			case *cohere.Model:
				loaded, built, fromFile = net.Config, cohere.New(cfg.(cohere.Config)).Card(), net.Card()
			case *olmoe.Model:
				loaded, built, fromFile = net.Config, olmoe.New(cfg.(olmoe.Config)).Card(), net.Card()
			case *phi2.Model:
				loaded, built, fromFile = net.Config, phi2.New(cfg.(phi2.Config)).Card(), net.Card()
			case *phi3.Model:
				loaded, built, fromFile = net.Config, phi3.New(cfg.(phi3.Config)).Card(), net.Card()
			case *deepseek2.Model:
				loaded, built, fromFile = net.Config, deepseek2.New(cfg.(deepseek2.Config)).Card(), net.Card()
			case *olmo2.Model:
				loaded, built, fromFile = net.Config, olmo2.New(cfg.(olmo2.Config)).Card(), net.Card()
			case *starcoder2.Model:
				loaded, built, fromFile = net.Config, starcoder2.New(cfg.(starcoder2.Config)).Card(), net.Card()
			case *llama4.Model:
				loaded, built, fromFile = net.Config, llama4.New(cfg.(llama4.Config)).Card(), net.Card()
			case *lfm2.Model:
				loaded, built, fromFile = net.Config, lfm2.New(cfg.(lfm2.Config)).Card(), net.Card()
			case *qwen35.Model:
				loaded, built, fromFile = net.Config, qwen35.New(cfg.(qwen35.Config)).Card(), net.Card()
			case *glm4.Model:
				loaded, built, fromFile = net.Config, glm4.New(cfg.(glm4.Config)).Card(), net.Card()
			case *ernie.Model:
				loaded, built, fromFile = net.Config, ernie.New(cfg.(ernie.Config)).Card(), net.Card()
			}
			if !reflect.DeepEqual(cfg, loaded) {
				t.Fatalf("parsed config %+v, loader's %+v", cfg, loaded)
			}
			// A model made by New has no weights: its card has the file's
			// hyperparameters and steps, and lists no parameters; with the
			// file's name, parameters and count copied in it is the file's.
			if len(built.Params) != 0 || built.ParamCount != 0 {
				t.Errorf("a model without weights lists %d parameters, %d in all", len(built.Params), built.ParamCount)
			}
			built.Name, built.Quant, built.Params, built.ParamCount = c.Name, c.Quant, c.Params, c.ParamCount
			fromFile.Name = c.Name
			if got := built.Render(); got != text {
				t.Errorf("card of the built model differs:\n%s\nwant\n%s", got, text)
			}
			if got := fromFile.Render(); got != text {
				t.Errorf("card of the loaded model differs:\n%s\nwant\n%s", got, text)
			}
			var n int64
			for _, w := range m.Net.(interface{ Weights() []nn.Named }).Weights() {
				n += int64(w.T.Len())
			}
			if c.ParamCount != n {
				t.Errorf("the card counts %d parameters, the model holds %d", c.ParamCount, n)
			}
			if !strings.Contains(text, "quantization "+map[tensor.DType]string{tensor.F32: "F32", tensor.F16: "F16", tensor.Q8_0: "Q8_0"}[s.DType]) {
				t.Errorf("size line missing:\n%s", text)
			}
			// The parsed card re-renders its header lines identically.
			pc, err := card.ParseCard(text)
			if err != nil || pc.Arch != c.Arch || pc.Name != c.Name || pc.ParamCount != c.ParamCount || pc.Quant != c.Quant || !reflect.DeepEqual(pc.Hyper, c.Hyper) {
				t.Errorf("ParseCard: %v %+v", err, pc)
			}
			code, err := card.Code(cfg)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := parser.ParseFile(token.NewFileSet(), "config.go", code, 0); err != nil {
				t.Fatalf("%v\n%s", err, code)
			}
			if !strings.Contains(code, "VocabSize:") || !strings.Contains(code, `"github.com/toyml/toy/toy/models/`) {
				t.Errorf("code:\n%s", code)
			}
		})
	}
}

// A worked example small enough to count by hand: the card of a llama model
// counts the weights it holds, V·D (embedding) + L·(2D + D·q + 2·D·kv + q·D +
// 3·D·F) + D + V·D.
func TestLlamaParamCount(t *testing.T) {
	c := llama.Config{Arch: "llama", VocabSize: 10, ContextLength: 8, Embed: 4, FFN: 8, Layers: 1, Heads: 2, KVHeads: 1,
		HeadDim: 2, RopeDim: 2, RopeBase: 10000, NormEps: 1e-5}
	m := llama.NewRandom(c, 1)
	var n int64
	for _, w := range m.Weights() {
		n += int64(w.T.Len())
	}
	// q = 4, kv = 2: 40 + (8 + 16 + 16 + 16 + 96) + 4 + 40 = 236
	if got := m.Card().ParamCount; got != 236 || n != 236 {
		t.Fatalf("the card counts %d parameters, the weights hold %d; want 236", got, n)
	}
}

// patchType rewrites the type id of the named tensor in a GGUF file's header.
func patchType(t *testing.T, path, name string, id uint32) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	key := append(binary.LittleEndian.AppendUint64(nil, uint64(len(name))), name...)
	i := bytes.Index(b, key)
	if i < 0 {
		t.Fatalf("no tensor %s", name)
	}
	i += len(key)
	nd := int(binary.LittleEndian.Uint32(b[i:]))
	binary.LittleEndian.PutUint32(b[i+4+8*nd:], id)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// Files with quantizations toy cannot compute with (the IQ types) are still
// described.
func TestDescribeKQuant(t *testing.T) {
	s := spec("llama-k", "llama", tensor.F32, true)
	s.FFN = 256 // ffn_down rows of 256: one IQ2_XS block
	path := writeModel(t, s)
	patchType(t, path, "blk.0.ffn_down.weight", 17) // IQ2_XS
	if _, err := toy.Load(path); !errors.Is(err, gguf.ErrUnsupportedType) {
		t.Errorf("loading an IQ2_XS model: %v, want ErrUnsupportedType", err)
	}
	c, err := card.Describe(path)
	if err != nil {
		t.Fatal(err)
	}
	text := c.Render()
	if !strings.Contains(text, "IQ2_XS") || !strings.Contains(text, "[llama]") {
		t.Errorf("no IQ2_XS note:\n%s", text)
	}
	h, _ := gguf.Open(path)
	defer h.Close()
	ti, _ := h.Info("blk.0.ffn_down.weight")
	if ti.Type.String() != "IQ2_XS" || ti.Size != 64*256/256*74 {
		t.Errorf("IQ2_XS tensor %+v", ti)
	}
}

func TestBadHeaders(t *testing.T) {
	path := writeModel(t, spec("llama-b", "llama", tensor.F32, true))
	good, _ := os.ReadFile(path)
	dir := t.TempDir()
	for name, c := range map[string]struct {
		b    []byte
		want error
	}{
		"empty":     {nil, gguf.ErrTruncated},
		"text":      {[]byte("hello world"), gguf.ErrFormat},
		"cut":       {good[:200], gguf.ErrTruncated},
		"version 9": {append([]byte("GGUF\x09\x00\x00\x00"), make([]byte, 16)...), gguf.ErrFormat},
	} {
		p := filepath.Join(dir, name)
		os.WriteFile(p, c.b, 0o644)
		if _, err := card.Describe(p); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", name, err, c.want)
		}
	}
	w := gguf.NewWriter()
	w.SetString("general.architecture", "mamba")
	p := filepath.Join(dir, "mamba.gguf")
	w.WriteFile(p)
	if _, err := card.Describe(p); !errors.Is(err, card.ErrUnknownArch) {
		t.Errorf("mamba: %v", err)
	}
	for _, text := range []string{"", "Algorithm: no arch\n", "Algorithm: P ← DTransformer(x | θ)  [llama]\nHyperparameters:\n  N_V = x\n"} {
		if _, err := card.Parse(text); !errors.Is(err, card.ErrSyntax) {
			t.Errorf("Parse(%q): %v", text, err)
		}
	}
}

func ExampleCard_Render() {
	c := llama.Config{Arch: "llama", VocabSize: 32000, ContextLength: 2048, Embed: 2048, Layers: 22, FFN: 5632,
		Heads: 32, KVHeads: 4, HeadDim: 64, RopeDim: 64, RopeBase: 10000, NormEps: 1e-5} // TinyLlama 1.1B
	text := llama.New(c).Card().Render() // a model without weights: no parameters listed
	back, _ := card.Parse(text)
	fmt.Println(strings.Split(text, "\n")[0])
	fmt.Println(back.(llama.Config) == c)
	// Output:
	// Algorithm: P ← DTransformer(x | θ)  [llama]
	// true
}
