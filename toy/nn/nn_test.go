package nn

import (
	"bytes"
	"errors"
	"testing"

	"github.com/toyml/toy/toy/gguf"
	"github.com/toyml/toy/toy/tensor"
)

func file(t *testing.T, names ...string) *gguf.File {
	t.Helper()
	w := gguf.NewWriter()
	for _, n := range names {
		if err := w.AddFloat32(n, tensor.F32, []float32{1, 2, 3, 4}, 2, 2); err != nil {
			t.Fatal(err)
		}
	}
	var b bytes.Buffer
	w.WriteTo(&b)
	f, err := gguf.Parse(b.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	return f
}

type layer struct {
	Norm  *RMSNorm `gguf:"attn_norm"`
	Attn  Attention
	FFN   Layer
	Extra *Linear `gguf:"extra,optional"`
}

func TestLoadByTags(t *testing.T) {
	f := file(t, "blk.0.attn_norm.weight", "blk.0.attn_q.weight", "blk.0.attn_q.bias", "blk.0.attn_k.weight",
		"blk.0.attn_v.weight", "blk.0.attn_output.weight", "blk.0.ffn_gate.weight", "blk.0.ffn_up.weight", "blk.0.ffn_down.weight")
	l := layer{Norm: &RMSNorm{Eps: 1e-6}, FFN: &SwiGLU{}}
	if err := Load(f, "blk.0.", &l); err != nil {
		t.Fatal(err)
	}
	if l.Norm.W == nil || l.Norm.Eps != 1e-6 {
		t.Error("norm not filled in place")
	}
	if l.Attn.Q.B == nil || l.Attn.K.B != nil || l.Attn.QKV != nil || l.Extra != nil {
		t.Error("biases or optional fields wrong")
	}
	if l.FFN.(*SwiGLU).Down == nil {
		t.Error("interface field not walked")
	}
	// A required tensor that is missing is an error naming it.
	err := Load(file(t, "blk.0.attn_norm.weight"), "blk.0.", &layer{Norm: &RMSNorm{}, FFN: &SwiGLU{}})
	if !errors.Is(err, gguf.ErrNoTensor) {
		t.Errorf("missing attn_output: %v", err)
	}
}

func TestAttentionCheck(t *testing.T) {
	lin := func(out, in int) *Linear { return &Linear{W: tensor.New(out, in)} }
	a := Attention{QKV: lin(3*8, 8), O: lin(8, 8), Heads: 2, KVHeads: 2, HeadDim: 4}
	if err := a.Check(); err != nil {
		t.Errorf("fused GPT-2 attention: %v", err)
	}
	a.QKV = lin(20, 8)
	if err := a.Check(); err == nil {
		t.Error("fused QKV of the wrong height accepted")
	}
	g := Attention{Q: lin(8, 8), K: lin(4, 8), V: lin(4, 8), O: lin(8, 8), Heads: 2, KVHeads: 1, HeadDim: 4, RoPE: &RoPE{Dim: 4}}
	if err := g.Check(); err != nil {
		t.Errorf("GQA attention: %v", err)
	}
}

// A block with zero attention and feed-forward output projections is the
// identity: x = x + 0; x = x + 0.
func TestBlockResidual(t *testing.T) {
	zero := func(out, in int) *Linear { return &Linear{W: tensor.New(out, in)} }
	b := Block{
		AttnNorm: &RMSNorm{Eps: 1e-6},
		Attn:     Attention{Q: zero(4, 4), K: zero(4, 4), V: zero(4, 4), O: zero(4, 4), Heads: 1, KVHeads: 1, HeadDim: 4},
		FFNNorm:  &RMSNorm{Eps: 1e-6},
		FFN:      &MLP{Up: zero(8, 4), Down: zero(4, 8)},
	}
	x := tensor.FromFloat32([]float32{1, 2, 3, 4, 5, 6, 7, 8}, 2, 4)
	y := b.Forward(x, NewKVCache(2, 4))
	for i, v := range y.Data() {
		if v != x.Data()[i] {
			t.Fatalf("y = %v, want x = %v", y.Data(), x.Data())
		}
	}
}
