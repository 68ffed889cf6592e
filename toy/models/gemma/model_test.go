package gemma

import (
	"strings"
	"testing"

	"github.com/toyml/toy/internal/testmodel"
	"github.com/toyml/toy/toy/gguf"
	"github.com/toyml/toy/toy/nn"
	"github.com/toyml/toy/toy/tensor"
)

var tiny = testmodel.Spec{Name: "m", Arch: "gemma2", DType: tensor.Q8_0, Vocab: "none", VocabSize: 300,
	Embed: 64, Layers: 3, FFN: 96, Heads: 4, KVHeads: 2, HeadDim: 32, Context: 64, Tied: true, Seed: 5,
	Window: 6, AttnSoftCap: 20, FinalSoftCap: 15}

// edited writes the tiny gemma2 model, applies edit to its metadata, and
// returns the parsed result.
func edited(t *testing.T, edit func(w *gguf.Writer)) *gguf.File { return editedSpec(t, tiny, edit) }

func editedSpec(t *testing.T, spec testmodel.Spec, edit func(w *gguf.Writer)) *gguf.File {
	return testmodel.Edited(t, spec, edit)
}

func TestLoad(t *testing.T) {
	m, err := Load(edited(t, func(*gguf.Writer) {}))
	if err != nil {
		t.Fatal(err)
	}
	c := m.Config
	if c.Window != 6 || c.AttnSoftcap != 20 || c.FinalSoftcap != 15 || c.HeadDim != 32 || !c.TiedOutput || c.QueryScale != 1/float32(5.656854249492381) {
		t.Fatalf("config %+v", c)
	}
	window := func(i int) int { return m.Blocks[i].(*nn.Block).Attn.Options.Window }
	if window(0) != 6 || window(1) != 0 || window(2) != 6 {
		t.Errorf("windows %d %d %d, want the even layers sliding", window(0), window(1), window(2))
	}
	var n int64
	for _, w := range m.Weights() {
		n += int64(w.T.Len())
	}
	if k := m.Card(); k.ParamCount != n {
		t.Errorf("the card counts %d parameters, the weights hold %d", k.ParamCount, n)
	}
}

// Gemma 3: five local layers to a global one; the local ones turn with base
// 10000 and no scaling, the global one with the file's base and factor.
func TestLoadGemma3(t *testing.T) {
	s := tiny
	s.Arch, s.Layers, s.Window, s.AttnSoftCap, s.FinalSoftCap, s.RopeScaling, s.RopeScaleFactor = "gemma3", 7, 9, 0, 0, "linear", 8
	m, err := Load(editedSpec(t, s, func(*gguf.Writer) {}))
	if err != nil {
		t.Fatal(err)
	}
	for i, b := range m.Blocks {
		b := b.(*nn.Block)
		local := i != 5
		r := b.Attn.RoPE
		if (b.Attn.Options.Window == 9) != local || (r.Base == 10000) != local || (r.Scaling.FreqScale == 0.125) == local || b.Attn.Norms.Q == nil || b.AttnPostNorm == nil {
			t.Errorf("layer %d: window %d, RoPE base %g, scaling %+v, q norm %v", i, b.Attn.Options.Window, r.Base, r.Scaling, b.Attn.Norms.Q != nil)
		}
	}
	if c := m.Config; c.AttnSoftcap != 0 || c.FinalSoftcap != 0 || c.RopeBase != 1e6 {
		t.Errorf("config %+v", c)
	}
}

// Files without the optional keys get Gemma 2's values, as in llama.cpp.
func TestDefaults(t *testing.T) {
	s := tiny
	s.Window, s.AttnSoftCap, s.FinalSoftCap = 0, 0, 0 // keys left out
	f := editedSpec(t, s, func(w *gguf.Writer) {})
	c, err := ConfigFromGGUF(f)
	if err != nil {
		t.Fatal(err)
	}
	if c.Window != 4096 || c.AttnSoftcap != 50 || c.FinalSoftcap != 30 {
		t.Errorf("defaults: window %d, soft caps %g, %g", c.Window, c.AttnSoftcap, c.FinalSoftcap)
	}
}

// Metadata that disagrees with the tensors is an error at load that names
// the problem.
func TestLyingMetadata(t *testing.T) {
	for _, c := range []struct {
		name string
		edit func(w *gguf.Writer)
		want string
	}{
		{"head width", func(w *gguf.Writer) {
			w.SetUint32("gemma2.attention.key_length", 16)
			w.SetUint32("gemma2.rope.dimension_count", 16)
		}, "attn_k.weight has shape [64 64], want [32 64]"}, // attn_q [128 64] passes as a gated query
		{"layers", func(w *gguf.Writer) { w.SetUint32("gemma2.block_count", 4) }, "blk.3."},
		{"partial rope", func(w *gguf.Writer) { w.SetUint32("gemma2.rope.dimension_count", 16) }, "RoPE over 16 features of heads 32 wide"},
		{"soft cap", func(w *gguf.Writer) { w.SetFloat32("gemma2.attn_logit_softcapping", -1) }, "soft cap (0: none) (AttnSoftcap) -1 is outside"},
	} {
		_, err := Load(edited(t, c.edit))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want it to mention %q", c.name, err, c.want)
		}
	}
}
