package engine

import (
	"context"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/toyml/toy/toy/nn"
	"github.com/toyml/toy/toy/tensor"
)

// counter is a fake model whose next token is always (last id + 1) mod V:
// the hidden state is the one-hot of the current id, the logits shift it.
type counter struct{ v, ctx int }

func (c counter) Hidden(ids []int32, cache *nn.Cache) *tensor.Tensor {
	h := tensor.New(len(ids), c.v)
	for t, id := range ids {
		h.Row(t)[id] = 1
	}
	cache.Layers[0].Len += len(ids)
	return h
}

func (c counter) Logits(h *tensor.Tensor) *tensor.Tensor {
	out := tensor.New(h.Rows(), c.v)
	for t := 0; t < h.Rows(); t++ {
		for i, x := range h.Row(t) {
			out.Row(t)[(i+1)%c.v] = x
		}
	}
	return out
}

func (c counter) NewCache(capacity int) *nn.Cache { return nn.NewCache(1, capacity, 1) }
func (c counter) VocabSize() int                  { return c.v }
func (c counter) ContextLength() int              { return c.ctx }

func TestGenerate(t *testing.T) {
	m := counter{v: 10, ctx: 100}
	r, err := Generate(context.Background(), NewSession(m, 100), []int32{3}, Options{MaxTokens: 5})
	if err != nil || !slices.Equal(r.IDs, []int32{4, 5, 6, 7, 8}) || r.Reason != "length" {
		t.Fatalf("ids %v reason %q err %v", r.IDs, r.Reason, err)
	}
	r, _ = Generate(context.Background(), NewSession(m, 100), []int32{3}, Options{MaxTokens: 5, Stop: func(id int32) bool { return id == 6 }})
	if !slices.Equal(r.IDs, []int32{4, 5, 6}) || r.Reason != "stop" {
		t.Fatalf("with stop: %v %q", r.IDs, r.Reason)
	}
	// A session of 4 positions holds the prompt and 3 fed-back tokens, so 4 come out.
	r, _ = Generate(context.Background(), NewSession(m, 4), []int32{3}, Options{MaxTokens: 10})
	if !slices.Equal(r.IDs, []int32{4, 5, 6, 7}) || r.Reason != "context" {
		t.Fatalf("full context: %v %q", r.IDs, r.Reason)
	}
	// Constraint: only even ids from 6 on picks the best of those (the
	// counter model prefers the next id, then the ones after it); one that
	// allows nothing stops.
	even := only(func(id int) bool { return id%2 == 0 && id >= 6 })
	r, _ = Generate(context.Background(), NewSession(m, 100), []int32{3}, Options{MaxTokens: 3, Constraint: even})
	for _, id := range r.IDs {
		if id%2 == 1 || id < 6 {
			t.Fatalf("constrained to even ids from 6: %v", r.IDs)
		}
	}
	none := only(func(int) bool { return false })
	if r, _ = Generate(context.Background(), NewSession(m, 100), []int32{3}, Options{MaxTokens: 3, Constraint: none}); len(r.IDs) != 0 || r.Reason != "stop" {
		t.Fatalf("nothing allowed: %v %q", r.IDs, r.Reason)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Generate(ctx, NewSession(m, 100), []int32{3}, Options{MaxTokens: 5}); !errors.Is(err, context.Canceled) {
		t.Fatalf("canceled: %v", err)
	}
}

func TestSessionRejectsBadInput(t *testing.T) {
	s := NewSession(counter{v: 10, ctx: 3}, 100)
	if s.Capacity() != 3 {
		t.Errorf("capacity %d, want the context length 3", s.Capacity())
	}
	for _, c := range []struct {
		ids  []int32
		want error
	}{{nil, ErrEmptyPrompt}, {[]int32{10}, ErrTokenRange}, {[]int32{-1}, ErrTokenRange}, {[]int32{1, 2, 3, 4}, ErrContextFull}} {
		if _, err := s.Next(c.ids); !errors.Is(err, c.want) {
			t.Errorf("Next(%v) = %v, want %v", c.ids, err, c.want)
		}
	}
}

// only is a sample.Constraint that allows the ids it returns true for.
type only func(id int) bool

func (o only) Mask(l []float32) {
	for i := range l {
		if !o(i) {
			l[i] = float32(math.Inf(-1))
		}
	}
}
func (o only) Allows(id int32) bool { return o(int(id)) }
func (o only) Accept(int32)         {}

// A model whose weights hold a NaN gives an error naming the weight, not NaN
// logits.
func TestNextRefusesNonFiniteLogits(t *testing.T) {
	m := newNaNModel()
	s := NewSession(m, 8)
	_, err := s.Next([]int32{1, 2})
	if !errors.Is(err, ErrNonFinite) || !strings.Contains(err.Error(), "weight blk.0.ffn_up.weight holds NaN") {
		t.Fatalf("got %v, want ErrNonFinite naming blk.0.ffn_up.weight", err)
	}
	if _, err := NewSession(m, 8).All([]int32{1}); !errors.Is(err, ErrNonFinite) {
		t.Errorf("All: %v", err)
	}
}

// nanModel's logits are its one weight's row: NaN.
type nanModel struct{ w *tensor.Tensor }

func newNaNModel() nanModel {
	return nanModel{tensor.FromFloat32([]float32{0, float32(math.NaN()), 0, 0}, 1, 4)}
}

func (m nanModel) Hidden(ids []int32, c *nn.Cache) *tensor.Tensor {
	return tensor.FromFloat32(make([]float32, len(ids)), len(ids), 1)
}
func (m nanModel) Logits(h *tensor.Tensor) *tensor.Tensor {
	out := make([]float32, 0, h.Rows()*4)
	for range h.Rows() {
		out = append(out, m.w.Data()...)
	}
	return tensor.FromFloat32(out, h.Rows(), 4)
}
func (nanModel) NewCache(n int) *nn.Cache { return nn.NewCache(1, n, 1) }
func (nanModel) VocabSize() int           { return 4 }
func (nanModel) ContextLength() int       { return 8 }
func (m nanModel) Weights() []nn.Named {
	return []nn.Named{{Name: "blk.0.attn_q.weight", T: tensor.FromFloat32([]float32{1}, 1, 1)}, {Name: "blk.0.ffn_up.weight", T: m.w}}
}
