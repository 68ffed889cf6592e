package toy_test

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"testing"

	"github.com/toyml/toy/internal/testmodel"
	"github.com/toyml/toy/toy"
	"github.com/toyml/toy/toy/engine"
	"github.com/toyml/toy/toy/grammar"
	"github.com/toyml/toy/toy/sample"
)

// gateModel writes and loads one of internal/testmodel's gate models.
func gateModel(t *testing.T, name string) *toy.Model {
	t.Helper()
	for _, s := range testmodel.Specs() {
		if s.Name != name {
			continue
		}
		path := filepath.Join(t.TempDir(), s.File())
		if _, err := testmodel.Write(s, path); err != nil {
			t.Fatal(err)
		}
		m, err := toy.Load(path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { m.Close() })
		return m
	}
	t.Fatalf("no gate model %s", name)
	return nil
}

// TestSpeculativeSameTokens: with a draft — the same model in Q8_0 (which
// guesses well) or another model over the same vocabulary (which guesses
// badly) — generation gives the tokens it gives without one, greedy and
// sampled with a seed, with a grammar, a stop token, few positions left
// and any number of guesses a round; the Q8_0 draft's guesses are mostly
// kept, under the grammar too (the draft guesses under a fork of it).
func TestSpeculativeSameTokens(t *testing.T) {
	m := gateModel(t, "llama-f32")
	good, bad := gateModel(t, "llama-q8_0"), gateModel(t, "llama3-f32")
	prompt := []int32{1, 450, 4996, 17354, 1701, 432, 17204, 975, 278, 17366, 11203}
	jsonVocab := m.Tokenizer
	for _, c := range []struct {
		name string
		opts func() toy.GenerateOptions
	}{
		{"greedy", func() toy.GenerateOptions { return toy.GenerateOptions{MaxTokens: 40} }},
		{"sampled", func() toy.GenerateOptions {
			return toy.GenerateOptions{MaxTokens: 40, Sample: sample.Params{Temperature: 0.9, TopK: 40, TopP: 0.95, RepeatPenalty: 1.1, Seed: 7}}
		}},
		{"stop", func() toy.GenerateOptions {
			return toy.GenerateOptions{MaxTokens: 40, Stop: func(id int32) bool { return id%7 == 3 }}
		}},
		{"json", func() toy.GenerateOptions {
			return toy.GenerateOptions{MaxTokens: 30, Constraint: grammar.Tokens{State: grammar.NewJSON(), Vocab: jsonVocab}}
		}},
	} {
		want, err := m.GenerateContext(context.Background(), prompt, c.opts())
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range []struct {
			name  string
			draft *toy.Model
		}{{"q8_0", good}, {"other", bad}} {
			for _, k := range []int{1, 3, 8} {
				opts := c.opts()
				opts.Draft, opts.DraftTokens = d.draft, k
				got, err := m.GenerateContext(context.Background(), prompt, opts)
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(got.IDs, want.IDs) || got.Reason != want.Reason {
					t.Fatalf("%s, draft %s, %d a round: %v (%s), without a draft %v (%s)", c.name, d.name, k, got.IDs, got.Reason, want.IDs, want.Reason)
				}
				if got.Accepted > got.Drafted || d.name == "q8_0" && (c.name == "greedy" || c.name == "json") && k == 8 && got.Accepted*2 < got.Drafted {
					t.Errorf("%s, draft %s: %d of %d guesses kept", c.name, d.name, got.Accepted, got.Drafted)
				}
				t.Logf("%-7s draft %-5s k=%d: %d tokens, %2d of %2d guesses kept", c.name, d.name, k, len(got.IDs), got.Accepted, got.Drafted)
			}
		}
	}
}

// TestSpeculativeEdges: a session with room for only a few more positions
// ends as it does without a draft, and a draft of another vocabulary is
// refused.
func TestSpeculativeEdges(t *testing.T) {
	m, good := gateModel(t, "llama-f32"), gateModel(t, "llama-q8_0")
	prompt := []int32{1, 450, 4996}
	for _, n := range []int{1, 2, 5} {
		plain := m.NewSession(len(prompt) + n)
		want, err := toyGenerate(m, plain, prompt, n+10, nil)
		if err != nil {
			t.Fatal(err)
		}
		got, err := toyGenerate(m, m.NewSession(len(prompt)+n), prompt, n+10, good)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got.IDs, want.IDs) || got.Reason != want.Reason || want.Reason != "context" {
			t.Errorf("room for %d: %v (%s), without a draft %v (%s)", n, got.IDs, got.Reason, want.IDs, want.Reason)
		}
	}
	other := gateModel(t, "gpt2-f32")
	if _, err := m.GenerateContext(context.Background(), prompt, toy.GenerateOptions{MaxTokens: 4, Draft: other}); !errors.Is(err, toy.ErrDraftVocab) {
		t.Errorf("a GPT-2 draft for a Llama: %v, want ErrDraftVocab", err)
	}
}

// toyGenerate runs engine.Generate on session s, with a draft session of
// draft when it is not nil.
func toyGenerate(m *toy.Model, s *engine.Session, prompt []int32, n int, draft *toy.Model) (engine.Result, error) {
	opts := engine.Options{MaxTokens: n, DraftTokens: 4}
	if draft != nil {
		opts.Draft = draft.NewSession(s.Capacity())
	}
	return engine.Generate(context.Background(), s, prompt, opts)
}
