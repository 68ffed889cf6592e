package models_test

import (
	"bytes"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/toyml/toy/toy/gguf"
	"github.com/toyml/toy/toy/models"
	_ "github.com/toyml/toy/toy/models/all"
	"github.com/toyml/toy/toy/nn"
	"github.com/toyml/toy/toy/tensor"
)

// tiny is the smallest models.Model: one weight, no forward pass.
type tiny struct{ w *tensor.Tensor }

func (tiny) Hidden([]int32, *nn.Cache) *tensor.Tensor { panic("no forward pass") }
func (tiny) Logits(*tensor.Tensor) *tensor.Tensor     { panic("no forward pass") }
func (tiny) NewCache(int) *nn.Cache                   { return nil }
func (tiny) VocabSize() int                           { return 4 }
func (tiny) ContextLength() int                       { return 8 }
func (m tiny) Weights() []nn.Named                    { return []nn.Named{{Name: "w.weight", T: m.w}} }
func (tiny) SetMetadata(w *gguf.Writer)               {}

// header returns a parsed GGUF file whose general.architecture is arch.
func header(t *testing.T, arch string) *gguf.File {
	t.Helper()
	w := gguf.NewWriter()
	w.SetString("general.architecture", arch)
	var b strings.Builder
	if _, err := w.WriteTo(&b); err != nil {
		t.Fatal(err)
	}
	f, err := gguf.Parse([]byte(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// register registers f unless an earlier run of the test (go test -count
// N) did.
func register(f models.Family) {
	if _, err := models.Lookup(f.Arch); err != nil {
		models.Register(f)
	}
}

func mustPanic(t *testing.T, want string, fn func()) {
	t.Helper()
	defer func() {
		p := recover()
		if p == nil || !strings.Contains(p.(string), want) {
			t.Errorf("panic %v, want one saying %q", p, want)
		}
	}()
	fn()
}

func TestRegisterRefusesBadFamilies(t *testing.T) {
	load := func(*gguf.File) (models.Model, error) { return tiny{}, nil }
	mustPanic(t, "empty Arch", func() { models.Register(models.Family{Load: load}) })
	mustPanic(t, "nil Load", func() { models.Register(models.Family{Arch: "test-nil-load"}) })
	mustPanic(t, `twice for architecture "llama"`, func() { models.Register(models.Family{Arch: "llama", Load: load}) })
	mustPanic(t, `twice for architecture "qwen2"`, func() {
		models.Register(models.Family{Arch: "test-alias-clash", Aliases: []string{"qwen2"}, Load: load})
	})
	if _, err := models.Lookup("test-alias-clash"); err == nil {
		t.Error("a refused family was half registered")
	}
}

func TestEveryBuiltInRegistered(t *testing.T) {
	for _, arch := range []string{"llama", "qwen2", "gpt2", "gemma3", "qwen3next", "glm4moe", "ernie4_5-moe", "bert", "vit"} {
		if _, err := models.Lookup(arch); err != nil {
			t.Error(err)
		}
	}
	for _, f := range models.Families() {
		if f.Card == nil && !strings.HasPrefix(f.Arch, "test-") {
			t.Errorf("%s: toy's own families write their own cards", f.Arch)
		}
	}
}

func TestLoadUnknownArchNamesTheRegistered(t *testing.T) {
	_, err := models.Load(header(t, "no-such-arch"))
	if !errors.Is(err, models.ErrUnknownArch) || !strings.Contains(err.Error(), `"no-such-arch"`) || !strings.Contains(err.Error(), "llama") {
		t.Errorf("got %v, want ErrUnknownArch naming the architecture and the registered ones", err)
	}
}

func TestLoadGuardsTheFamily(t *testing.T) {
	register(models.Family{Arch: "test-fails", Load: func(*gguf.File) (models.Model, error) {
		return nil, errors.New("bad weights")
	}})
	register(models.Family{Arch: "test-panics", Load: func(*gguf.File) (models.Model, error) {
		var m map[string]int
		m["x"] = 1 // a nil map: the kind of mistake a new Load makes
		return nil, nil
	}})
	register(models.Family{Arch: "test-nil", Load: func(*gguf.File) (models.Model, error) { return nil, nil }})
	for arch, want := range map[string]string{
		"test-fails":  "test-fails: bad weights",
		"test-panics": "test-panics: Load panicked: assignment to entry in nil map (at ",
		"test-nil":    "test-nil: Load returned no model and no error",
	} {
		_, err := models.Load(header(t, arch))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v, want an error containing %q", arch, err, want)
		}
	}
}

func TestNewFindsTheFamilyByConfigType(t *testing.T) {
	type cfg struct{ N int }
	register(models.Family{Arch: "test-new", Config: cfg{},
		Load: func(*gguf.File) (models.Model, error) { return tiny{}, nil },
		New: func(c any, seed uint64) (models.Model, error) {
			return tiny{tensor.New(c.(cfg).N)}, nil
		}})
	m, err := models.New(cfg{N: 3}, 1)
	if err != nil || m.Weights()[0].T.Len() != 3 {
		t.Fatalf("New: %v, %v", m, err)
	}
	type other struct{}
	if _, err := models.New(other{}, 1); !errors.Is(err, models.ErrUnknownArch) || !strings.Contains(err.Error(), "models_test.other") {
		t.Errorf("New(other{}): %v", err)
	}
}

// CheckRanges refuses a value outside its declared interval, naming the
// family, the meaning and the range, and accepts the ends a closed bracket
// includes.
func TestCheckRanges(t *testing.T) {
	type cfg struct {
		Embed   int     `range:"[1, 1<<20]" card:"d_e, model width"`
		NormEps float32 `range:"(0, 1)"`
		Window  int     `range:"[0, *]"`
	}
	for _, tc := range []struct {
		c    cfg
		want string
	}{
		{cfg{Embed: 1, NormEps: 1e-6}, ""},
		{cfg{Embed: 1 << 20, NormEps: 0.5, Window: 1 << 30}, ""},
		{cfg{Embed: 0, NormEps: 1e-6}, "toy: model width (Embed) 0 is outside [1, 1<<20]"},
		{cfg{Embed: 1<<20 + 1, NormEps: 1e-6}, "outside [1, 1<<20]"},
		{cfg{Embed: 8, NormEps: 0}, "toy: NormEps 0 is outside (0, 1)"},
		{cfg{Embed: 8, NormEps: 1}, "outside (0, 1)"},
		{cfg{Embed: 8, NormEps: float32(math.NaN())}, "NormEps NaN"},
		{cfg{Embed: 8, NormEps: 0.1, Window: -1}, "Window -1 is outside [0, *]"},
	} {
		err := models.CheckRanges("toy", tc.c)
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%+v: %v, want %q", tc.c, err, tc.want)
		}
	}
}

// CheckRanges checks the relations a Config declares after every numeric
// range: a bound that names a field, and a multiple of a number or a field.
func TestCheckRangesRelations(t *testing.T) {
	type cfg struct {
		Embed   int `range:"[1, *]" multiple:"2*Heads"`
		Heads   int `range:"[1, *]" multiple:"KVHeads" card:"H, query heads"`
		KVHeads int `range:"[1, *]"`
		HeadDim int `range:"[1, *]"`
		RopeDim int `range:"[1, HeadDim]" multiple:"2" card:"d_rope, features rotated per head"`
	}
	for _, tc := range []struct {
		c    cfg
		want string
	}{
		{cfg{128, 8, 2, 16, 16}, ""},
		{cfg{128, 8, 8, 16, 2}, ""},
		{cfg{96, 6, 4, 16, 16}, "toy: query heads (Heads) 6 is not a multiple of KVHeads = 4"},
		{cfg{96, 6, 0, 16, 16}, "toy: KVHeads 0 is outside [1, *]"}, // the range first: no division by 0
		{cfg{128, 8, 2, 16, 18}, "toy: features rotated per head (RopeDim) 18 is outside [1, HeadDim], HeadDim = 16"},
		{cfg{128, 8, 2, 16, 0}, "RopeDim) 0 is outside [1, HeadDim]"},
		{cfg{128, 8, 2, 0, 0}, "toy: HeadDim 0 is outside [1, *]"},
		{cfg{128, 8, 2, 16, 7}, "toy: features rotated per head (RopeDim) 7 is not a multiple of 2"},
		{cfg{120, 8, 2, 16, 16}, "toy: Embed 120 is not a multiple of 2*Heads = 16"}, // heads 15 wide
		{cfg{48, 8, 2, 16, 16}, ""},
	} {
		err := models.CheckRanges("toy", tc.c)
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%+v: %v, want %q", tc.c, err, tc.want)
		}
	}
}

