package nn

import (
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/toyml/toy/toy/tensor"
)

type shapeConfig struct{ VocabSize, Embed, FFN, Experts, ExpertFFN, Wide int }

type shapeModel struct {
	Config shapeConfig `gguf:"-"`
	Embed  *Embedding  `gguf:"token_embd" shape:"VocabSize, Embed"`
	Blocks []Block     `gguf:"blk"`
	Wide   *SwiGLU     `gguf:"wide,optional" dims:"FFN=Wide*2"`
	Head   *Linear     `gguf:"output" shape:"VocabSize, Embed"`
}

func newShapeModel(c shapeConfig) *shapeModel {
	in := NewInit(1)
	norm := func() Layer { return &RMSNorm{W: in.Fill(1, c.Embed)} }
	m := &shapeModel{Config: c, Embed: &Embedding{W: in.Normal(1, c.VocabSize, c.Embed)}, Head: in.Linear(c.VocabSize, c.Embed, 1, true)}
	for range 2 {
		m.Blocks = append(m.Blocks, Block{
			AttnNorm: norm(), FFNNorm: norm(),
			Attn: Attention{Heads: 4, KVHeads: 2, HeadDim: 8, Q: in.Linear(32, c.Embed, 1, false), K: in.Linear(16, c.Embed, 1, false),
				V: in.Linear(16, c.Embed, 1, false), O: in.Linear(c.Embed, 32, 1, false)},
			FFN: &SwiGLU{Gate: in.Linear(c.FFN, c.Embed, 1, false), Up: in.Linear(c.FFN, c.Embed, 1, false), Down: in.Linear(c.Embed, c.FFN, 1, false)},
		})
	}
	return m
}

func TestCheckShapes(t *testing.T) {
	c := shapeConfig{VocabSize: 10, Embed: 12, FFN: 20, Wide: 3}
	if err := CheckShapes(newShapeModel(c), c); err != nil {
		t.Fatal(err)
	}
	in := NewInit(2)
	for _, tc := range []struct {
		name   string
		break_ func(m *shapeModel)
		want   string
	}{
		{"embedding", func(m *shapeModel) { m.Embed.W = in.Normal(1, 11, 12) }, "tensor token_embd.weight has shape [11 12], want [10 12] (VocabSize, Embed)"},
		{"bias", func(m *shapeModel) { m.Head.B = in.Fill(0, 9) }, "tensor output.bias has shape [9], want [10] (VocabSize)"},
		{"attention in block 1", func(m *shapeModel) { m.Blocks[1].Attn.K = in.Linear(32, 12, 1, false) }, "tensor blk.1.attn_k.weight has shape [32 12], want [16 12] (KVHeads*HeadDim, Embed)"},
		{"norm", func(m *shapeModel) { m.Blocks[0].FFNNorm = &RMSNorm{W: in.Fill(1, 13)} }, "tensor blk.0.ffn_norm.weight has shape [13]"},
		{"ffn", func(m *shapeModel) { m.Blocks[0].FFN.(*SwiGLU).Down = in.Linear(12, 21, 1, false) }, "tensor blk.0.ffn_down.weight has shape [12 21], want [12 20] (Embed, FFN)"},
		{"missing", func(m *shapeModel) { m.Head = nil }, "tensor output is missing"},
		{"renamed", func(m *shapeModel) {
			m.Wide = &SwiGLU{Gate: in.Linear(6, 12, 1, false), Up: in.Linear(6, 12, 1, false), Down: in.Linear(12, 5, 1, false)}
		}, "tensor wide.ffn_down.weight has shape [12 5], want [12 6] (Embed, FFN)"},
		{"vector type", func(m *shapeModel) {
			h, err := tensor.FromBytes(tensor.F16, make([]byte, 24), 12)
			if err != nil {
				t.Fatal(err)
			}
			m.Blocks[0].AttnNorm = &RMSNorm{W: h}
		}, "must be F32"},
	} {
		m := newShapeModel(c)
		tc.break_(m)
		err := CheckShapes(m, c)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want an error containing %q", tc.name, err, tc.want)
		}
	}
	// The renamed block, whole, passes.
	m := newShapeModel(c)
	m.Wide = &SwiGLU{Gate: in.Linear(6, 12, 1, false), Up: in.Linear(6, 12, 1, false), Down: in.Linear(12, 6, 1, false)}
	if err := CheckShapes(m, c); err != nil {
		t.Error(err)
	}
	// Collect reads the block slice under blk.N.
	names := map[string]bool{}
	for _, w := range Collect("", m) {
		names[w.Name] = true
	}
	for _, n := range []string{"token_embd.weight", "blk.0.attn_q.weight", "blk.1.ffn_down.weight", "wide.ffn_gate.weight", "output.bias"} {
		if !names[n] {
			t.Errorf("Collect lacks %s", n)
		}
	}
}

