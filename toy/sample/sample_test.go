package sample

import (
	"math"
	"slices"
	"testing"
)

func TestGreedyTiesGoToLowestID(t *testing.T) {
	if got := Greedy([]float32{1, 3, 3, 2}); got != 1 {
		t.Errorf("Greedy = %d, want 1", got)
	}
	if got := New(Params{}).Sample([]float32{0, 5, 5}, nil); got != 1 {
		t.Errorf("zero Params sampled %d, want greedy 1", got)
	}
}

func TestSameSeedSameTokens(t *testing.T) {
	logits := []float32{1, 1.2, 0.8, 1.1, 0.9}
	draw := func(seed uint64) []int32 {
		s := New(Params{Temperature: 1, Seed: seed})
		var out []int32
		for i := 0; i < 50; i++ {
			out = append(out, s.Sample(logits, nil))
		}
		return out
	}
	a, b, c := draw(7), draw(7), draw(8)
	same := func(x, y []int32) bool {
		for i := range x {
			if x[i] != y[i] {
				return false
			}
		}
		return true
	}
	if !same(a, b) {
		t.Error("seed 7 gave two different sequences")
	}
	if same(a, c) {
		t.Error("seeds 7 and 8 gave the same 50 tokens")
	}
}

// With temperature 1 the empirical frequencies follow softmax(logits):
// logits [0, ln 3] give probabilities 1/4 and 3/4.
func TestFrequenciesFollowSoftmax(t *testing.T) {
	s := New(Params{Temperature: 1, Seed: 1})
	n, ones := 20000, 0
	for i := 0; i < n; i++ {
		if s.Sample([]float32{0, float32(math.Log(3))}, nil) == 1 {
			ones++
		}
	}
	if f := float64(ones) / float64(n); math.Abs(f-0.75) > 0.015 {
		t.Errorf("P(1) = %.3f, want 0.75", f)
	}
}

func TestTruncations(t *testing.T) {
	logits := []float32{5, 4, 3, 2, 1}
	for name, p := range map[string]Params{
		"top-k 2":  {Temperature: 5, TopK: 2},
		"top-p":    {Temperature: 5, TopP: 0.5}, // p ∝ e^5, e^4, …: the top two hold ≥ 0.5 after the first
		"min-p .3": {Temperature: 5, MinP: 0.3}, // e^4/e^5 = 0.37 ≥ 0.3, e^3/e^5 = 0.14 < 0.3
	} {
		s := New(Params{Temperature: p.Temperature, TopK: p.TopK, TopP: p.TopP, MinP: p.MinP, Seed: 3})
		for i := 0; i < 500; i++ {
			if id := s.Sample(logits, nil); id > 1 {
				t.Fatalf("%s sampled %d, want 0 or 1", name, id)
			}
		}
	}
}

func TestRepeatPenalty(t *testing.T) {
	// Token 0 leads by 1; a penalty of 2 halves its logit (2 → 1) and makes
	// token 1 (1.5) the greedy choice. Negative logits are multiplied instead.
	s := New(Params{RepeatPenalty: 2})
	if got := s.Sample([]float32{2, 1.5, -1}, []int32{0}); got != 1 {
		t.Errorf("penalised greedy = %d, want 1", got)
	}
	neg := []float32{-1}
	if penalize(neg, []int32{0}, 2, 0); neg[0] != -2 {
		t.Errorf("penalised negative logit = %v, want -2", neg[0])
	}
}

// TestOpenAIPenalties follows OpenAI's formula by hand. Logits (3, 2.5, 0):
// greedy draws token 0 first. With frequency 0.4 and presence 0.2, after one
// draw of token 0 its logit is 3 − 0.4·1 − 0.2 = 2.4 < 2.5, so token 1 comes
// next; after that token 1 is at 2.5 − 0.6 = 1.9 and token 0 (2.4) wins; then
// token 0 drops to 3 − 0.8 − 0.2 = 2.0 > 1.9, and wins again. The prompt
// (history) does not count.
func TestOpenAIPenalties(t *testing.T) {
	s := New(Params{FrequencyPenalty: 0.4, PresencePenalty: 0.2})
	logits := []float32{3, 2.5, 0}
	var got []int32
	for range 4 {
		got = append(got, s.Sample(logits, []int32{0, 0, 0, 0}))
	}
	if want := []int32{0, 1, 0, 0}; !slices.Equal(got, want) {
		t.Errorf("penalised greedy draws %v, want %v", got, want)
	}
	if logits[0] != 3 || logits[1] != 2.5 {
		t.Errorf("Sample changed its input: %v", logits)
	}
}