// A relation that names no int field, or a multiple on a float, is a
// mistake in the Config's declaration: CheckRanges panics.
func TestCheckRangesBadRelation(t *testing.T) {
	for _, cfg := range []any{
		struct {
			A int `range:"[1, B]"`
		}{1},
		struct {
			A int     `range:"[1, B]"`
			B float32 `range:"[0, *]"`
		}{1, 2},
		struct {
			A int `multiple:"x*B"`
			B int
		}{1, 1},
		struct {
			A float32 `multiple:"2"`
		}{1},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%+v: no panic", cfg)
				}
			}()
			models.CheckRanges("toy", cfg)
		}()
	}
}

// toyHeader returns a file of architecture "toy" with the given metadata
// under "toy." and no tensors.
func toyHeader(t *testing.T, kv map[string]any) *gguf.File {
	t.Helper()
	w := gguf.NewWriter()
	w.SetString("general.architecture", "toy")
	for k, v := range kv {
		switch v := v.(type) {
		case string:
			w.SetString("toy."+k, v)
		case float32:
			w.SetFloat32("toy."+k, v)
		case int:
			w.SetUint32("toy."+k, uint32(v))
		}
	}
	var b bytes.Buffer
	if _, err := w.WriteTo(&b); err != nil {
		t.Fatal(err)
	}
	f, err := gguf.Parse(b.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// The shared readers of the families' hyperparameters: the architecture
// among a family's, RoPE scaling as llama.cpp reads it (a factor of 0 or 1
// is the identity; the type defaults to the architecture's), and RoPE over
// whole heads.
func TestSharedReaders(t *testing.T) {
	f := toyHeader(t, map[string]any{"rope.scaling.factor": float32(4), "rope.dimension_count": 32})
	if a, err := models.ArchIn(f, "fam", []string{"x", "toy"}); a != "toy" || err != nil {
		t.Errorf("ArchIn: %q, %v", a, err)
	}
	if _, err := models.ArchIn(f, "fam", []string{"x"}); err == nil || err.Error() != `fam: architecture "toy" is not one of [x]` {
		t.Errorf("ArchIn of another family: %v", err)
	}
	for _, tc := range []struct {
		kv      map[string]any
		absent  string
		lacking string
	}{
		{map[string]any{"rope.scaling.factor": float32(4)}, "linear", `RoPE scaling "linear" by 4`},
		{map[string]any{"rope.scaling.factor": float32(4)}, "none", ""},
		{map[string]any{"rope.scaling.factor": float32(4), "rope.scaling.type": "yarn"}, "none", `RoPE scaling "yarn" by 4`},
		{map[string]any{"rope.scaling.factor": float32(1), "rope.scaling.type": "yarn"}, "none", ""},
		{map[string]any{"rope.scaling.type": "yarn"}, "none", ""},
	} {
		m := toyHeader(t, tc.kv).Meta("toy")
		if got := strings.Join(models.RoPEScalingLacking(m, tc.absent), "; "); got != tc.lacking {
			t.Errorf("%v (absent: %s): %q, want %q", tc.kv, tc.absent, got, tc.lacking)
		}
	}
	m := f.Meta("toy")
	if err := models.WholeHeadRoPE(m, "fam", 32); err != nil {
		t.Errorf("RoPE over 32 of 32: %v", err)
	}
	if err := models.WholeHeadRoPE(m, "fam", 64); err == nil || !strings.Contains(err.Error(), "fam: RoPE over 32 features of heads 64 wide") {
		t.Errorf("RoPE over 32 of 64: %v", err)
	}
	if err := models.WholeHeadRoPE(toyHeader(t, nil).Meta("toy"), "fam", 64); err != nil {
		t.Errorf("no rope.dimension_count: %v", err)
	}
	if models.HasTensor(f, "token_embd.weight") {
		t.Error("HasTensor: a tensor of a file without tensors")
	}
}