func TestShapeExpressions(t *testing.T) {
	s := &scope{v: reflect.ValueOf(struct{ A, B int }{6, 4})}
	for e, want := range map[string]int{"A": 6, "A*B": 24, "(A+B)*2": 20, "A/B": 1, "A - B - 1": 1, "2*A+B/2": 14} {
		if got, err := eval(e, s); err != nil || got != want {
			t.Errorf("%s = %d, %v; want %d", e, got, err, want)
		}
	}
	for _, e := range []string{"C", "A/0", "A+", "(A", "A B"} {
		if _, err := eval(e, s); err == nil {
			t.Errorf("%s: no error", e)
		}
	}
}

func TestDeclaredWeightsRenames(t *testing.T) {
	c := shapeConfig{VocabSize: 10, Embed: 12, FFN: 20, Wide: 3}
	m := newShapeModel(c)
	m.Wide = &SwiGLU{}
	got := map[string]string{}
	for _, d := range DeclaredWeights(m, c) {
		got[d.Name] = strings.Join(d.Exprs, " | ")
	}
	for name, want := range map[string]string{
		"wide.ffn_down.weight": "Embed, Wide*2", "wide.ffn_gate.bias": "Wide*2", "blk.1.attn_q.weight": "Heads*HeadDim, Embed | 2*Heads*HeadDim, Embed",
		"output.weight": "VocabSize, Embed", "blk.0.ffn_norm.weight": "Embed",
	} {
		if got[name] != want {
			t.Errorf("%s declared %q, want %q", name, got[name], want)
		}
	}
}

// Randomize draws exactly the weights the model declares and its
// constructor built, with the declared shapes, in field order, and leaves
// set weights and unbuilt optional layers alone.
func TestRandomize(t *testing.T) {
	c := shapeConfig{VocabSize: 10, Embed: 12, FFN: 20, Wide: 3}
	m := &shapeModel{Config: c}
	for range 2 {
		m.Blocks = append(m.Blocks, Block{AttnNorm: &RMSNorm{}, FFN: &SwiGLU{},
			Attn: Attention{Heads: 4, KVHeads: 2, HeadDim: 8, Q: &Linear{}, K: &Linear{}, V: &Linear{}}})
	}
	keep := NewInit(9).Fill(7, c.Embed)
	m.Blocks[1].AttnNorm.(*RMSNorm).W = keep
	NewInit(1).Randomize(m, c, 0.02, 0.001)
	if err := CheckShapes(m, c); err != nil {
		t.Fatal(err)
	}
	if m.Wide != nil || m.Blocks[0].FFNNorm != nil || m.Blocks[0].Attn.QKV != nil {
		t.Fatal("Randomize built an optional layer the constructor did not")
	}
	if m.Blocks[1].AttnNorm.(*RMSNorm).W != keep || m.Blocks[0].AttnNorm.(*RMSNorm).W.Float32s()[0] != 1 {
		t.Fatal("norms: a set weight was replaced, or a fresh one is not 1")
	}
	// The residual projections (init:"resid") draw with the smaller std.
	std := func(x *tensor.Tensor) float64 {
		var s float64
		for _, v := range x.Float32s() {
			s += float64(v) * float64(v)
		}
		return math.Sqrt(s / float64(len(x.Float32s())))
	}
	if o, q := std(m.Blocks[0].Attn.O.W), std(m.Blocks[0].Attn.Q.W); !(o < 0.002 && q > 0.01) {
		t.Fatalf("std of attn_output %g, of attn_q %g", o, q)
	}
	// Field order is draw order: the same seed gives the same weights, and
	// the first draw is the embedding's.
	m2 := &shapeModel{Config: c, Blocks: []Block{{FFN: &SwiGLU{}, Attn: Attention{Heads: 4, KVHeads: 2, HeadDim: 8, Q: &Linear{}, K: &Linear{}, V: &Linear{}}}}}
	NewInit(1).Randomize(m2, c, 0.02, 0.001)
	if !reflect.DeepEqual(m2.Embed.W.Float32s(), m.Embed.W.Float32s()) || !reflect.DeepEqual(NewInit(1).Normal(0.02, c.VocabSize, c.Embed).Float32s(), m.Embed.W.Float32s()) {
		t.Fatal("the embedding is not the first draw")
	}
}

// A gguf-names tag on an embedded frame renames the tensors its fields
// read, for every walk.
func TestFrameNames(t *testing.T) {
	type Frame struct {
		Norm *RMSNorm `gguf:"output_norm" shape:"Embed"`
	}
	type model struct {
		Frame  `gguf-names:"output_norm=token_embd_norm"`
		Config shapeConfig `gguf:"-"`
	}
	c := shapeConfig{Embed: 4}
	m := &model{Config: c}
	NewInit(1).Randomize(m, c, 0.02, 0.02)
	if ws := Collect("", m); len(ws) != 1 || ws[0].Name != "token_embd_norm.weight" {
		t.Fatalf("Collect: %+v", ws)
	}
	if d := DeclaredWeights(m, c); len(d) != 1 || d[0].Name != "token_embd_norm.weight" {
		t.Fatalf("DeclaredWeights: %+v", d)
	}
	m.Norm.W = NewInit(1).Fill(1, 5)
	if err := CheckShapes(m, c); err == nil || !strings.Contains(err.Error(), "token_embd_norm.weight") {
		t.Fatalf("CheckShapes: %v", err)
	}
}
