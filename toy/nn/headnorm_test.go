package nn

import (
	"errors"
	"slices"
	"testing"

	"github.com/toyml/toy/toy/gguf"
	"github.com/toyml/toy/toy/tensor"
)

// Command R+'s per-head LayerNorm by hand, ε = 0, two heads of width 2 with
// weights [[2, 3], [4, 5]]:
//
//	token 0: head 0 [1, 3] → mean 2, variance 1 → [−1, 1] ⊙ [2, 3] = [−2, 3]
//	         head 1 [4, 8] → mean 6, variance 4 → [−1, 1] ⊙ [4, 5] = [−4, 5]
//	token 1: head 0 [2, 0] → [1, −1] ⊙ [2, 3] = [2, −3]
//	         head 1 [3, 5] → [−1, 1] ⊙ [4, 5] = [−4, 5]
func TestHeadLayerNormByHand(t *testing.T) {
	x := tensor.FromFloat32([]float32{1, 3, 4, 8, 2, 0, 3, 5}, 2, 4)
	n := &LayerNorm{W: tensor.FromFloat32([]float32{2, 3, 4, 5}, 2, 2)}
	got := headLayerNorm(x, n, 2).Float32s()
	if want := []float32{-2, 3, -4, 5, 2, -3, -4, 5}; !slices.Equal(got, want) {
		t.Errorf("per-head LayerNorm = %v, want %v", got, want)
	}
}

// Fields tagged ",ifset" load only when the model set them, so that the
// RMSNorm and the LayerNorm of the query heads can both name attn_q_norm.
func TestLoadIfSet(t *testing.T) {
	names := []string{"blk.0.attn_q.weight", "blk.0.attn_k.weight", "blk.0.attn_v.weight", "blk.0.attn_output.weight"}
	f := file(t, append(names, "blk.0.attn_q_norm.weight", "blk.0.attn_k_norm.weight")...)

	var none Attention
	if err := Load(f, "blk.0.", &none); err != nil {
		t.Fatal(err)
	}
	if none.Norms.Q != nil || none.Norms.K != nil {
		t.Error("query/key norms loaded into an attention that set none")
	}

	ln := Attention{Norms: HeadNorms{Q: &LayerNorm{Eps: 1e-5}, K: &LayerNorm{Eps: 1e-5}}}
	if err := Load(f, "blk.0.", &ln); err != nil {
		t.Fatal(err)
	}
	if q, k := ln.Norms.Q.(*LayerNorm), ln.Norms.K.(*LayerNorm); q.W == nil || k.W == nil || q.Eps != 1e-5 {
		t.Errorf("LayerNorms set: %+v, %+v", q, k)
	}
	if n := len(Collect("blk.0.", &ln)); n != 6 {
		t.Errorf("Collect lists %d tensors, want 6", n)
	}

	rms := Attention{Norms: HeadNorms{Q: &RMSNorm{Eps: 1e-6}, K: &RMSNorm{Eps: 1e-6}}}
	if err := Load(f, "blk.0.", &rms); err != nil {
		t.Fatal(err)
	}
	if rms.Norms.Q.(*RMSNorm).W == nil || rms.Norms.K.(*RMSNorm).W == nil {
		t.Error("RMSNorms set: not loaded")
	}

	// A norm the model set must find its tensor.
	err := Load(file(t, names...), "blk.0.", &Attention{Norms: HeadNorms{Q: &LayerNorm{}}})
	if !errors.Is(err, gguf.ErrNoTensor) {
		t.Errorf("set norm without its tensor: %v", err)
	}
}
