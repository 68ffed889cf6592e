package toy_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/toyml/toy/toy"
)

// The log-probs Generate reports for its tokens are those LogProbs finds for
// the same tokens after the prompt, and a greedy token is the likeliest:
// its log-prob is the maximum of the row, so at least −ln V.
func TestGenerateLogProbsMatchLogProbs(t *testing.T) {
	m := toy.MustLoad(modelPath)
	defer m.Close()
	prompt := []int32{1, 17, 42}
	r, err := m.GenerateContext(t.Context(), prompt, toy.GenerateOptions{MaxTokens: 8, LogProbs: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.LogProbs) != len(r.IDs) {
		t.Fatalf("%d log-probs for %d tokens", len(r.LogProbs), len(r.IDs))
	}
	all, err := m.LogProbs(append(append([]int32{}, prompt...), r.IDs...))
	if err != nil {
		t.Fatal(err)
	}
	for i, lp := range r.LogProbs {
		want := all[len(prompt)-1+i]
		if math.Abs(float64(lp-want)) > 1e-5 {
			t.Errorf("token %d: Generate says %v, LogProbs %v", i, lp, want)
		}
		if lp > 0 || float64(lp) < -math.Log(float64(m.VocabSize())) {
			t.Errorf("greedy token %d has log-prob %v, outside [−ln V, 0]", i, lp)
		}
	}
	if r2, _ := m.GenerateContext(t.Context(), prompt, toy.GenerateOptions{MaxTokens: 2}); r2.LogProbs != nil {
		t.Error("log-probs reported without being asked for")
	}
	if _, err := m.LogProbs([]int32{1}); err == nil {
		t.Error("LogProbs of one token: no error")
	}
}

// Each token's log-probability after the ones before it; their mean gives
// the perplexity.
func ExampleModel_LogProbs() {
	m, err := toy.Load(modelPath)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer m.Close()
	lps, err := m.LogProbs([]int32{1, 17, 42, 7})
	if err != nil {
		fmt.Println(err)
		return
	}
	var sum float64
	for _, lp := range lps {
		sum += float64(lp)
	}
	ppl := math.Exp(-sum / float64(len(lps)))
	fmt.Printf("%d log-probs, perplexity above 1: %v\n", len(lps), ppl > 1)
	// Output: 3 log-probs, perplexity above 1: true
}