// TestLogitBias: +1 on token 1 makes it the greedy choice (2.5 + 1 = 3.5 > 3);
// −100 bans token 0 even at a high temperature.
func TestLogitBias(t *testing.T) {
	if got := New(Params{LogitBias: map[int32]float32{1: 1}}).Sample([]float32{3, 2.5, 0}, nil); got != 1 {
		t.Errorf("biased greedy = %d, want 1", got)
	}
	s := New(Params{Temperature: 5, LogitBias: map[int32]float32{0: -100, 7: 5}, Seed: 1}) // 7: out of range, ignored
	for range 300 {
		if s.Sample([]float32{3, 2.5, 0}, nil) == 0 {
			t.Fatal("a banned token was drawn")
		}
	}
}

// evenOnly allows even ids and counts its masks.
type evenOnly struct{ masks, accepted int }

func (e *evenOnly) Mask(l []float32) {
	e.masks++
	for i := range l {
		if i%2 == 1 {
			l[i] = float32(math.Inf(-1))
		}
	}
}
func (e *evenOnly) Allows(id int32) bool { return id%2 == 0 }
func (e *evenOnly) Accept(int32)         { e.accepted++ }

// TestSampleConstrained: greedy takes the favourite without a mask when it
// is allowed and the best allowed one otherwise — the masked argmax either
// way; sampling draws only allowed tokens; nothing allowed gives −1.
func TestSampleConstrained(t *testing.T) {
	c := &evenOnly{}
	s := New(Params{})
	if id := s.SampleConstrained([]float32{0, 1, 5, 2}, nil, c); id != 2 || c.masks != 0 {
		t.Errorf("favourite 2 allowed: got %d with %d masks, want 2 and none", id, c.masks)
	}
	logits := []float32{0, 9, 5, 2}
	if id := s.SampleConstrained(logits, nil, c); id != 2 || c.masks != 1 || logits[1] != 9 {
		t.Errorf("favourite 1 refused: got %d with %d masks (logits %v), want 2, one mask, logits unchanged", id, c.masks, logits)
	}
	hot := New(Params{Temperature: 2, Seed: 3})
	for range 200 {
		if id := hot.SampleConstrained([]float32{3, 3, 1, 3, 0}, nil, c); id%2 == 1 {
			t.Fatalf("sampling drew the refused %d", id)
		}
	}
	if c.accepted != 202 {
		t.Errorf("%d tokens accepted, want 202", c.accepted)
	}
	if id := s.SampleConstrained([]float32{0, 1}, nil, only{}); id != -1 {
		t.Errorf("nothing allowed: %d, want -1", id)
	}
}

// only allows nothing.
type only struct{}

func (only) Mask(l []float32) {
	for i := range l {
		l[i] = float32(math.Inf(-1))
	}
}
func (only) Allows(int32) bool { return false }
func (only) Accept(int32)      {}

// With logits (0, ln 3) the probabilities are 1/4 and 3/4.
func TestLogSoftmaxByHand(t *testing.T) {
	lp := LogSoftmax([]float32{0, float32(math.Log(3))})
	if math.Abs(lp[0]-math.Log(0.25)) > 1e-7 || math.Abs(lp[1]-math.Log(0.75)) > 1e-7 {
		t.Errorf("LogSoftmax = %v, want [ln ¼, ln ¾]", lp)
	}
	if got := LogProb([]float32{1000, 1000}, 1); math.Abs(got-math.Log(0.5)) > 1e-12 {
		t.Errorf("LogProb of one of two equal large logits = %v, want ln ½", got)
	}
}
